import XCTest
import TapedeckCore
import TapedeckIO
import CJACK
@testable import TapedeckEngine
@testable import TapedeckTransport
@testable import TapedeckDevices

/// JACK's transport and Tapedeck's are one: another program's start, locate and stop move
/// Tapedeck; Tapedeck's play, locate and stop move every other program; as timebase master
/// Tapedeck publishes the session's bars and beats, and under another master its nodes keep
/// that one's tempo.
final class JACKTransportTests: XCTestCase {
    private func transport(in dir: String, tempo: TempoMap? = nil, timebase: Bool = false) throws -> Transport {
        var (session, folder) = try TransportFixture.session(in: dir, signals: [TransportFixture.noise(48000 * 30, amplitude: 0.1)])
        if let tempo {
            session.tempoBPM = tempo.tempoBPM
            session.timeSignature = tempo.timeSignature
            session.tempoChanges = tempo.tempoChanges
            session.meterChanges = tempo.meterChanges
            try folder.save(session)
        }
        let device = try JackTools.device(outputs: 2, timebase: timebase, tempo: session.tempoMap)
        return try Transport(session: session, folder: folder, device: device)
    }

    /// What `jack_showtime` printed over `seconds`, and each rolling line's frame and BBT
    /// (`frame = 123456  frame_time = … state: Rolling	BBT:   3|2|0480`).
    private func showtime(seconds: Double) -> (text: String, rolling: [(frame: Int64, bbt: String)]) {
        let shown = JackTools.run(["/usr/bin/timeout", "-s", "KILL", "\(seconds)", "/usr/bin/stdbuf", "-oL", "/usr/bin/jack_showtime"])
        let rolling = shown.split(separator: "\n").filter { $0.contains("Rolling") && $0.contains("BBT:") }.compactMap { line -> (Int64, String)? in
            guard let frame = Int64(line.split(separator: " ")[2]),
                  let bbt = line.components(separatedBy: "BBT:").last?.trimmingCharacters(in: .whitespaces).split(separator: "\t").first else { return nil }
            return (frame, String(bbt))
        }
        return (shown, rolling)
    }

    func testAnotherProgramsStartLocateAndStopMoveTapedeckAndAreNamed() throws {
        _ = try JackFixture.start(self)
        let dir = try TransportFixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let transport = try transport(in: dir)
        defer { transport.close() }
        var news: [String] = []
        func watch(_ condition: (TransportSnapshot) -> Bool) -> TransportSnapshot {
            TransportFixture.waitFor(transport) { snap in
                if let n = snap.notice { news.append(n) }
                return condition(snap)
            }
        }
        JackTools.transport("locate 96000", "play")
        var snap = watch { $0.state == .playing && $0.positionFrame > 96000 }
        XCTAssertEqual(snap.state, .playing, "JACK's start rolls Tapedeck")
        XCTAssertLessThan(snap.positionFrame, 96000 + 48000, "from where JACK was put")
        JackTools.transport("locate 480000")
        snap = watch { $0.positionFrame >= 480000 }
        XCTAssertGreaterThanOrEqual(snap.positionFrame, 480000, "a locate while rolling moves Tapedeck")
        XCTAssertLessThan(snap.positionFrame, 480000 + 48000)
        JackTools.transport("stop")
        snap = watch { $0.state == .stopped }
        XCTAssertEqual(snap.state, .stopped, "JACK's stop stops Tapedeck")
        let standing = snap.positionFrame
        usleep(300_000)
        XCTAssertEqual(transport.snapshot().positionFrame, standing, "and it stays there")
        XCTAssertTrue(news.contains { $0.contains("JACK transport: started by another program at 00:02.000 (2|1|0)") }, "\(news)")
        XCTAssertTrue(news.contains { $0.contains("JACK transport: moved to 00:10.000 (6|1|0) by another program") }, "\(news)")
        XCTAssertTrue(news.contains { $0.contains("JACK transport: stopped by another program") }, "\(news)")
        XCTAssertFalse(news.contains { $0.contains("started by another program at 00:10.000") }, "rolling on after a move is part of the move: \(news)")
    }

