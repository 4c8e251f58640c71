import Foundation
import TapedeckIO
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// Leftovers named by a process id: the next run removes a dead process's, never a live one's.
final class LeftoversTests: XCTestCase {
    func testADeadProcessesLeftoverIsRemovedAndALiveOnesStays() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("tapedeck-leftovers-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(atPath: root) }
        // A child that has exited and been reaped: its pid names no process now.
        let child = fork()
        if child == 0 { _exit(0) }
        var status: Int32 = 0
        waitpid(child, &status, 0)
        XCTAssertFalse(Leftovers.isAlive(child))
        let live = getppid()
        for pid in [child, live] {
            try FileManager.default.createDirectory(atPath: root + "/.x.flac.normalize-\(pid)/stems", withIntermediateDirectories: true)
        }
        FileManager.default.createFile(atPath: root + "/.x.flac.normalize-notapid", contents: Data())
        Leftovers.removeDead(in: root, prefix: ".x.flac.normalize-")
        let left = try FileManager.default.contentsOfDirectory(atPath: root).sorted()
        XCTAssertEqual(left, [".x.flac.normalize-\(live)", ".x.flac.normalize-notapid"].sorted(), "only the dead process's folder went")
    }
}
