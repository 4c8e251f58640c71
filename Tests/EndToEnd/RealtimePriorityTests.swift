import Foundation
import XCTest

/// Without the right to SCHED_FIFO the engine still runs, and says once what to change.
final class RealtimePriorityTests: XCTestCase {
    func testARefusedRealtimePriorityIsSaidOnceWithTheFix() throws {
        let dir = try Tapedeck.temporaryFolder(self)
        try Signals.write([Signals.sine(hertz: 440, amplitude: 0.3, frames: 24_000)], to: dir.path + "/a.wav")
        // Root may always take SCHED_FIFO; without CAP_SYS_NICE and with an rtprio limit of 0
        // it is refused, as it is for a user not in the audio group.
        let r = try Tapedeck.run(["--inh-caps=-sys_nice", "--bounding-set=-sys_nice", "prlimit", "--rtprio=0", Tapedeck.binary,
                                  "play", dir.path + "/a.wav", "--device", "filetap:OUT=/dev/null"],
                                 executable: "/usr/bin/setpriv", environment: RecordSupport.environment)
        XCTAssertEqual(r.status, 0, r.stderr)
        let said = r.stderr.components(separatedBy: "SCHED_FIFO was refused").count - 1
        XCTAssertEqual(said, 1, "said once: \(r.stderr)")
        XCTAssertTrue(r.stderr.contains("rtprio"), "with the fix: \(r.stderr)")
        // With the right, nothing is said.
        let fine = try Tapedeck.run(["play", dir.path + "/a.wav", "--device", "filetap:OUT=/dev/null"], environment: RecordSupport.environment)
        XCTAssertEqual(fine.status, 0, fine.stderr)
        XCTAssertFalse(fine.stderr.contains("SCHED_FIFO"), fine.stderr)
    }
}