    func testTapedecksPlayLocateAndStopMoveJacksTransportForEveryProgram() throws {
        _ = try JackFixture.start(self)
        let dir = try TransportFixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let listener = try JackProbe(name: "listener", inputs: 1)
        let transport = try transport(in: dir)
        defer { transport.close() }
        usleep(200_000)
        transport.play(from: 48000)
        TransportFixture.waitFor(transport) { $0.positionFrame > 96000 }
        transport.locate(to: 240_000)
        TransportFixture.waitFor(transport) { $0.positionFrame > 260_000 }
        transport.stop()
        let stoppedAt = TransportFixture.waitFor(transport) { $0.state == .stopped }
        usleep(200_000)
        let frames = listener.heard().frames
        let rolling = frames.indices.filter { frames[$0] >= 0 }
        guard let first = rolling.first, let last = rolling.last else { return XCTFail("JACK's transport never rolled") }
        listener.assertFirstHeardRolling(at: first, from: 48000, "JACK rolls from where Tapedeck plays from")
        XCTAssertTrue(frames.contains(240_000), "Tapedeck's locate moves JACK's transport")
        XCTAssertFalse(frames.contains { $0 > 96000 + 48000 && $0 < 240_000 }, "straight from the old place to the new")
        XCTAssertEqual(frames.last, -1, "Tapedeck's stop stops JACK's transport")
        XCTAssertEqual(Double(frames[last]), Double(stoppedAt.positionFrame), accuracy: 1024, "both stop at the same place")
        XCTAssertNil(stoppedAt.notice?.range(of: "another program"), "Tapedeck's own requests are not news")
    }

    func testAsTimebaseMasterTapedeckPublishesTheSessionsBarsAndBeats() throws {
        _ = try JackFixture.start(self, synchronous: true)
        let dir = try TransportFixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let map = TempoMap(sampleRate: 48000, tempoBPM: 90, timeSignature: TimeSignature(beatsPerBar: 3, beatUnit: 4))
        let transport = try transport(in: dir, tempo: map, timebase: true)
        defer { transport.close() }
        transport.play(from: 100_000)
        TransportFixture.waitFor(transport) { $0.positionFrame > 110_000 }
        let (shown, rolling) = showtime(seconds: 0.8)
        for (frame, bbt) in rolling {
            let p = map.position(ofFrame: frame)
            XCTAssertEqual(bbt, String(format: "%d|%d|%04d", p.bar, p.beat, p.tick), "frame \(frame)")
        }
        XCTAssertGreaterThan(rolling.count, 20, "jack_showtime saw Tapedeck's bars and beats:\n\(shown.prefix(400))")

        // A tempo change in the session is published at once.
        var faster = transport.session
        faster.tempoBPM = 180
        transport.follow(session: faster)
        usleep(100_000)
        let again = JackTools.run(["/usr/bin/timeout", "-s", "KILL", "0.3", "/usr/bin/stdbuf", "-oL", "/usr/bin/jack_showtime"])
        let fast = TempoMap(sampleRate: 48000, tempoBPM: 180, timeSignature: map.timeSignature)
        guard let line = again.split(separator: "\n").last(where: { $0.contains("BBT:") }),
              let frame = Int64(line.split(separator: " ")[2]) else { return XCTFail("no BBT after the change:\n\(again)") }
        let p = fast.position(ofFrame: frame)
        XCTAssertTrue(line.hasSuffix(String(format: "%d|%d|%04d", p.bar, p.beat, p.tick)), "\(line)")
    }

    /// As timebase master over a tempo ramp (120 BPM gliding to 60 by bar 5): every bar,
    /// beat and tick JACK shows is the map's at that frame (within a tick), and so is the
    /// tempo published there.
    func testAsTimebaseMasterTapedeckPublishesTheMapAcrossARamp() throws {
        _ = try JackFixture.start(self, synchronous: true)
        let dir = try TransportFixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let map = TempoMap(sampleRate: 48000, tempoBPM: 120, timeSignature: TimeSignature(beatsPerBar: 4, beatUnit: 4),
                           tempoChanges: [TempoChange(bar: 5, bpm: 60, ramp: true)])
        let transport = try transport(in: dir, tempo: map, timebase: true)
        defer { transport.close() }
        transport.play(from: 150_000)
        TransportFixture.waitFor(transport) { $0.positionFrame > 160_000 }
        let (shown, rolling) = showtime(seconds: 0.8)
        var checked = 0
        for (frame, bbt) in rolling {
            let parts = bbt.split(separator: "|").compactMap { Int($0) }
            guard parts.count == 3 else { continue }
            XCTAssertLessThan(frame, Int64(map.exactFrame(bar: 5, beat: 1)), "inside the ramp")
            let p = map.position(ofFrame: frame)
            let shownTicks = ((parts[0] - 1) * 4 + parts[1] - 1) * 960 + parts[2]
            let mapTicks = ((p.bar - 1) * 4 + p.beat - 1) * 960 + p.tick
            XCTAssertEqual(shownTicks, mapTicks, accuracy: 1, "frame \(frame): JACK shows \(bbt), the map \(p)")
            checked += 1
        }
        XCTAssertGreaterThanOrEqual(checked, 10, "jack_showtime saw the ramp's bars and beats:\n\(shown.prefix(400))")
    }

