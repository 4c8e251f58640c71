import XCTest
import TapedeckCore
import TapedeckIO
@testable import TapedeckEngine
@testable import TapedeckTransport
@testable import TapedeckDevices

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

    /// Tapedeck's thread stalls 40 ms in the cycle it tells JACK it will be at 0 in two (a
    /// busy machine): JACK hears it only after the stall, when the count-in has reached 0,
    /// so the engine waits there and JACK rolls late — the count-in bar is longer by what
    /// the stall cost, and the take is whole, at 0, on JACK's frames.
    func testAnXrunAsTheCountInTellsJackItIsReadyMakesTheBarLongerNotTheTakeShorter() throws {
        try countIn(jackBufferFrames: nil, stallAtFrame: -512)
    }

    /// The stall comes a cycle later, as JACK rolls from 0: JACK's transport rolls on
    /// through the frames the stall cost, unseen. That is an xrun at the take's start — the
    /// take still starts at 0 with those frames silent and the rest on JACK's frames — not
    /// another program moving the transport (which would end the take).
    func testAnXrunAsJacksTransportRollsFromZeroIsSilenceInTheTakeNotAMove() throws {
        try countIn(jackBufferFrames: nil, stallAtFrame: -256)
    }

    private func countIn(jackBufferFrames: Int?, stallAtFrame: Int64? = nil, file: StaticString = #filePath, line: UInt = #line) throws {
        _ = try JackFixture.start(self)
        let dir = try TransportFixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var (session, folder) = try TransportFixture.session(in: dir, signals: [])
        session.tracks.append(Track(name: "Vocal", inputChannels: [1], armed: true))
        try folder.save(session)
        let listener = try JackProbe(name: "listener", inputs: 1)
        // A sine by JACK's transport frame, recorded: its phase says which frame each sample of the take is.
        let source = try JackProbe(name: "source", outputs: 1, toneHz: 997, amplitude: 0.25, onset: 0)
        var options = TransportOptions()
        if let stallAtFrame {
            options.engine.stallAtFrame = stallAtFrame
            options.engine.stallMilliseconds = 40
        }
        let provider = JackProvider()
        let transport = try Transport(session: session, folder: folder, device: try provider.open(name: "jack", sampleRate: 48000),
                                      provider: provider, options: options)
        defer { transport.close() }
        listener.connect("tapedeck:out_L", "listener:in_1")
        source.connect("source:out_1", "tapedeck:Vocal_in")
        if let size = jackBufferFrames {
            JackTools.run(["/usr/bin/jack_bufsize", "\(size)"])
            TransportFixture.waitFor(transport) { _ in (transport.engine.hostCycleFrames == size) }
            XCTAssertEqual(transport.engine.hostCycleFrames, size, file: file, line: line)
        }
        let cycle = Int64(jackBufferFrames ?? 256)
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
        let xruns = transport.events.filter { $0.kind == EngineEvent.Kind.deviceXrun }
        let lost = xruns.reduce(Int64(0)) { $0 + $1.frames }
        let said = "xruns (frame, frames lost): \(xruns.map { ($0.frame, $0.frames) })"
        if stallAtFrame != nil { XCTAssertGreaterThan(lost, 0, "the stall cost frames: \(said)", file: file, line: line) }

        // The clicks, on JACK's clock: the count-in bar's four beats (JACK's transport
        // standing), then the take's bar from JACK's frame 0. A busy machine's xrun can lose a
        // click, or make a late cycle's click heard late: clicks beside a break in the
        // listener's own readings are not judged (see JackProbe.sure).
        let all = listener.heard()
        let clock = listener.clock()
        let sure = listener.sure(clockWhileStanding: true)
        let starts = onsets(all.samples)
        let heard = "clicks (clock, JACK's frame): \(starts.map { (clock[$0], all.frames[$0]) }); \(said)"
        guard let rolled = all.frames.firstIndex(where: { $0 >= 0 }) else {
            return XCTFail("JACK's transport never rolled: \(heard)", file: file, line: line)
        }
        // When JACK's frame 0 was, on its clock (known even if the downbeat's click was lost).
        let zero = clock[rolled] - all.frames[rolled]
        let standing = starts.filter { all.frames[$0] == -1 }
        XCTAssertGreaterThanOrEqual(standing.count, 3, "the count-in clicks with JACK's transport standing: \(heard)", file: file, line: line)
        XCTAssertEqual(starts.filter { all.frames[$0] > 0 && all.frames[$0] < 1000 }.filter { sure[$0] }, [],
                       "no click just after the downbeat: \(heard)", file: file, line: line)
        for s in starts where sure[s] {
            // A bar's first beat is the accented click, the others the plain one, whose onset
            // crosses the threshold a frame apart.
            if all.frames[s] >= 0 {
                let offset = all.frames[s] % 24000
                XCTAssertTrue(offset <= 2 || offset >= 23998, "a click at JACK's frame \(all.frames[s]) is on a beat at 120 BPM: \(heard)",
                              file: file, line: line)
            } else if let first = standing.first {
                let offset = ((clock[s] - clock[first]) % 24000 + 24000) % 24000
                XCTAssertTrue(offset <= 2 || offset >= 23998, "count-in clicks a beat apart on JACK's clock: \(heard)", file: file, line: line)
            }
        }
        if let first = standing.first, let last = standing.last {
            let bar = zero - clock[first]
            if lost == 0 {
                // Nothing lost: JACK rolls from 0 in the very cycle the count-in gets there.
                XCTAssertTrue(starts.contains { all.frames[$0] == 0 }, "a click at JACK's frame 0: \(heard)", file: file, line: line)
                XCTAssertLessThanOrEqual(bar, 96002, "one bar of count-in: \(heard)", file: file, line: line)
                if standing.count == 4 { XCTAssertEqual(bar, 96000, "bar to bar, to the frame: \(heard)", file: file, line: line) }
            } else {
                // JACK must hear two cycles ahead that the count-in will be at 0: frames lost
                // then can only make JACK roll later, and the count-in waits for it — by no more
                // than they cost and those two cycles. It never cuts the bar short.
                XCTAssertGreaterThanOrEqual(zero - clock[last], 24000 - 2, "the last beat is a whole beat: \(heard)", file: file, line: line)
                XCTAssertLessThanOrEqual(zero - clock[last], 24000 + lost + 2 * cycle + 2, "waited no longer than the xrun: \(heard)",
                                         file: file, line: line)
                XCTAssertLessThanOrEqual(bar, 96000 + lost + 2 * cycle + 2, heard, file: file, line: line)
            }
        }
        let moves = transport.events.filter { $0.kind == EngineEvent.Kind.hostLocated && $0.external }
        XCTAssertEqual(moves.count, 0, "nothing moved JACK's transport but Tapedeck: \(moves); \(said)", file: file, line: line)
        XCTAssertFalse(news.contains { $0.contains("another program") }, "\(news)", file: file, line: line)
        let takes = transport.collectFinishedTakes()
        XCTAssertEqual(takes.count, 1, file: file, line: line)
        guard let take = takes.first else { return }
        XCTAssertEqual(take.region.timelineStartFrame, 0, "the take starts at the record point", file: file, line: line)
        XCTAssertEqual(take.region.lengthFrames, 72000, "and is as long as asked", file: file, line: line)
        // Every sample of the take on its JACK frame, or silence where an xrun lost it.
        let recorded = try JackTools.firstChannel(folder.absolutePath(of: take.region.file))
        let judged = JackTools.judgeTone(recorded, hz: 997, amplitude: 0.25)
        XCTAssertLessThanOrEqual(Int64(judged.silent), lost, "silence only where frames were lost: \(judged.runs); \(said)",
                                 file: file, line: line)
        // Beside an xrun two cycles are uncertain by a period, for the source as for Tapedeck (see JACKClockGaps).
        XCTAssertLessThanOrEqual(judged.wrong, 2 * Int(cycle) * xruns.count, "samples off their frame: \(judged.runs); \(said)",
                                 file: file, line: line)
        // Lost input is marked only where the take lost it: an xrun in the count-in, or one
        // while the count-in waited at 0 for JACK, cost the take nothing and marks nothing in it.
        let marks = take.markers.filter { $0.kind == .lostInput }.map { $0.frame - take.region.timelineStartFrame }
        for m in marks {
            XCTAssertTrue(m >= 0 && m < Int64(recorded.count) && recorded[Int(m)] == 0,
                          "a lost-input marker at take frame \(m) is on silence the take lost: \(take.markers); \(judged.runs); \(said)",
                          file: file, line: line)
        }
        if judged.silent == 0 { XCTAssertEqual(marks, [], "a take that lost nothing marks nothing: \(said)", file: file, line: line) }
    }
}
