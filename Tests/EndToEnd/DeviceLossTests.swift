import Foundation
import XCTest
import TapedeckIO

/// A device that dies mid-take (here: its JACK server killed) must end the take cleanly —
/// one line, non-zero exit, a valid file with what was recorded — not hang forever.
final class DeviceLossTests: XCTestCase {
    func testADeviceThatStopsRespondingEndsTheTakeCleanly() throws {
        let dir = try Tapedeck.temporaryFolder(self)
        RecordSupport.writeRaw(RecordSupport.signal(frames: 48_000 * 30, channels: 1, bits: 16), bits: 16, to: dir.path + "/in.raw")
        let jack = try JackServer.start(self, folder: dir.path)
        let take = dir.path + "/take.wav"
        let child = try SpawnedChild([Tapedeck.binary, "record", "--device", "jacktap:IN=\(dir.path)/in.raw", "--device-format", "s16",
                                      "--bits", "16", "--out", take],
                                     environment: jack.environment, stdoutPath: dir.path + "/out.txt")
        usleep(2_000_000)
        // SIGTERM: the server goes away as a crashed one would for its clients, but still
        // takes its entry out of JACK's shared registry (a SIGKILL would leave it behind).
        kill(jack.pid, SIGTERM)
        let status = child.wait(timeoutSeconds: 20)
        if status == nil { _ = child.kill(SIGKILL) }
        XCTAssertNotNil(status, "the take ends by itself once the device stops answering")
        XCTAssertNotEqual(status ?? 0, 0, "a lost device is a failure")
        let reader = try AudioFileReader(path: take)
        XCTAssertGreaterThan(reader.frameCount, 24_000, "what was recorded before the loss is kept")
        XCTAssertFalse(FileManager.default.fileExists(atPath: take + ".recording"), "the take was closed, not left for recovery")
    }
}
