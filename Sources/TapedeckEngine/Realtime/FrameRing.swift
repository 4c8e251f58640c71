import Synchronization

/// A lock-free single-producer/single-consumer ring of multichannel float frames, allocated
/// once. One thread pushes (e.g. the audio thread), one thread pops (e.g. the disk thread).
///
/// The indices count frames since creation and only grow, so full and empty never look alike
/// and the fill is `written − read` without a spare slot.
public final class FrameRing: @unchecked Sendable {
    /// Channels per frame.
    public let channelCount: Int
    /// Frames the ring holds.
    public let capacityFrames: Int
    private let storage: UnsafeMutablePointer<Float>
    private let writeIndex = Atomic<Int64>(0)
    private let readIndex = Atomic<Int64>(0)

    /// Allocates room for `capacityFrames` frames of `channelCount` channels. Control thread.
    public init(channelCount: Int, capacityFrames: Int) {
        self.channelCount = max(channelCount, 1)
        self.capacityFrames = max(capacityFrames, 1)
        storage = .allocate(capacity: self.channelCount * self.capacityFrames)
        storage.initialize(repeating: 0, count: self.channelCount * self.capacityFrames)
    }

    deinit { storage.deallocate() }

    /// Frames waiting to be popped. Either thread.
    public var availableFrames: Int {
        Int(writeIndex.load(ordering: .acquiring) - readIndex.load(ordering: .acquiring))
    }

    /// Frames that can be pushed now. Either thread.
    public var freeFrames: Int { capacityFrames - availableFrames }

    /// Frames pushed since creation: the index the next pushed frame will have. Either thread
    /// (the producer publishes it with release ordering).
    public var writePosition: Int64 { writeIndex.load(ordering: .acquiring) }

    /// Frames popped or skipped since creation: the index of the next frame to pop. Either thread.
    public var readPosition: Int64 { readIndex.load(ordering: .acquiring) }

    /// Drops every frame before index `position` (at most up to what has been pushed).
    ///
    /// Audio thread (as consumer): no allocation, no locks.
    public func skip(toReadPosition position: Int64) {
        let r = readIndex.load(ordering: .relaxed)
        let w = writeIndex.load(ordering: .acquiring)
        let target = min(max(position, r), w)
        if target != r { readIndex.store(target, ordering: .releasing) }
    }

    /// Pushes `frameCount` frames, one source pointer per channel (nil pushes silence).
    /// Returns the frames pushed (fewer when the ring is full).
    ///
    /// Audio thread (as producer): no allocation, no locks.
    @discardableResult
    public func push(_ channels: UnsafePointer<UnsafeMutablePointer<Float>>?, frameCount: Int, sourceOffset: Int = 0) -> Int {
        let w = writeIndex.load(ordering: .relaxed)
        let r = readIndex.load(ordering: .acquiring)
        let n = min(frameCount, capacityFrames - Int(w - r))
        if n <= 0 { return 0 }
        var slot = Int(w % Int64(capacityFrames))
        let c = channelCount
        for i in 0..<n {
            let base = storage + slot * c
            if let channels {
                for ch in 0..<c { base[ch] = channels[ch][sourceOffset + i] }
            } else {
                for ch in 0..<c { base[ch] = 0 }
            }
            slot += 1
            if slot == capacityFrames { slot = 0 }
        }
        writeIndex.store(w + Int64(n), ordering: .releasing)
        return n
    }

    /// Pops up to `frameCount` frames into one buffer per channel (nil discards them).
    /// Returns the frames popped.
    ///
    /// Audio thread (as consumer): no allocation, no locks.
    @discardableResult
    public func pop(into channels: UnsafePointer<UnsafeMutablePointer<Float>>?, frameCount: Int, destinationOffset: Int = 0) -> Int {
        let r = readIndex.load(ordering: .relaxed)
        let w = writeIndex.load(ordering: .acquiring)
        let n = min(frameCount, Int(w - r))
        if n <= 0 { return 0 }
        if let channels {
            var slot = Int(r % Int64(capacityFrames))
            let c = channelCount
            for i in 0..<n {
                let base = storage + slot * c
                for ch in 0..<c { channels[ch][destinationOffset + i] = base[ch] }
                slot += 1
                if slot == capacityFrames { slot = 0 }
            }
        }
        readIndex.store(r + Int64(n), ordering: .releasing)
        return n
    }
}

/// A lock-free single-producer/single-consumer queue of small values (commands in, events
/// out), allocated once.
public final class SPSCQueue<Element: BitwiseCopyable>: @unchecked Sendable {
    private let storage: UnsafeMutablePointer<Element>
    private let capacity: Int
    private let writeIndex = Atomic<Int>(0)
    private let readIndex = Atomic<Int>(0)

    /// Allocates room for `capacity` elements. Control thread.
    public init(capacity: Int) {
        self.capacity = max(capacity, 1)
        storage = .allocate(capacity: self.capacity)
    }

    deinit { storage.deallocate() }

    /// Adds `value`; false when the queue is full (the value is dropped).
    ///
    /// Audio thread (as producer): no allocation, no locks.
    @discardableResult
    public func push(_ value: Element) -> Bool {
        let w = writeIndex.load(ordering: .relaxed)
        if w - readIndex.load(ordering: .acquiring) >= capacity { return false }
        (storage + w % capacity).initialize(to: value)
        writeIndex.store(w + 1, ordering: .releasing)
        return true
    }

    /// The oldest value without taking it, or nil when empty.
    ///
    /// Consumer thread: no allocation, no locks.
    public func peek() -> Element? {
        let r = readIndex.load(ordering: .relaxed)
        if r == writeIndex.load(ordering: .acquiring) { return nil }
        return storage[r % capacity]
    }

    /// Whether nothing is waiting. Either thread.
    public var isEmpty: Bool { readIndex.load(ordering: .acquiring) == writeIndex.load(ordering: .acquiring) }

    /// Takes the oldest value, or nil when empty.
    ///
    /// Audio thread (as consumer): no allocation, no locks.
    public func pop() -> Element? {
        let r = readIndex.load(ordering: .relaxed)
        if r == writeIndex.load(ordering: .acquiring) { return nil }
        let value = storage[r % capacity]
        readIndex.store(r + 1, ordering: .releasing)
        return value
    }
}