    /// Under another program's timebase — a second Tapedeck client publishing 150 BPM —
    /// Tapedeck's click, a node reading the host's transport info, beats at 150, not at the
    /// session's 120.
    func testUnderAnotherTimebaseMasterNodesKeepItsTempo() throws {
        _ = try JackFixture.start(self, synchronous: true)
        let dir = try TransportFixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let fast = TempoMap(sampleRate: 48000, tempoBPM: 150, timeSignature: TimeSignature(beatsPerBar: 4, beatUnit: 4))
        // A bare timebase: no engine, so it takes no part in starting the transport.
        let master = try JackTools.device(outputs: 0, sync: false, timebase: true, tempo: fast, client: "master")
        defer { master.stop() }
        let listener = try JackProbe(name: "listener", inputs: 1)
        // Ten seconds of silence to play (the click alone is heard).
        var (session, folder) = try TransportFixture.session(in: dir, signals: [[Float](repeating: 0, count: 480_000)])
        session.tempoBPM = 120
        try folder.save(session)
        let transport = try Transport(session: session, folder: folder, device: try JackTools.device(outputs: 2))
        defer { transport.close() }
        listener.connect("tapedeck:out_L", "listener:in_1")
        transport.clickMode = .always
        transport.play(from: 0)
        TransportFixture.waitFor(transport) { $0.positionFrame > 48000 * 3 }
        transport.stop()
        let heard = listener.heard().samples
        var onsets: [Int] = []
        var i = 0
        while let o = JackTools.onset(heard, threshold: 0.02, from: i) {
            onsets.append(o)
            i = o + 4800
        }
        XCTAssertGreaterThan(onsets.count, 5, "clicks were heard")
        let gaps = zip(onsets.dropFirst(), onsets).map { $0 - $1 }
        for gap in gaps { XCTAssertEqual(Double(gap), 19200, accuracy: 2, "a beat at 150 BPM is 19200 frames: \(gaps)") }
    }

    /// Home then Space at once, as a person presses them: the play starts from "the
    /// playhead", which must already be where Home put it — JACK's transport moves a cycle
    /// or two after it is asked, and a play from the old place would undo the locate.
    func testALocateAndAPlayFromThePlayheadAtOncePlayFromWhereTheLocateWent() throws {
        _ = try JackFixture.start(self)
        let dir = try TransportFixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let transport = try transport(in: dir)
        defer { transport.close() }
        for round in 1...3 {
            transport.play(from: 0)
            TransportFixture.waitFor(transport) { $0.positionFrame > 48000 }
            transport.stop()
            let stopped = TransportFixture.waitFor(transport) { $0.state == .stopped }
            XCTAssertGreaterThan(stopped.positionFrame, 48000)
            transport.locate(to: 0)
            XCTAssertEqual(transport.snapshot().positionFrame, 0, "round \(round): the playhead is where the locate went")
            transport.play(from: transport.snapshot().positionFrame)
            let rolling = TransportFixture.waitFor(transport) { $0.state == .playing && $0.positionFrame > 0 }
            XCTAssertLessThan(rolling.positionFrame, 24000, "round \(round): played from 0, not from \(stopped.positionFrame)")
            transport.stop()
            TransportFixture.waitFor(transport) { $0.state == .stopped }
        }
    }
}

/// Bar, beat and tempo come from any program on the server: nonsense is ignored, never trapped on.
final class JACKMusicalTimeTests: XCTestCase {
    func testNonsenseFromAnotherTimebaseMasterIsIgnored() {
        func read(_ edit: (inout jack_position_t) -> Void) -> HostClockFrame {
            var pos = jack_position_t()
            pos.bar = 3
            pos.beat = 2
            pos.tick = 480
            pos.beats_per_bar = 4
            pos.beat_type = 4
            pos.ticks_per_beat = 960
            pos.beats_per_minute = 100
            edit(&pos)
            var host = HostClockFrame(state: .rolling, frame: 0)
            JACKCycle.readMusicalTime(pos, into: &host)
            return host
        }
        let good = read { _ in }
        XCTAssertTrue(good.hasMusicalTime)
        XCTAssertEqual(good.beatPosition, 9.5, "bar 3, beat 2, half a beat: 9.5 beats in")
        XCTAssertEqual(good.tempoBPM, 100)
        XCTAssertFalse(read { $0.bar = Int32.min }.hasMusicalTime)
        XCTAssertFalse(read { $0.beat = 0 }.hasMusicalTime)
        XCTAssertFalse(read { $0.tick = -1 }.hasMusicalTime)
        XCTAssertFalse(read { $0.beats_per_minute = .nan }.hasMusicalTime)
        XCTAssertFalse(read { $0.beats_per_minute = .infinity }.hasMusicalTime)
        XCTAssertFalse(read { $0.beats_per_bar = .nan }.hasMusicalTime)
        XCTAssertFalse(read { $0.beats_per_bar = 1e30 }.hasMusicalTime)
        XCTAssertFalse(read { $0.beat_type = 0 }.hasMusicalTime)
        XCTAssertFalse(read { $0.ticks_per_beat = 0 }.hasMusicalTime)
        XCTAssertTrue(read { $0.bar = Int32.max }.beatPosition.isFinite, "a huge bar is still a number")
    }
}
