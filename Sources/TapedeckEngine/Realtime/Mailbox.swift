import Synchronization

/// A few `Int64` fields handed from one writer thread to one reader thread as a consistent
/// set: a triple buffer. Both sides are wait-free — each call is a fixed number of steps
/// whatever the other thread is doing.
///
/// (It was a sequence lock, whose reader retried while a post was under way: on two cores a
/// normal-priority disk thread preempted part-way through a post left the SCHED_FIFO audio
/// thread spinning without bound. Here a post never becomes visible half-written, so there is
/// nothing to retry.)
///
/// Three slots of `count` fields: the writer owns one (it fills it), the reader owns one (it
/// copies from it), and the third is the latest finished message. A post swaps the writer's
/// slot with the latest, marking it fresh; a read that finds it fresh swaps it with the
/// reader's slot. The swap is one atomic exchange, so ownership never overlaps.
final class Int64Mailbox: @unchecked Sendable {
    /// The latest slot's index (bits 0–1) and whether it is newer than the reader's (bit 2).
    private let latest = Atomic<Int>(0)
    private let posts = Atomic<UInt64>(0)
    private let slots: UnsafeMutablePointer<Int64>
    /// Writer-only: the slot it fills next.
    private var writeSlot = 1
    /// Reader-only: the slot it last took, and whether it has ever taken one.
    private var readSlot = 2
    private var hasRead = false
    private static let fresh = 4
    /// Fields per message.
    let count: Int

    /// A mailbox of `count` fields, all 0, with nothing posted yet. Control thread.
    init(count: Int) {
        self.count = count
        slots = .allocate(capacity: 3 * max(count, 1))
        slots.initialize(repeating: 0, count: 3 * max(count, 1))
    }

    deinit { slots.deallocate() }

    /// Posts a message: `write` stores each field through the setter it is given (fields it
    /// does not set keep the value of this slot's last message, so set them all).
    ///
    /// The one writer thread (the audio thread included): no allocation, no locks, wait-free.
    @inline(__always)
    func post(_ write: (_ set: (Int, Int64) -> Void) -> Void) {
        let base = slots + writeSlot * count
        let n = count
        write { i, value in if i >= 0 && i < n { base[i] = value } }
        let previous = latest.exchange(writeSlot | Self.fresh, ordering: .acquiringAndReleasing)
        writeSlot = previous & 3
        posts.add(1, ordering: .releasing)
    }

    /// Reads the latest message into `out` (one slot per field); false when nothing has been
    /// posted yet.
    ///
    /// The one reader thread (the audio thread included): no allocation, no locks, wait-free.
    @inline(__always)
    func read(into out: UnsafeMutablePointer<Int64>) -> Bool {
        if latest.load(ordering: .relaxed) & Self.fresh != 0 {
            let previous = latest.exchange(readSlot, ordering: .acquiringAndReleasing)
            readSlot = previous & 3
            hasRead = true
        }
        guard hasRead else { return false }
        out.update(from: slots + readSlot * count, count: count)
        return true
    }

    /// How many messages have been posted. Any thread.
    var postCount: UInt64 { posts.load(ordering: .acquiring) }
}
