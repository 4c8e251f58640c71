import Synchronization

/// Where the transport was at each device frame, as a short history of straight segments:
/// "from device frame d the playhead was at timeline frame t, rolling at speed s (or
/// standing)". The audio thread appends a segment whenever the mapping jumps (start, stop,
/// locate, a loop's wrap, a speed change); the control thread looks up the segment holding a
/// device frame — to place input heard in the past, as retroactive capture does. An xrun is
/// no jump: device time went on unheard and the transport with it, so the segment it falls
/// in goes on through it (``appendUnlessContinued(deviceFrame:timelineFrame:speed:)``).
final class TransportLog: @unchecked Sendable {
    /// One straight stretch of the transport.
    struct Segment: Equatable {
        /// Device frame where it begins.
        var deviceFrame: Int64
        /// Timeline frame at that device frame.
        var timelineFrame: Int64
        /// Timeline frames per device frame; 0 while standing.
        var speed: Double

        /// The timeline frame at `device` (at or after this segment's start).
        func timeline(at device: Int64) -> Int64 {
            guard speed != 0 else { return timelineFrame }
            return timelineFrame + Int64((Double(device - deviceFrame) * speed).rounded(.down))
        }
    }

    private let capacity = 256
    private let fields: UnsafeMutablePointer<Atomic<Int64>>
    private let count = Atomic<Int64>(0)

    init() {
        fields = .allocate(capacity: capacity * 3)
        for i in 0..<(capacity * 3) { (fields + i).initialize(to: Atomic(0)) }
    }

    deinit {
        fields.deinitialize(count: capacity * 3)
        fields.deallocate()
    }

    /// Appends a segment.
    ///
    /// Audio thread: no allocation, no locks.
    func append(deviceFrame: Int64, timelineFrame: Int64, speed: Double) {
        let n = count.load(ordering: .relaxed)
        let slot = Int(n % Int64(capacity)) * 3
        fields[slot].store(deviceFrame, ordering: .relaxed)
        fields[slot + 1].store(timelineFrame, ordering: .relaxed)
        fields[slot + 2].store(Int64(bitPattern: speed.bitPattern), ordering: .relaxed)
        count.store(n + 1, ordering: .releasing)
    }

    /// Appends a segment unless the newest one already says it: the transport stands where
    /// it stood, or rolls on at the same speed to the same frame. (An xrun moved device time
    /// and the transport on together: a new segment there would make the memory's input
    /// before it look like another stretch of the transport, and retroactive capture keeps
    /// one stretch only.)
    ///
    /// Audio thread: no allocation, no locks (it is the only writer, so its newest entry
    /// stays as it stored it).
    func appendUnlessContinued(deviceFrame: Int64, timelineFrame: Int64, speed: Double) {
        let n = count.load(ordering: .relaxed)
        if n > 0 {
            let last = entry(n - 1)
            if last.speed == speed && last.deviceFrame <= deviceFrame && last.timeline(at: deviceFrame) == timelineFrame { return }
        }
        append(deviceFrame: deviceFrame, timelineFrame: timelineFrame, speed: speed)
    }

    /// Entry `k` (counting from the first ever appended) as stored now. Any thread.
    private func entry(_ k: Int64) -> Segment {
        let slot = Int(k % Int64(capacity)) * 3
        return Segment(deviceFrame: fields[slot].load(ordering: .relaxed),
                       timelineFrame: fields[slot + 1].load(ordering: .relaxed),
                       speed: Double(bitPattern: UInt64(bitPattern: fields[slot + 2].load(ordering: .relaxed))))
    }

    /// The segment holding device frame `device`, or nil when it is older than the history
    /// (or the history changed too fast to read). Control thread.
    func segment(containing device: Int64) -> Segment? {
        for _ in 0..<4 {
            let n = count.load(ordering: .acquiring)
            var found: Segment?
            var k = n - 1
            while k >= max(0, n - Int64(capacity) + 8) {
                let s = entry(k)
                if s.deviceFrame <= device { found = s; break }
                k -= 1
            }
            // Entries read may have been overwritten meanwhile only if the log moved far on.
            if count.load(ordering: .acquiring) - n < Int64(capacity) - 8 { return found }
        }
        return nil
    }

    /// The segments from the one holding `device` on, oldest first. Control thread.
    func segments(since device: Int64) -> [Segment] {
        let n = count.load(ordering: .acquiring)
        var out: [Segment] = []
        var k = n - 1
        while k >= max(0, n - Int64(capacity) + 8) {
            let s = entry(k)
            out.append(s)
            if s.deviceFrame <= device { break }
            k -= 1
        }
        return out.reversed()
    }
}
