/// A fixed delay of a few channels, for delay compensation: a path that reaches a summing
/// point sooner than another (a track's dry output beside its send through a bus with a
/// look-ahead limiter) is held back by the difference, so both arrive together.
///
/// Allocated on the control thread; ``process(_:channelCount:frameCount:)`` runs on the audio thread.
final class DelayLine: @unchecked Sendable {
    /// Frames of delay.
    let delayFrames: Int
    let channelCount: Int
    /// The longest block one call delays.
    let maxFrames: Int
    private let capacity: Int
    private let lines: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    /// Where the next block is written.
    private var writeAt = 0

    /// A silent delay of `delayFrames` over `channelCount` channels, for blocks of at most
    /// `maxFrames`. Control thread.
    init(delayFrames: Int, channelCount: Int, maxFrames: Int) {
        self.delayFrames = max(delayFrames, 0)
        self.channelCount = max(channelCount, 1)
        self.maxFrames = max(maxFrames, 1)
        // Room for the delay and one block: a block is written whole before it is read from
        // `delay` frames back, which for a block longer than the delay reaches into itself.
        capacity = self.delayFrames + self.maxFrames
        lines = .allocate(capacity: self.channelCount)
        for c in 0..<self.channelCount {
            (lines + c).initialize(to: .allocate(capacity: capacity))
            lines[c].initialize(repeating: 0, count: capacity)
        }
    }

    deinit {
        for c in 0..<channelCount { lines[c].deallocate() }
        lines.deallocate()
    }

    /// Delays `frameCount` (≤ ``maxFrames``) frames of the first `channelCount` of `channels`
    /// in place.
    ///
    /// Audio thread: no allocation, no locks (copies only).
    func process(_ channels: UnsafePointer<UnsafeMutablePointer<Float>>, channelCount count: Int, frameCount n: Int) {
        guard delayFrames > 0, n > 0 else { return }
        let n = min(n, maxFrames)
        let readAt = (writeAt + capacity - delayFrames) % capacity
        for c in 0..<min(count, channelCount) {
            let line = lines[c], buffer = channels[c]
            DelayLine.copy(from: buffer, count: n, toRing: line, at: writeAt, capacity: capacity)
            DelayLine.copy(fromRing: line, at: readAt, capacity: capacity, count: n, to: buffer)
        }
        writeAt = (writeAt + n) % capacity
    }

    /// Silence in the line (a locate: what was delayed belongs to the old place).
    ///
    /// Audio thread: no allocation (writes the line's frames).
    func reset() {
        for c in 0..<channelCount { lines[c].update(repeating: 0, count: capacity) }
        writeAt = 0
    }

    /// Audio thread: copies only.
    @inline(__always)
    private static func copy(from source: UnsafePointer<Float>, count n: Int, toRing ring: UnsafeMutablePointer<Float>, at: Int,
                             capacity: Int) {
        let first = min(n, capacity - at)
        (ring + at).update(from: source, count: first)
        if n > first { ring.update(from: source + first, count: n - first) }
    }

    /// Audio thread: copies only.
    @inline(__always)
    private static func copy(fromRing ring: UnsafePointer<Float>, at: Int, capacity: Int, count n: Int,
                             to destination: UnsafeMutablePointer<Float>) {
        let first = min(n, capacity - at)
        destination.update(from: ring + at, count: first)
        if n > first { (destination + first).update(from: ring, count: n - first) }
    }
}
