import Foundation
import XCTest
@testable import TapedeckRemote

/// The control socket served from a thread of its own: commands are still carried out on
/// the owner's thread, in order, and clients that flood it never make the owner wait.
final class ControlServerThreadTests: XCTestCase {
    override func setUp() {
        let run = NSTemporaryDirectory() + "td-remote-thread-\(UUID().uuidString)"
        try? FileManager.default.createDirectory(atPath: run, withIntermediateDirectories: true)
        setenv("XDG_RUNTIME_DIR", run, 1)
        addTeardownBlock {
            try? FileManager.default.removeItem(atPath: run)
            unsetenv("XDG_RUNTIME_DIR")
        }
    }

    private func connectTo(_ path: String) -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        let ok = UnixSocketAddress.with(path) { connect(fd, $0, $1) }
        XCTAssertEqual(ok, 0, "connect \(path)")
        return fd
    }

    /// What came back on `fd` so far (without waiting).
    private func received(_ fd: Int32) -> [UInt8] {
        var got: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            guard n > 0 else { return got }
            got += buffer[0..<n]
        }
    }

    func testCommandsAreCarriedOutOnTheOwnersThreadAndAnsweredInOrder() throws {
        let server = try ControlServerThread()
        defer { server.close() }
        let fd = connectTo(server.path)
        defer { close(fd) }
        let lines = Array("status\nbogus\nlocate 4.1.1\nstop\nplay\n".utf8)
        _ = lines.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        let owner = pthread_self()
        var handled: [RemoteCommand] = []
        var reply: [UInt8] = []
        for _ in 0..<100 where reply.filter({ $0 == 10 }).count < 5 {
            server.wait(milliseconds: 20) { command, _ in
                XCTAssertTrue(pthread_equal(pthread_self(), owner) != 0, "carried out on the owner's thread")
                handled.append(command)
                return .ok(command.line)
            }
            reply += received(fd)
        }
        XCTAssertEqual(handled, [.status, .locate("4.1.1"), .stop, .play])
        let said = String(decoding: reply, as: UTF8.self).split(separator: "\n").map(String.init)
        XCTAssertEqual(said.count, 5, "\(said)")
        guard said.count == 5 else { return }
        XCTAssertEqual(said[0], "ok: status")
        XCTAssertTrue(said[1].hasPrefix("error: "), "the nonsense is answered in its turn: \(said[1])")
        XCTAssertEqual(Array(said[2...]), ["ok: locate 4.1.1", "ok: stop", "ok: play"])
    }

    func testClientsThatFloodAndNeverReadNeverMakeTheOwnerWait() throws {
        let server = try ControlServerThread()
        defer { server.close() }
        // Sixteen clients send as many lines as the socket takes and never read a reply.
        let flood = Array(String(repeating: "status\n", count: 2000).utf8)
        let flooders = (0..<16).map { _ in connectTo(server.path) }
        defer { flooders.forEach { close($0) } }
        for fd in flooders {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = flood.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL)) }
        }
        let good = connectTo(server.path)
        defer { close(good) }
        var slowest = 0.0
        var mostPerPass = 0
        var answered = 0
        var goodReply: [UInt8] = []
        var goodAsked: Date?
        var goodTook: Double?
        for pass in 0..<40 {
            if pass == 10 {
                _ = Array("status\n".utf8).withUnsafeBytes { send(good, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                goodAsked = Date()
            }
            let started = Date()
            var thisPass = 0
            server.wait(milliseconds: 50) { _, _ in
                thisPass += 1
                return .ok(String(repeating: "x", count: 200))  // replies the flooders never take
            }
            slowest = max(slowest, Date().timeIntervalSince(started))
            mostPerPass = max(mostPerPass, thisPass)
            answered += thisPass
            for fd in flooders {
                _ = flood.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL)) }
            }
            goodReply += received(good)
            if let goodAsked, goodTook == nil, goodReply.contains(10) { goodTook = Date().timeIntervalSince(goodAsked) }
        }
        XCTAssertGreaterThan(answered, 100, "the flood was being answered")
        XCTAssertLessThanOrEqual(mostPerPass, 64, "a pass answers a bounded number of requests")
        // A pass waits 50 ms and answers a few ms of requests; ten times that on a busy machine.
        XCTAssertLessThan(slowest, 0.5, "a 50 ms pause never grows much under the flood")
        let took = try XCTUnwrap(goodTook, "the good client was answered under the flood")
        XCTAssertLessThan(took, 1.0, "the good client was answered within a second (\(took) s)")
    }
}
