import Foundation
import XCTest
import TapedeckIO

/// A real small disk for the full-disk tests: a tmpfs mounted in the test's own folder
/// (root only: elsewhere the test is skipped, saying why) and unmounted when it ends.
enum SmallDisk {
    /// Mounts a `megabytes` tmpfs at `TEST-FOLDER/NAME` and returns its path.
    static func mount(_ test: XCTestCase, megabytes: Int, name: String = "small-disk") throws -> String {
        let point = try Tapedeck.temporaryFolder(test).path + "/" + name
        try FileManager.default.createDirectory(atPath: point, withIntermediateDirectories: true)
        guard getuid() == 0 else { throw XCTSkip("mounting a small tmpfs needs root") }
        let mounted = try Tapedeck.run(["-c", "mount -t tmpfs -o size=\(megabytes)m tmpfs '\(point)'"], executable: "/bin/sh")
        guard mounted.status == 0 else { throw XCTSkip("cannot mount a tmpfs here: \(mounted.stderr)") }
        test.addTeardownBlock { _ = try? Tapedeck.run(["-c", "umount -l '\(point)'"], executable: "/bin/sh") }
        return point
    }

    /// Bytes free on the disk at `point`.
    static func freeBytes(_ point: String) -> Int64 {
        var fs = statvfs()
        guard statvfs(point, &fs) == 0 else { return 0 }
        return Int64(fs.f_bavail) * Int64(fs.f_frsize)
    }

    /// Fills the disk at `point` (a file `name`) so that `bytes` of recording fit before a
    /// take writer stops: it keeps ``AudioFileWriter/finishingReserveBytes`` to finish its file.
    static func fill(_ point: String, leavingRecording bytes: Int64, name: String = "filler") {
        let filler = freeBytes(point) - AudioFileWriter.finishingReserveBytes - bytes
        XCTAssertGreaterThan(filler, 0, "the disk is smaller than the room asked for")
        FileManager.default.createFile(atPath: point + "/" + name, contents: Data(count: Int(max(filler, 0))))
    }
}
