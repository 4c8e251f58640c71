import Foundation
import XCTest
@testable import TapedeckRemote

/// The control protocol and its server, in process: what a client sends, what it gets back.
final class ControlServerTests: XCTestCase {
    override func setUp() {
        let run = NSTemporaryDirectory() + "td-remote-\(UUID().uuidString)"
        try? FileManager.default.createDirectory(atPath: run, withIntermediateDirectories: true)
        setenv("XDG_RUNTIME_DIR", run, 1)
        addTeardownBlock {
            try? FileManager.default.removeItem(atPath: run)
            unsetenv("XDG_RUNTIME_DIR")
        }
    }

    func testEveryCommandReadsBackAsItsOwnLine() {
        let all: [RemoteCommand] = [.play, .stop, .record, .recordOn, .recordOff, .rewind, .bars(-1), .bars(3), .status, .locate("4.1.1"),
                                    .loop(true), .loop(false), .loopToggle, .speed(0.75)]
        for c in all { XCTAssertEqual(try RemoteCommand.parse(c.line).get(), c, c.line) }
        XCTAssertEqual(try RemoteCommand.parse("  PLAY ").get(), .play, "words are read in any case, spaces around")
        XCTAssertEqual(try RemoteCommand.parse("speed 3/4").get(), .speed(0.75))
        XCTAssertEqual(try RemoteCommand.parse("speed 150%").get(), .speed(1.5))
        for (line, why) in [("", "an empty command"), ("speed 0", "speed 0 would never finish"), ("speed -1", "negative"),
                            ("speed 64", "above the fastest"), ("loop", "loop takes on, off or toggle"), ("locate", "locate needs one time"),
                            ("locate 1 2", "locate needs one time"), ("play now", "'play' takes nothing after it"),
                            ("recrod", "did you mean 'record'?"), ("\u{1B}[2J", "unknown command '\\u001B[2J'"),
                            ("Song.tapedeck status", "unknown command 'Song.tapedeck'")] {
            guard case .failure(let e) = RemoteCommand.parse(line) else { XCTFail("'\(line)' was accepted"); continue }
            XCTAssertTrue(e.description.contains(why), "'\(line)': \(e.description)")
        }
    }

    /// Sends `bytes` on a fresh connection, lets `server` serve, returns what came back.
    private func exchange(_ server: ControlServer, _ bytes: [UInt8], handle: (RemoteCommand) -> RemoteReply = { _ in .ok("") }) -> String {
        let fd = connectTo(server.path)
        defer { close(fd) }
        _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        var reply: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        for _ in 0..<200 {
            server.service { command, _ in handle(command) }
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if n > 0 { reply += buffer[0..<n] } else if n == 0 { break } else { usleep(2000) }
            if reply.filter({ $0 == 10 }).count >= bytes.filter({ $0 == 10 }).count && !reply.isEmpty { break }
        }
        return String(decoding: reply, as: UTF8.self)
    }

    private func connectTo(_ path: String) -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        let ok = UnixSocketAddress.with(path) { connect(fd, $0, $1) }
        XCTAssertEqual(ok, 0, "connect \(path)")
        return fd
    }

    func testLinesAreAnsweredInOrderAndNonsenseIsRefusedNotTrappedOn() throws {
        let server = try ControlServer()
        defer { server.close() }
        var heard: [RemoteCommand] = []
        let replies = exchange(server, Array("play\r\nlocate 4.1.1\nbogus\nstatus\n".utf8)) { command in
            heard.append(command)
            return command == .status ? .json("{\"state\":\"playing\"}") : .ok("done")
        }
        XCTAssertEqual(heard, [.play, .locate("4.1.1"), .status])
        XCTAssertEqual(replies.split(separator: "\n").map(String.init),
                       ["ok: done", "ok: done", "error: unknown command 'bogus'; known: play, stop, record [on|off|toggle], rewind, back [N], forward [N], locate TIME, loop on|off|toggle, speed R, save, status",
                        "{\"state\":\"playing\"}"])
        XCTAssertEqual(exchange(server, [0xFF, 0xFE, 10]), "error: the line is not UTF-8 text\n")
        let long = exchange(server, [UInt8](repeating: UInt8(ascii: "a"), count: 70_000))
        XCTAssertEqual(long, "error: a line longer than 65536 bytes\n", "and the connection is dropped")
        XCTAssertTrue(server.pollDescriptors.count >= 1)
    }

    func testTheSocketLivesInAFolderOnlyItsUserEntersAndGoesWithTheServer() throws {
        let server = try ControlServer()
        var st = stat()
        XCTAssertEqual(lstat(ControlFolder.path, &st), 0)
        XCTAssertEqual(st.st_mode & 0o777, 0o700)
        XCTAssertEqual(lstat(server.path, &st), 0)
        XCTAssertEqual(st.st_mode & 0o777, 0o600)
        XCTAssertEqual(st.st_mode & S_IFMT, S_IFSOCK)
        XCTAssertEqual(ControlFolder.running(), [getpid()])
        server.close()
        XCTAssertNotEqual(lstat(server.path, &st), 0, "removed")
        XCTAssertEqual(ControlFolder.running(), [])

        // A folder of ours opened to others is closed again before use.
        chmod(ControlFolder.path, 0o777)
        let again = try ControlServer()
        XCTAssertEqual(lstat(ControlFolder.path, &st), 0)
        XCTAssertEqual(st.st_mode & 0o777, 0o700)
        again.close()
        // A link in its place is never followed: the server listens in a folder of its own
        // beside it, of a name nobody can predict, and clients find it there.
        let target = NSTemporaryDirectory() + "tapedeck-link-target-\(getpid())"
        mkdir(target, 0o755)
        defer { rmdir(target) }
        try FileManager.default.removeItem(atPath: ControlFolder.path)
        symlink(target, ControlFolder.path)
        defer { unlink(ControlFolder.path) }
        let moved = try ControlServer()
        defer { moved.close() }
        let folder = (moved.path as NSString).deletingLastPathComponent
        XCTAssertTrue(folder.hasPrefix(ControlFolder.path + "-") && folder.count == ControlFolder.path.count + 7, folder)
        XCTAssertNil(ControlFolder.distrust(folder), "its own, 0700")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: target), [], "nothing was made through the link")
        XCTAssertEqual(ControlFolder.running(), [getpid()])
        XCTAssertEqual(ControlFolder.trustedSocket(pid: getpid()), moved.path)
        XCTAssertEqual(ControlFolder.folders().refused.map(\.folder), [ControlFolder.path])
        moved.close()
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// A server notes the session it has open beside its socket, for every other Tapedeck's
    /// write guard (WriteGuard.openSessions); the note goes with the server.
    func testTheOpenSessionIsNotedBesideTheSocketAndGoesWithIt() throws {
        XCTAssertEqual(ControlFolder.openSessions(), [])
        let server = try ControlServer(session: "/music/song.tapedeck")
        XCTAssertEqual(ControlFolder.openSessions(), ["/music/song.tapedeck"])
        var st = stat()
        XCTAssertEqual(lstat((server.path as NSString).deletingLastPathComponent + "/\(getpid()).session", &st), 0)
        XCTAssertEqual(st.st_mode & 0o777, 0o600)
        server.close()
        XCTAssertEqual(ControlFolder.openSessions(), [])
    }
}
