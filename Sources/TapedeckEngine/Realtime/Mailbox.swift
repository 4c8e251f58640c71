import Synchronization

/// A few `Int64` fields handed from one writer thread to one reader thread as a consistent
/// set, without locks: a sequence lock. The writer never waits (it may be the audio thread);
/// the reader retries the rare read that overlapped a write.
///
/// Each field is its own atomic so an overlapping read is a retry, never undefined behaviour.
final class Int64Mailbox: @unchecked Sendable {
    private let version = Atomic<UInt64>(0)
    private let fields: UnsafeMutablePointer<Atomic<Int64>>
    /// Fields per message.
    let count: Int

    /// A mailbox of `count` fields, all 0, with nothing posted yet. Control thread.
    init(count: Int) {
        self.count = count
        fields = .allocate(capacity: count)
        for i in 0..<count { (fields + i).initialize(to: Atomic(0)) }
    }

    deinit {
        fields.deinitialize(count: count)
        fields.deallocate()
    }

    /// Posts a message: `write` stores each field through the setter it is given.
    ///
    /// Any one writer thread (the audio thread included): no allocation, no locks.
    @inline(__always)
    func post(_ write: (_ set: (Int, Int64) -> Void) -> Void) {
        let v = version.load(ordering: .relaxed)
        version.store(v &+ 1, ordering: .relaxed)
        atomicMemoryFence(ordering: .releasing)
        write { fields[$0].store($1, ordering: .relaxed) }
        version.store(v &+ 2, ordering: .releasing)
    }

    /// Reads the latest message into `out` (one slot per field); false when nothing has been
    /// posted yet. Retries while a post is under way.
    ///
    /// The one reader thread (the audio thread included): no allocation, no locks.
    @inline(__always)
    func read(into out: UnsafeMutablePointer<Int64>) -> Bool {
        while true {
            let before = version.load(ordering: .acquiring)
            if before == 0 { return false }
            if before & 1 == 1 { continue }
            for i in 0..<count { out[i] = fields[i].load(ordering: .relaxed) }
            atomicMemoryFence(ordering: .acquiring)
            if version.load(ordering: .relaxed) == before { return true }
        }
    }

    /// How many messages have been posted (the version halved). Any thread.
    var postCount: UInt64 { version.load(ordering: .acquiring) / 2 }
}
