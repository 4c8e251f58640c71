import Foundation
import XCTest
import TapedeckIO
@testable import TapedeckEngine

/// Issue 39: the retroactive memory keeps its time through xruns. A device that loses
/// frames (an ALSA xrun, told through the period driver) costs the memory exactly those
/// frames, as silence at their place: the stretch to keep is not cut at the xrun, and every
/// other frame sits at the device time it was heard.
final class RetroXrunTests: XCTestCase {
    func testXrunsInsideTheWindowAreSilenceAtTheirPlaceAndTheMemoryKeepsItsWholeLength() throws {
        let dir = try Fixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // An xrun losing 1000 frames every 50 periods (12,800 frames): every second kept
        // holds three or four of them.
        let period = 256
        let device = XrunDevice(periodFrames: period, xrunCycles: Set(stride(from: 50, to: 100_000, by: 50)), lostFrames: 1000)
        var spec = try Fixture.spec(playing: nil, inputs: [1])
        spec.retroSeconds = 1
        let engine = Engine(device: device)
        try engine.prepare(spec, position: 0)
        // Rolling (the unpaced device runs only then): listening, as `record --retro --play`.
        engine.play()
        try engine.start()
        let buffer = try XCTUnwrap(engine.retroBuffer(track: 0))
        let deadline = Date().addingTimeInterval(120)
        while buffer.framesWritten < 120_000 && Date() < deadline { usleep(2000) }
        _ = engine.close()
        let xruns = engine.drainEvents().filter { $0.kind == .deviceXrun }
        XCTAssertGreaterThanOrEqual(xruns.count, 5, "the device lost frames again and again")

        // As keepRetro does: the stretch of the transport the newest frame was heard in.
        let firstDevice = try XCTUnwrap(buffer.firstDeviceFrame)
        let newest = firstDevice + buffer.framesWritten - 1
        let segment = try XCTUnwrap(engine.transportSegment(at: newest))
        XCTAssertLessThanOrEqual(segment.deviceFrame, firstDevice, "an xrun is no jump of the transport: the stretch goes on through it")
        let earliest = max(0, segment.deviceFrame - firstDevice)
        let path = dir + "/retro.wav"
        let (first, count) = try buffer.keep(to: path, format: AudioFileFormat(container: .wav, encoding: .float32, sampleRate: 48000,
                                                                              channelCount: 1), notBefore: earliest)
        XCTAssertEqual(count, 48_000, "the whole second, xruns and all")
        let kept = try Fixture.readMono(path)
        XCTAssertEqual(kept.count, count)

        // Frame k of the take was heard at device frame firstDevice + first + k: the device's
        // signal there, or silence where an xrun lost it.
        let takeStart = firstDevice + first
        // (An xrun's event carries the playhead, not the device frame: the spans come from
        // the device. Read c begins at c periods plus what the earlier xrun reads
        // lost beyond a period; reads 50, 100, … lost 1000 frames each.)
        let lostSpans = (1..<2000).map { k -> Range<Int64> in
            let at = Int64(50 * k * period + (k - 1) * (1000 - period))
            return at..<(at + 1000)
        }
        var misplaced: [Int] = []
        for (k, v) in kept.enumerated() {
            let device = takeStart + Int64(k)
            let want: Float = lostSpans.contains { $0.contains(device) } ? 0 : XrunDevice.signal(device)
            if v != want && misplaced.count < 20 { misplaced.append(k) }
        }
        XCTAssertEqual(misplaced, [], "every frame at the device time it was heard, silence where it was lost")
        // The memory says where it is silent: exactly the xruns' spans inside the take.
        let said = buffer.gaps(from: first, to: first + Int64(count)).map { ($0.frame + takeStart)..<($0.frame + takeStart + $0.count) }
        let expected = lostSpans.compactMap { span -> Range<Int64>? in
            let lo = max(span.lowerBound, takeStart), hi = min(span.upperBound, takeStart + Int64(count))
            return hi > lo ? lo..<hi : nil
        }
        XCTAssertEqual(said, expected, "the silences the memory reports are the frames the device lost")
        XCTAssertGreaterThanOrEqual(said.count, 3)
    }
}
