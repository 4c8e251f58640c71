import Foundation

/// Test helpers for the take tests (as the engine tests' own).
enum Fixture {
    /// A fresh folder under the temporary directory; the test removes it.
    static func temporaryFolder() throws -> String {
        let path = NSTemporaryDirectory() + "td-takes-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }
}
