import Foundation
import XCTest
import TapedeckIO

/// A disk that stops answering for three seconds while a paced device records: the audio
/// thread never waits for it, so the device sees no xrun; the capture ring holds the take
/// meanwhile, or, when it is too small, the lost frames are counted, reported and silence in
/// a take that keeps its length.
final class DiskStallTests: XCTestCase {
    private func record(_ test: XCTestCase, captureRingSeconds: Double?) throws
        -> (status: Int32, stderr: String, done: [String: Any], take: [Int32], input: [Int32]) {
        let dir = try Tapedeck.temporaryFolder(test)
        let frames = 5 * 48_000
        let input = RecordSupport.signal(frames: frames + 96_000, channels: 1, bits: 16, seed: 5)
        RecordSupport.writeRaw(input, bits: 16, to: dir.path + "/in.raw")
        let jack = try JackServer.start(test, folder: dir.path)
        var env = jack.environment
        env["TAPEDECK_TEST_WRITER_STALL"] = "48000:3000"
        if let captureRingSeconds { env["TAPEDECK_TEST_CAPTURE_RING"] = "\(captureRingSeconds)" }
        let take = dir.path + "/take.wav"
        let r = try Tapedeck.run(["record", "--device", "jacktap:IN=\(dir.path)/in.raw", "--device-format", "s16", "--bits", "16",
                                  "--duration", "\(frames)f", "--out", take, "--json"], environment: env, timeout: 60)
        let done = RecordSupport.jsonLines(r.stdout).last { $0["event"] as? String == "done" } ?? [:]
        return (r.status, r.stderr, done, try RecordSupport.readInts(take, bits: 16).values, input)
    }

    func testAThreeSecondDiskStallLosesNothingAndCausesNoXrun() throws {
        let r = try record(self, captureRingSeconds: nil)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(r.done["xruns"] as? Int, 0, "the audio thread never waited for the disk")
        XCTAssertEqual(r.done["dropped_frames"] as? Int, 0, "the four-second capture ring held three seconds")
        XCTAssertEqual(r.take.count, 5 * 48_000)
        // The take is the input, whole: found within one device buffer of its start.
        let offset = try XCTUnwrap((0...768).first { Array(r.input[$0..<($0 + 64)]) == Array(r.take[0..<64]) })
        XCTAssertTrue(r.take == Array(r.input[offset..<(offset + r.take.count)]), "complete and in order")
    }

    func testARingTooSmallForTheStallCountsAndReportsTheLostFramesAndKeepsTheTakesLength() throws {
        let r = try record(self, captureRingSeconds: 1)
        XCTAssertNotEqual(r.status, 0, "lost input is a failure the exit status says")
        XCTAssertEqual(r.done["xruns"] as? Int, 0, "still no device xrun: the audio thread dropped, it did not wait")
        let dropped = try XCTUnwrap(r.done["dropped_frames"] as? Int)
        // Three seconds stalled, one held: about two lost (less what the ring drained at the edges).
        XCTAssertGreaterThan(dropped, 48_000)
        XCTAssertLessThan(dropped, 3 * 48_000)
        XCTAssertTrue(r.stderr.contains("input frames were lost"), r.stderr)
        XCTAssertEqual(r.take.count, 5 * 48_000, "the lost span is silence: the take keeps its length and alignment")
        let silent = r.take.filter { $0 == 0 }.count
        XCTAssertGreaterThanOrEqual(silent, dropped - 100, "the lost frames are silence in the take")
        // Everything after the gap is still the input at its own place.
        let offset = try XCTUnwrap((0...768).first { Array(r.input[$0..<($0 + 64)]) == Array(r.take[0..<64]) })
        let tail = r.take.count - 48_000
        XCTAssertTrue(Array(r.take[tail...]) == Array(r.input[(offset + tail)..<(offset + r.take.count)]), "aligned after the gap")
    }
}
