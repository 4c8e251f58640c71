import XCTest
import TapedeckCore
import TapedeckIO
@testable import TapedeckEngine
@testable import TapedeckTransport

/// A count-in from the session's start on JACK: JACK's transport has no frame below 0, so
/// Tapedeck counts in on its own clock with JACK's transport waiting at 0, and JACK's
/// transport then rolls from 0 on the beat — the bar of count-in is exactly a bar long, the
/// take starts at 0 where JACK rolled from, and nothing is taken for another program's move.
final class JACKCountInTests: XCTestCase {
    /// Where a click starts in what the listener heard: a sample above `threshold` after at
    /// least 2000 quiet ones (a click lasts a few ms; beats are 24000 frames apart at 120 BPM).
    private func onsets(_ samples: [Float], threshold: Float = 0.02) -> [Int] {
        var found: [Int] = [], quiet = 2000
        for (i, s) in samples.enumerated() {
            if abs(s) > threshold {
                if quiet >= 2000 { found.append(i) }
                quiet = 0
            } else {
                quiet += 1
            }
        }
        return found
    }

    func testACountInFromZeroIsABarOnTapedecksClockAndJacksTransportRollsFromZeroOnTheBeat() throws {
        try countIn(jackBufferFrames: nil)
    }

    /// JACK's cycle four times Tapedeck's period (rendered as four blocks): the count-in is
    /// a whole number of JACK's cycles, so it still gets to 0 as JACK's transport rolls.
    func testACountInJoinsJacksTransportOnTheBeatAtAJackBufferOf1024() throws {
        try countIn(jackBufferFrames: 1024)
    }

    private func countIn(jackBufferFrames: Int?, file: StaticString = #filePath, line: UInt = #line) throws {
        _ = try JackFixture.start(self)
        let dir = try TransportFixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var (session, folder) = try TransportFixture.session(in: dir, signals: [])
        session.tracks.append(Track(name: "Vocal", inputChannels: [1], armed: true))
        try folder.save(session)
        let listener = try JackProbe(name: "listener", inputs: 1)
        let provider = JackProvider()
        let transport = try Transport(session: session, folder: folder, device: try provider.open(name: "jack", sampleRate: 48000),
                                      provider: provider)
        defer { transport.close() }
        listener.connect("tapedeck:out_L", "listener:in_1")
        if let size = jackBufferFrames {
            JackTools.run(["/usr/bin/jack_bufsize", "\(size)"])
            TransportFixture.waitFor(transport) { _ in (transport.engine.hostCycleFrames == size) }
            XCTAssertEqual(transport.engine.hostCycleFrames, size, file: file, line: line)
        }
        transport.countInBars = 1
        transport.clickMode = ClickMode.recording
        var news: [String] = []
        var request = RecordRequest(fromFrame: 0)
        request.maxFrames = 72000
        request.stopsWhenDone = true
        try transport.record(request)
        let started = TransportFixture.waitFor(transport, timeout: 10) { snap in
            news += [snap.notice].compactMap { $0 }
            return snap.positionFrame > 0 && snap.state != .stopped
        }
        XCTAssertGreaterThan(started.positionFrame, 0, "it rolled past the count-in", file: file, line: line)
        TransportFixture.waitFor(transport, timeout: 10) { snap in
            news += [snap.notice].compactMap { $0 }
            return snap.state == .stopped
        }
        // The clicks, on JACK's clock: the count-in bar's four beats (JACK's transport
        // standing), then the take's bar from JACK's frame 0. (An xrun on a busy machine can
        // lose a click: every click heard is still on the beat.)
        let all = listener.heard()
        let clock = listener.clock()
        let starts = onsets(all.samples)
        let standing = starts.filter { all.frames[$0] == -1 }
        guard let downbeat = starts.first(where: { all.frames[$0] == 0 }) else {
            return XCTFail("no click at JACK's frame 0: \(starts.map { (clock[$0], all.frames[$0]) })", file: file, line: line)
        }
        XCTAssertGreaterThanOrEqual(standing.count, 3, "the count-in clicks with JACK's transport standing", file: file, line: line)
        XCTAssertEqual(starts.filter { all.frames[$0] > 0 }.count + 1 + standing.count, starts.count, file: file, line: line)
        for s in starts {
            // A bar's first beat is the accented click, the others the plain one, whose onset
            // crosses the threshold a frame apart.
            let offset = ((clock[s] - clock[downbeat]) % 24000 + 24000) % 24000
            XCTAssertTrue(offset <= 2 || offset >= 23998,
                          "a click \(clock[s] - clock[downbeat]) frames from the downbeat is on a beat at 120 BPM", file: file, line: line)
        }
        if let first = standing.first {
            XCTAssertLessThanOrEqual(clock[downbeat] - clock[first], 96002, "one bar of count-in", file: file, line: line)
            if standing.count == 4 {
                XCTAssertEqual(clock[downbeat] - clock[first], 96000, "bar to bar, to the frame", file: file, line: line)
            }
        }
        let moves = transport.events.filter { $0.kind == EngineEvent.Kind.hostLocated && $0.external }
        XCTAssertEqual(moves.count, 0, "nothing moved JACK's transport but Tapedeck: \(moves)", file: file, line: line)
        XCTAssertFalse(news.contains { $0.contains("another program") }, "\(news)", file: file, line: line)
        let takes = transport.collectFinishedTakes()
        XCTAssertEqual(takes.count, 1, file: file, line: line)
        XCTAssertEqual(takes.first?.region.timelineStartFrame, 0, "the take starts at the record point", file: file, line: line)
        XCTAssertEqual(takes.first?.region.lengthFrames, 72000, "and is as long as asked", file: file, line: line)
    }
}
