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

    /// Where the next pop begins in the storage, and how many bytes `frameCount` frames from
    /// there take (up to the storage's end): what the next block will read, for a prefetch.
    ///
    /// Audio thread (as consumer): loads.
    @inline(__always)
    func nextRead(frameCount: Int) -> (address: UnsafeRawPointer, bytes: Int) {
        let slot = Int(readIndex.load(ordering: .relaxed) % Int64(capacityFrames))
        let frames = min(frameCount, capacityFrames - slot)
        return (UnsafeRawPointer(storage + slot * channelCount), frames * channelCount * MemoryLayout<Float>.stride)
    }

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
        var done = 0
        while done < n {
            // Up to the end of the storage, then from its start.
            let span = min(n - done, capacityFrames - slot)
            FrameRing.interleave(channels, sourceOffset: sourceOffset + done, into: storage + slot * channelCount,
                                 channelCount: channelCount, frameCount: span)
            done += span
            slot = 0
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
        if let channels {
            var sink = ChannelSink(channels: channels, channelCount: channelCount)
            return pop(into: &sink, frameCount: frameCount, destinationOffset: destinationOffset)
        }
        let r = readIndex.load(ordering: .relaxed)
        let n = min(frameCount, Int(writeIndex.load(ordering: .acquiring) - r))
        if n <= 0 { return 0 }
        readIndex.store(r + Int64(n), ordering: .releasing)
        return n
    }

    /// Pops up to `frameCount` frames and hands them to `sink` where they lie in the ring
    /// (interleaved, at most two spans: up to the end of the storage, then from its start),
    /// for `sink` offsets from `destinationOffset` on. Returns the frames popped.
    ///
    /// Audio thread (as consumer): no allocation, no locks.
    @inline(__always) @discardableResult
    func pop<Sink: FrameSink>(into sink: inout Sink, frameCount: Int, destinationOffset: Int = 0) -> Int {
        let r = readIndex.load(ordering: .relaxed)
        let w = writeIndex.load(ordering: .acquiring)
        let n = min(frameCount, Int(w - r))
        if n <= 0 { return 0 }
        var slot = Int(r % Int64(capacityFrames))
        var done = 0
        while done < n {
            let span = min(n - done, capacityFrames - slot)
            sink.frames(UnsafePointer(storage + slot * channelCount), at: destinationOffset + done, count: span)
            done += span
            slot = 0
        }
        readIndex.store(r + Int64(n), ordering: .releasing)
        return n
    }

    /// Copies `frameCount` frames from one buffer per channel (nil: silence) into interleaved
    /// storage. Mono is a plain copy, stereo eight frames a step.
    ///
    /// Audio and disk threads: no allocation, no locks.
    @inline(__always)
    static func interleave(_ channels: UnsafePointer<UnsafeMutablePointer<Float>>?, sourceOffset: Int,
                           into destination: UnsafeMutablePointer<Float>, channelCount c: Int, frameCount n: Int) {
        guard let channels else {
            destination.update(repeating: 0, count: n * c)
            return
        }
        if c == 1 {
            destination.update(from: channels[0] + sourceOffset, count: n)
            return
        }
        if c == 2 {
            let left = UnsafeRawPointer(channels[0] + sourceOffset), right = UnsafeRawPointer(channels[1] + sourceOffset)
            let out = UnsafeMutableRawPointer(destination)
            var i = 0
            while i + 8 <= n {
                let l = left.loadUnaligned(fromByteOffset: i * 4, as: SIMD8<Float>.self)
                let r = right.loadUnaligned(fromByteOffset: i * 4, as: SIMD8<Float>.self)
                var both = SIMD16<Float>()
                both.evenHalf = l
                both.oddHalf = r
                out.storeBytes(of: both, toByteOffset: i * 8, as: SIMD16<Float>.self)
                i += 8
            }
            while i < n {
                destination[2 * i] = channels[0][sourceOffset + i]
                destination[2 * i + 1] = channels[1][sourceOffset + i]
                i += 1
            }
            return
        }
        for i in 0..<n {
            for ch in 0..<c { destination[i * c + ch] = channels[ch][sourceOffset + i] }
        }
    }

    /// Copies `frameCount` interleaved frames out to one buffer per channel.
    ///
    /// Audio thread: no allocation, no locks.
    @inline(__always)
    static func deinterleave(_ source: UnsafePointer<Float>, channelCount c: Int, into channels: UnsafePointer<UnsafeMutablePointer<Float>>,
                             destinationOffset: Int, frameCount n: Int) {
        if c == 1 {
            (channels[0] + destinationOffset).update(from: source, count: n)
            return
        }
        if c == 2 {
            let left = UnsafeMutableRawPointer(channels[0] + destinationOffset)
            let right = UnsafeMutableRawPointer(channels[1] + destinationOffset)
            let raw = UnsafeRawPointer(source)
            var i = 0
            while i + 8 <= n {
                let both = raw.loadUnaligned(fromByteOffset: i * 8, as: SIMD16<Float>.self)
                left.storeBytes(of: both.evenHalf, toByteOffset: i * 4, as: SIMD8<Float>.self)
                right.storeBytes(of: both.oddHalf, toByteOffset: i * 4, as: SIMD8<Float>.self)
                i += 8
            }
            while i < n {
                channels[0][destinationOffset + i] = source[2 * i]
                channels[1][destinationOffset + i] = source[2 * i + 1]
                i += 1
            }
            return
        }
        for i in 0..<n {
            for ch in 0..<c { channels[ch][destinationOffset + i] = source[i * c + ch] }
        }
    }
}

/// Where frames read from a ``FrameRing`` go: the consumer sees them in the ring's own
/// interleaved memory, so a reader that mixes them (``StripMixSink``) reads that memory once
/// instead of copying it out first.
protocol FrameSink {
    /// `count` frames of `source` (interleaved, the ring's channel count) for offsets
    /// `offset..<offset + count`. Audio thread: no allocation, no locks.
    mutating func frames(_ source: UnsafePointer<Float>, at offset: Int, count: Int)
    /// `count` frames of silence for offsets `offset..<offset + count`. Audio thread: no allocation, no locks.
    mutating func silence(at offset: Int, count: Int)
}

/// A ``FrameSink`` that copies into one buffer per channel (``FrameRing/pop(into:frameCount:destinationOffset:)``'s layout).
struct ChannelSink: FrameSink {
    let channels: UnsafePointer<UnsafeMutablePointer<Float>>
    let channelCount: Int

    /// Audio thread: no allocation, no locks.
    @inline(__always)
    mutating func frames(_ source: UnsafePointer<Float>, at offset: Int, count: Int) {
        FrameRing.deinterleave(source, channelCount: channelCount, into: channels, destinationOffset: offset, frameCount: count)
    }

    /// Audio thread: no allocation, no locks.
    @inline(__always)
    mutating func silence(at offset: Int, count: Int) {
        guard count > 0 else { return }
        for c in 0..<channelCount { (channels[c] + offset).update(repeating: 0, count: count) }
    }
}

/// A lock-free single-producer/single-consumer queue of small values (commands in, events
/// out), allocated once.
public final class SPSCQueue<Element: BitwiseCopyable>: @unchecked Sendable {
    private let storage: UnsafeMutablePointer<Element>
    /// Elements it holds at most.
    public let capacity: Int
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
