import XCTest
import TapedeckCore
import TapedeckIO
@testable import TapedeckEngine
@testable import TapedeckTransport
@testable import TapedeckDevices

/// A count-in into a bar whose tempo and meter differ from the bars before it counts the
/// bar it leads into: into bar 3 at 140 BPM 7/8 (after two bars of 120 in 4/4), seven
/// eighths at 140, the first accented. Played on a playback-only `filetap` (an armed MIDI
/// track records: no capture stream shares the file).
final class CountInTempoTests: XCTestCase {
    func testACountInCountsTheBarItLeadsIntoAtThatBarsTempoAndMeter() throws {
        let dir = try TransportFixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var (session, folder) = try TransportFixture.session(in: dir, signals: [])
        session.tempoChanges = [TempoChange(bar: 3, bpm: 140)]
        session.meterChanges = [MeterChange(bar: 3, signature: TimeSignature(beatsPerBar: 7, beatUnit: 8))]
        session.tracks = [Track(name: "Keys", armed: true, playbackChain: "sampler", isMIDI: true)]
        try folder.save(session)
        let out = dir + "/out.raw"
        let device = try TransportFixture.device("filetap:OUT=\(out)", capture: 0, playback: 2, period: 128, periods: 4)
        let t = try Transport(session: session, folder: folder, device: device)
        defer { t.close() }
        t.countInBars = 1
        try t.record(RecordRequest(fromFrame: 192_000))
        _ = TransportFixture.waitFor(t, timeout: 30) { $0.positionFrame > 200_000 }
        t.stop()
        _ = TransportFixture.waitFor(t, timeout: 5) { $0.state == .stopped }
        _ = t.collectFinishedTakes()

        let left = try TransportFixture.stereo(out).left
        var onsets: [(frame: Int, peak: Float)] = []
        var lastSound = Int.min / 2
        for (i, x) in left.enumerated() where x != 0 {
            if i - lastSound > 2000 { onsets.append((i, left[i..<min(i + 600, left.count)].map(abs).max() ?? 0)) }
            lastSound = i
        }
        XCTAssertEqual(onsets.count, 7, "seven eighths of bar 3's meter, then the take (the click stops there): \(onsets.map(\.frame))")
        guard let first = onsets.first else { return }
        let loud = onsets.map(\.peak).max() ?? 0
        for (k, onset) in onsets.enumerated() {
            XCTAssertEqual(Double(onset.frame - first.frame), Double(k) * 48000 * 60 / 140, accuracy: 1, "count-in click \(k) at 140 BPM")
            XCTAssertEqual(onset.peak > loud * 0.75, k == 0, "count-in click \(k): the bar's first beat accented")
        }
    }
}
