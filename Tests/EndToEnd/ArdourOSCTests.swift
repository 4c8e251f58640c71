import Foundation
import XCTest
import TapedeckCore
import TapedeckIO
#if canImport(Glibc)
import Glibc
#endif

/// What an OSC layout made for Ardour (TouchOSC, Open Stage Control) sends, replayed on the
/// real screen with liblo's `oscsend`, and every feedback message it gets checked through
/// `oscdump` (address, type tags, value), against what Ardour's own surface code sends.
final class ArdourOSCTests: XCTestCase {
    private var folder = ""
    private var session = ""

    override func setUpWithError() throws {
        guard access("/usr/bin/oscsend", X_OK) == 0, access("/usr/bin/oscdump", X_OK) == 0 else {
            throw XCTSkip("liblo-tools (oscsend, oscdump) is not installed: make test-deps")
        }
        (folder, session) = try ScreenTmux.demoFolder(self)
    }

    /// One message as `oscdump` printed it: `/strip/mute if 2 1.000000`.
    struct Dumped: Equatable, CustomStringConvertible {
        let path: String
        let types: String
        let values: [String]
        var description: String { "\(path) \(types) \(values.joined(separator: " "))" }
    }

    /// `oscdump` on a port of its own; what it was sent so far, in order.
    final class Surface {
        let port = ScreenOSCTests.freePort()
        let file: String
        private let process = Process()

        init(folder: String) throws {
            file = folder + "/oscdump-\(port).txt"
            FileManager.default.createFile(atPath: file, contents: nil)
            process.executableURL = URL(fileURLWithPath: "/usr/bin/oscdump")
            process.arguments = ["-L", "\(port)"]
            process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: file))
            process.standardError = FileHandle.nullDevice
            try process.run()
            usleep(300_000) // oscdump binds its port
        }

        deinit {
            process.terminate()
            process.waitUntilExit()
        }

        var messages: [Dumped] {
            ((try? String(contentsOfFile: file, encoding: .utf8)) ?? "").split(separator: "\n").compactMap { line in
                let f = line.split(separator: " ", omittingEmptySubsequences: false).map(String.init)
                guard f.count >= 2 else { return nil }
                // A string argument is printed in quotes and may hold spaces: joined back.
                let rest = f.count > 3 ? Array(f[3...]) : []
                var values: [String] = []
                var open: String?
                for word in rest {
                    if let o = open {
                        open = o + " " + word
                        if word.hasSuffix("\"") { values.append(open!); open = nil }
                    } else if word.hasPrefix("\"") && !(word.count > 1 && word.hasSuffix("\"")) {
                        open = word
                    } else {
                        values.append(word)
                    }
                }
                return Dumped(path: f[1], types: f.count > 2 ? f[2] : "", values: values)
            }
        }

        /// The last message sent to `path`, or nil.
        func last(_ path: String) -> Dumped? { messages.last { $0.path == path } }

        /// The last message sent to `path` whose first value is `id` (a strip's).
        func last(_ path: String, id: Int) -> Dumped? { messages.last { $0.path == path && $0.values.first == "\(id)" } }
    }

    func oscsend(_ port: Int, _ path: String, _ types: String = "", _ args: String..., file: StaticString = #filePath, line: UInt = #line) {
        let result = try? Tapedeck.run(["127.0.0.1", "\(port)", path] + (types.isEmpty ? [] : [types] + args), executable: "/usr/bin/oscsend")
        XCTAssertEqual(result?.status, 0, "oscsend \(path): \(result?.stderr ?? "did not run")", file: file, line: line)
    }

    /// Polls `condition` every 50 ms for at most `timeout` seconds; fails when it never holds.
    @discardableResult
    func wait(_ what: String, timeout: Double = 20, file: StaticString = #filePath, line: UInt = #line, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if condition() { return true }
            usleep(50_000)
        }
        XCTFail("timed out waiting for \(what)", file: file, line: line)
        return false
    }

    /// The playhead the surface was last sent (`/position/samples`).
    func position(_ s: Surface) -> Int? {
        s.last("/position/samples").flatMap { Int($0.values.first?.trimmingCharacters(in: CharacterSet(charactersIn: "\"")) ?? "") }
    }

    /// A screen on the offline device with OSC on, and a surface registered with `feedback`.
    func open(feedback: Int, bankSize: Int = 0, faderMode: Int = 2) throws -> (ScreenTmux, Surface, Int) {
        let port = ScreenOSCTests.freePort()
        let screen = try ScreenTmux(self, folder: folder, args: [session, "--device", "offline", "--osc", "\(port)"])
        screen.waitFor("STOPPED")
        let surface = try Surface(folder: folder)
        oscsend(port, "/set_surface", "iiiiiii", "\(bankSize)", "0", "\(feedback)", "\(faderMode)", "0", "0", "\(surface.port)")
        return (screen, surface, port)
    }

    private func loopOn(_ s: Surface) -> Bool? { s.last("/loop_toggle")?.values.first.flatMap(Double.init).map { $0 == 1 } }

    func testButtonsActOnThePressAndNotOnTheRelease() throws {
        for (t, name) in [("0:01", "A"), ("0:02", "B"), ("0:03", "C"), ("0:04", "D")] {
            XCTAssertEqual(try Tapedeck.run(["marker", session, "add", t, name]).status, 0)
        }
        XCTAssertEqual(try Tapedeck.run(["loop", session, "0:01-0:03", "--off"]).status, 0)
        // Buttons and the playhead in samples (1 + 16 + 1024).
        let (screen, surface, port) = try open(feedback: 1 + 16 + 1024)
        wait("the playhead at 0") { position(surface) == 0 }
        let rate = try SessionFolder(path: session).load().sampleRate

        // Two presses of next marker, each with its release: two markers on, not four.
        for _ in 0..<2 {
            oscsend(port, "/next_marker", "f", "1.0")
            oscsend(port, "/next_marker", "f", "0.0")
        }
        // Other floats than 1.0 are not presses either.
        oscsend(port, "/next_marker", "f", "0.5")
        oscsend(port, "/next_marker", "i", "0")
        wait("the playhead on marker B") { position(surface) == 2 * rate }
        usleep(500_000)
        XCTAssertEqual(position(surface), 2 * rate, "a release moved the playhead on")

        // The loop button: on with its press, and still on after its release.
        oscsend(port, "/loop_toggle", "f", "1.0")
        oscsend(port, "/loop_toggle", "f", "0.0")
        wait("the loop on") { loopOn(surface) == true }
        usleep(500_000)
        XCTAssertEqual(loopOn(surface), true, "the release turned the loop off again")
        XCTAssertTrue(screen.capture().contains("LOOP on"), screen.capture())

        // /add_marker as a button sends it: a marker at the playhead.
        oscsend(port, "/add_marker", "f", "1.0")
        oscsend(port, "/add_marker", "f", "0.0")
        let shown = screen.waitFor("the marker added") { $0.contains("marker M") || $0.contains("M1") }
        XCTAssertFalse(shown.contains("refused") || shown.contains("must be a string"), shown)
        XCTAssertTrue(screen.isRunning)
    }
}
