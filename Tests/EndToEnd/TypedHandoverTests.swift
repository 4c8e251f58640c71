import Foundation
import XCTest
import TapedeckCore
import TapedeckIO
import TapedeckRemote
#if canImport(Glibc)
import Glibc
#endif

/// A command-line edit handed to the session's owner travels typed (issue 42, item 1): the
/// asker parses it and sends its name and value as JSON (`cmd {…}`), never its words. The
/// owner is played here by the test itself — holding the session's lock as the screen does,
/// listening on its control socket — so the bytes it receives are what is checked.
final class TypedHandoverTests: XCTestCase {
    /// What the fake owner heard: each request line, and the body of each `cmd-file` it named.
    private final class Heard: @unchecked Sendable {
        private let lock = NSLock()
        private var items: [String] = []
        func add(_ line: String) { lock.lock(); items.append(line); lock.unlock() }
        var lines: [String] { lock.lock(); defer { lock.unlock() }; return items }
    }

    func testAnEditTravelsAsATypedCommandWithAbsolutePaths() throws {
        let dir = try Tapedeck.temporaryFolder(self)
        let run = dir.path + "/run"
        let control = run + "/tapedeck"
        try FileManager.default.createDirectory(atPath: control, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let env = ["XDG_RUNTIME_DIR": run]
        let session = dir.path + "/s.tapedeck"
        XCTAssertEqual(try Tapedeck.run(["new", session]).status, 0)
        let before = try Data(contentsOf: URL(fileURLWithPath: session + "/session.json"))

        let listener = try listeningSocket(at: control + "/\(getpid()).sock")
        defer { close(listener) }
        let lock = try SessionLock.acquire(SessionFolder(path: session))
        defer { withExtendedLifetime(lock) {} }
        let heard = Heard()
        let owner = Thread { [control] in
            while true {
                var asked = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
                guard poll(&asked, 1, 120_000) > 0 else { return }
                let fd = accept(listener, nil, nil)
                guard fd >= 0 else { return }
                var line: [UInt8] = []
                var buffer = [UInt8](repeating: 0, count: 65536)
                while !line.contains(UInt8(ascii: "\n")) {
                    let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                    if n <= 0 { break }
                    line += buffer[0..<n]
                }
                let text = String(decoding: line.prefix { $0 != UInt8(ascii: "\n") }, as: UTF8.self)
                heard.add(text)
                // A long one is in a file of the asker's, removed once answered: read it now.
                if text.hasPrefix("cmd-file "), let body = try? String(contentsOfFile: control + "/" + text.dropFirst(9), encoding: .utf8) {
                    heard.add("file: " + body)
                }
                let reply = Array("{\"status\":0,\"out\":\"taken\\n\",\"err\":\"\"}\n".utf8)
                _ = reply.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                close(fd)
            }
        }
        owner.start()

        // Typed in the test's folder with a relative session path: the owner (elsewhere) gets it absolute.
        let edit = try Tapedeck.run(["marker", "s.tapedeck", "add", "1:00", "Chorus", "two"], environment: env, currentDirectory: dir.path,
                                    timeout: 300)
        XCTAssertEqual(edit.status, 0, edit.stderr)
        XCTAssertEqual(edit.stdout, "taken\n", "the owner's answer is what the asker prints")
        let first = try XCTUnwrap(heard.lines.first, "the owner was asked")
        XCTAssertTrue(first.hasPrefix("cmd {"), first)
        guard case .success(.typed(let typed)) = RemoteCommand.parse(first) else { return XCTFail("not a typed command: \(first)") }
        XCTAssertEqual(typed.name, "marker")
        XCTAssertEqual(typed.label, "marker add 1:00 Chorus two")
        XCTAssertEqual(SessionOwner.canonicalPath(typed.workingFolder), SessionOwner.canonicalPath(dir.path))
        let value = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(typed.value.utf8)) as? [String: Any], typed.value)
        XCTAssertEqual(value["folder"] as? String, session, "the session, absolute, as the parsed value holds it")
        let add = (value["edit"] as? [String: Any])?["add"] as? [String: Any]
        XCTAssertEqual(add?["time"] as? String, "1:00", typed.value)
        XCTAssertEqual(add?["name"] as? String, "Chorus two", "the name's words joined by the asker's parse: \(typed.value)")
        XCTAssertNil(value["args"], "no words travel")

        // A usage mistake is the asker's own: said at once, the owner never asked.
        let wrong = try Tapedeck.run(["marker", session, "add"], environment: env, timeout: 60)
        XCTAssertEqual(wrong.status, 64, wrong.stderr)
        XCTAssertTrue(wrong.stderr.hasPrefix("tapedeck: ") && wrong.stderr.split(separator: "\n").count == 1, wrong.stderr)
        XCTAssertEqual(heard.lines.count, 1, "the owner heard nothing of a command line that does not parse")

        // Too long for a line: the typed command goes in a file, still typed.
        let long = String(repeating: "x", count: 70_000)
        let big = try Tapedeck.run(["marker", session, "add", "2:00", long], environment: env, timeout: 300)
        XCTAssertEqual(big.status, 0, big.stderr)
        let lines = heard.lines
        XCTAssertEqual(lines.count, 3, "\(lines.map { $0.prefix(80) })")
        XCTAssertTrue(lines.count == 3 && lines[1].hasPrefix("cmd-file \(getpid()).cmd-"), "\(lines.map { $0.prefix(80) })")
        if lines.count == 3 {
            XCTAssertTrue(lines[2].hasPrefix("file: {\"command\":\"marker\""), String(lines[2].prefix(80)))
            guard case .success(let typed) = TypedCommand.parse(String(lines[2].dropFirst(6))) else { return XCTFail("not typed") }
            XCTAssertTrue(typed.value.contains(long), "the long name is in the value")
        }
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: session + "/session.json")), before, "only the owner edits the session")
    }
}
