import Foundation
import XCTest

/// Runs the built `tapedeck` binary as a user does and collects what it printed; writes the
/// small files the routing tests feed it. Nothing here links the program's libraries: what
/// the tests learn about a session or an export they learn through `tapedeck` itself
/// (`info --json`, `bus list --json`), so they check what a script would see.
enum CLIRun {
    /// The package root (three levels above this file's folder).
    static let packageRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The debug binary `swift build` put next to the test bundle.
    static var binary: String {
        let bundleDir = Bundle.main.bundleURL.deletingLastPathComponent()
        let candidates = [
            bundleDir.appendingPathComponent("tapedeck").path,
            Bundle.main.bundleURL.appendingPathComponent("tapedeck").path,
            packageRoot.appendingPathComponent(".build/debug/tapedeck").path,
        ]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) } ?? candidates.last!
    }

    /// The ALSA config with the test devices (filetap needs no sound card).
    static var alsaEnvironment: [String: String] {
        ["TAPEDECK_ALSA_CONFIG": packageRoot.appendingPathComponent("Tests/Fixtures/alsa-test.conf").path]
    }

    /// What one run produced.
    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// Runs `tapedeck ARGS` to completion (at most `timeout` seconds).
    @discardableResult
    static func run(_ args: [String], environment: [String: String] = [:], timeout: TimeInterval = 120,
                    file: StaticString = #filePath, line: UInt = #line) throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = args
        var env = ProcessInfo.processInfo.environment
        for (k, v) in environment { env[k] = v }
        process.environment = env
        let outURL = FileManager.default.temporaryDirectory.appendingPathComponent("td-out-\(UUID().uuidString)")
        let errURL = FileManager.default.temporaryDirectory.appendingPathComponent("td-err-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
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
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("tapedeck-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        test.addTeardownBlock { try? FileManager.default.removeItem(at: url) }
        return url
    }

    /// Writes a mono 16-bit WAV at 48 kHz holding a sine of `hertz` at `amplitude` (0...1).
    static func writeSine(to path: String, hertz: Double = 440, amplitude: Double = 0.5, frames: Int = 48000) {
        let samples = (0..<frames).map { Int16((amplitude * 32767 * sin(2 * Double.pi * hertz * Double($0) / 48000)).rounded()) }
        var bytes: [UInt8] = []
        func u32(_ v: UInt32) { withUnsafeBytes(of: v.littleEndian) { bytes += $0 } }
        func u16(_ v: UInt16) { withUnsafeBytes(of: v.littleEndian) { bytes += $0 } }
        bytes += Array("RIFF".utf8); u32(UInt32(36 + frames * 2)); bytes += Array("WAVE".utf8)
        bytes += Array("fmt ".utf8); u32(16); u16(1); u16(1); u32(48000); u32(96000); u16(2); u16(16)
        bytes += Array("data".utf8); u32(UInt32(frames * 2))
        for s in samples { withUnsafeBytes(of: s.littleEndian) { bytes += $0 } }
        _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
    }

    /// Parses a JSON document `tapedeck … --json` printed.
    static func json(_ text: String, file: StaticString = #filePath, line: UInt = #line) throws -> [String: Any] {
        guard let object = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else {
            XCTFail("not a JSON object: \(text)", file: file, line: line)
            return [:]
        }
        return object
    }
}
