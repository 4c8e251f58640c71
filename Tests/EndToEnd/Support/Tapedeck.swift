import Foundation
import XCTest

/// Runs the built `tapedeck` binary and collects what it printed.
enum Tapedeck {
    /// The package root (two levels above this file's folder).
    static let packageRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The debug binary `swift build` put next to the test bundle.
    static var binary: String {
        // The test bundle lives in .build/<triple>/debug; the executable sits beside it.
        let bundleDir = Bundle.main.bundleURL.deletingLastPathComponent()
        let candidates = [
            bundleDir.appendingPathComponent("tapedeck").path,
            Bundle.main.bundleURL.appendingPathComponent("tapedeck").path,
            packageRoot.appendingPathComponent(".build/debug/tapedeck").path,
        ]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) } ?? candidates.last!
    }

    /// The ALSA config with the test devices (filetap, filetap48, jacktap).
    static var alsaTestConfig: String {
        packageRoot.appendingPathComponent("Tests/Fixtures/alsa-test.conf").path
    }

    /// What one run produced.
    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// Runs `tapedeck ARGS` (or `executable ARGS`, e.g. `/bin/sh -c 'ulimit …; exec tapedeck …'`)
    /// to completion, at most `timeout` seconds, and returns its output.
    @discardableResult
    static func run(_ args: [String], executable: String? = nil, environment: [String: String] = [:],
                    currentDirectory: String? = nil,
                    timeout: TimeInterval = 120, file: StaticString = #filePath, line: UInt = #line) throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable ?? binary)
        process.arguments = args
        if let currentDirectory { process.currentDirectoryURL = URL(fileURLWithPath: currentDirectory) }
        var env = ProcessInfo.processInfo.environment
        for (k, v) in environment { env[k] = v }
        process.environment = env
        let outURL = FileManager.default.temporaryDirectory.appendingPathComponent("td-out-\(UUID().uuidString)")
        let errURL = FileManager.default.temporaryDirectory.appendingPathComponent("td-err-\(UUID().uuidString)")
        FileManager.default.createFile(atPath: outURL.path, contents: nil)
        FileManager.default.createFile(atPath: errURL.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: outURL); try? FileManager.default.removeItem(at: errURL) }
        process.standardOutput = try FileHandle(forWritingTo: outURL)
        process.standardError = try FileHandle(forWritingTo: errURL)
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
            XCTFail("tapedeck \(args.joined(separator: " ")) timed out after \(timeout) s", file: file, line: line)
        }
        process.waitUntilExit()
        let out = (try? String(contentsOf: outURL, encoding: .utf8)) ?? ""
        let err = (try? String(contentsOf: errURL, encoding: .utf8)) ?? ""
        return Result(status: process.terminationStatus, stdout: out, stderr: err)
    }

    /// A fresh temporary folder, removed when the test ends.
    static func temporaryFolder(_ test: XCTestCase) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("tapedeck-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        test.addTeardownBlock { try? FileManager.default.removeItem(at: url) }
        return url
    }
}
