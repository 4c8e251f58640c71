import Dispatch
import Foundation
import XCTest
@testable import TapedeckEngine

/// The mailbox the audio thread and the disk thread talk through must never make either wait.
final class MailboxTests: XCTestCase {
    /// A writer stopped part-way through a post (as a normal-priority disk thread preempted on
    /// a busy machine is) must not hold up the reader: it reads the last whole message at once.
    /// (The sequence lock this replaced spun here until the writer ran again.)
    func testReadReturnsTheLastWholeMessageWhileAPostIsHalfWritten() {
        let box = Int64Mailbox(count: 3)
        box.post { set in set(0, 1); set(1, 1); set(2, 1) }
        let halfway = DispatchSemaphore(value: 0)
        let resume = DispatchSemaphore(value: 0)
        let writer = Thread {
            box.post { set in
                set(0, 2)
                halfway.signal()
                resume.wait()
                set(1, 2); set(2, 2)
            }
        }
        writer.start()
        halfway.wait()
        let seen = Scratch(count: 3)
        let out = seen.pointer
        let reading = DispatchSemaphore(value: 0)
        let reader = Thread {
            _ = box.read(into: seen.pointer)
            reading.signal()
        }
        reader.start()
        let readInTime = reading.wait(timeout: .now() + 2) == .success
        resume.signal()
        if !readInTime { _ = reading.wait(timeout: .now() + 5) }
        XCTAssertTrue(readInTime, "the reader waited for a half-written post")
        XCTAssertEqual([out[0], out[1], out[2]], [1, 1, 1], "the reader saw part of a message")
        Thread.sleep(forTimeInterval: 0.05)
        XCTAssertTrue(box.read(into: out))
        XCTAssertEqual([out[0], out[1], out[2]], [2, 2, 2], "the finished post was not delivered")
        XCTAssertEqual(box.postCount, 2)
    }

    /// Under a writer posting as fast as it can, every read is one whole message, and messages
    /// never go back in time.
    func testEveryReadIsOneWholeMessageAndNeverOlderThanTheLast() {
        let box = Int64Mailbox(count: 6)
        let out = UnsafeMutablePointer<Int64>.allocate(capacity: 6)
        defer { out.deallocate() }
        XCTAssertFalse(box.read(into: out), "a read before any post must say nothing was posted")
        let posts: Int64 = 300_000
        let writer = Thread {
            for k in 1...posts { box.post { set in for i in 0..<6 { set(i, k &* Int64(i + 1)) } } }
        }
        writer.start()
        var last: Int64 = 0
        var torn = 0, backwards = 0, reads = 0
        let deadline = Date().addingTimeInterval(20)
        while last < posts && Date() < deadline {
            guard box.read(into: out) else { continue }
            reads += 1
            let k = out[0]
            for i in 1..<6 where out[i] != k &* Int64(i + 1) { torn += 1; break }
            if k < last { backwards += 1 }
            last = k
        }
        XCTAssertEqual(last, posts, "the last message was not delivered")
        XCTAssertEqual(torn, 0, "\(torn) of \(reads) reads mixed two messages")
        XCTAssertEqual(backwards, 0, "\(backwards) reads went back to an older message")
    }
}

/// Fields a test thread reads into, handed between threads by the test's own semaphores.
private final class Scratch: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<Int64>
    init(count: Int) { pointer = .allocate(capacity: count); pointer.initialize(repeating: 0, count: count) }
    deinit { pointer.deallocate() }
}
