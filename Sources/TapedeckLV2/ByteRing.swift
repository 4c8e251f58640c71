import Synchronization

/// A single-producer, single-consumer ring of packets (a 4-byte size, then the bytes), for
/// the worker's requests and responses: the audio thread writes and reads it without
/// allocating or locking.
final class ByteRing: @unchecked Sendable {
    /// Bytes the ring holds (a power of two).
    let capacity: Int
    private let storage: UnsafeMutablePointer<UInt8>
    private let readCount = Atomic<Int>(0)
    private let writeCount = Atomic<Int>(0)

    /// A ring of at least `minimumCapacity` bytes. Off the audio thread.
    init(minimumCapacity: Int) {
        var size = 64
        while size < minimumCapacity { size <<= 1 }
        capacity = size
        storage = .allocate(capacity: size)
        storage.initialize(repeating: 0, count: size)
    }

    deinit { storage.deallocate() }

    /// Appends a packet of `size` bytes from `data`; false (and nothing written) when it does
    /// not fit. Producer side; realtime-safe.
    func write(size: UInt32, data: UnsafeRawPointer?) -> Bool {
        let write = writeCount.load(ordering: .relaxed)
        let read = readCount.load(ordering: .acquiring)
        let needed = 4 + Int(size)
        guard capacity - (write &- read) >= needed, size == 0 || data != nil else { return false }
        var header = size
        withUnsafeBytes(of: &header) { copyIn($0.baseAddress!, count: 4, at: write) }
        if size > 0 { copyIn(data!, count: Int(size), at: write &+ 4) }
        writeCount.store(write &+ needed, ordering: .releasing)
        return true
    }

    /// Takes the next packet into `buffer` (room for `bufferCapacity` bytes) and returns its
    /// size, or nil when the ring is empty. A packet larger than the buffer is skipped (its
    /// size is returned, its bytes are not). Consumer side; realtime-safe.
    func read(into buffer: UnsafeMutableRawPointer, bufferCapacity: Int) -> Int? {
        let read = readCount.load(ordering: .relaxed)
        let write = writeCount.load(ordering: .acquiring)
        guard write &- read >= 4 else { return nil }
        var header: UInt32 = 0
        withUnsafeMutableBytes(of: &header) { copyOut($0.baseAddress!, count: 4, at: read) }
        let size = Int(header)
        if size <= bufferCapacity { copyOut(buffer, count: size, at: read &+ 4) }
        readCount.store(read &+ 4 &+ size, ordering: .releasing)
        return size
    }

    private func copyIn(_ source: UnsafeRawPointer, count: Int, at position: Int) {
        let start = position & (capacity - 1)
        let first = min(count, capacity - start)
        (storage + start).update(from: source.assumingMemoryBound(to: UInt8.self), count: first)
        if first < count { storage.update(from: source.assumingMemoryBound(to: UInt8.self) + first, count: count - first) }
    }

    private func copyOut(_ destination: UnsafeMutableRawPointer, count: Int, at position: Int) {
        let start = position & (capacity - 1)
        let first = min(count, capacity - start)
        destination.copyMemory(from: storage + start, byteCount: first)
        if first < count { (destination + first).copyMemory(from: storage, byteCount: count - first) }
    }
}
