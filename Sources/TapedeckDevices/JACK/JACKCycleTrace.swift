import Foundation

/// Every JACK cycle's clock reading, what Tapedeck made of it and the first samples of its
/// first input, kept in memory and written as text when the device closes — for finding, after
/// a stall, whether a period of audio came from the graph a period late (a stale buffer) or
/// was placed late by Tapedeck. Only when `TAPEDECK_JACK_TRACE` names a file; a diagnostic for
/// developers (docs/jack.md), not a feature.
final class JACKCycleTrace {
    /// One cycle.
    struct Entry {
        var clockFrame: UInt32 = 0
        var frames: Int32 = 0
        var monotonicNanoseconds: Int64 = 0
        /// The first input's first two samples, as JACK handed them.
        var first: Float = 0
        var second: Float = 0
        /// What the clock reading made: frames skipped before the cycle, an xrun told (with
        /// what it lost), frames held after it.
        var skipFrames: Int64 = 0
        var toldLostFrames: Int64 = -1
        var heldFrames: Int64 = 0
        /// Server xrun reports seen since the last cycle.
        var reports: Int32 = 0
        /// JACK's transport state this cycle (jack_transport_state_t: 0 stopped, 1 rolling,
        /// 3 starting), and its frame.
        var transport: Int32 = -1
        var transportFrame: UInt32 = 0
        /// What the engine answered for the slow sync (1 ready to roll), and what the sync
        /// callback last returned before this cycle (-1: not called since the last cycle).
        var ready: Int32 = -1
        var synced: Int32 = -1
    }

    private static let capacity = 1 << 17
    private let entries: UnsafeMutablePointer<Entry>
    private var count = 0
    /// The cycle being filled (audio thread).
    var current = Entry()
    let path: String

    /// A trace when the environment asks for one.
    static func fromEnvironment() -> JACKCycleTrace? {
        guard let path = ProcessInfo.processInfo.environment["TAPEDECK_JACK_TRACE"], !path.isEmpty else { return nil }
        return JACKCycleTrace(path: path)
    }

    private init(path: String) {
        self.path = path
        entries = .allocate(capacity: Self.capacity)
        entries.initialize(repeating: Entry(), count: Self.capacity)
    }

    deinit { entries.deallocate() }

    /// Keeps `current` and starts the next. Audio thread: no allocation, no locks.
    func commit() {
        if count < Self.capacity {
            entries[count] = current
            count += 1
        }
        current = Entry()
    }

    /// Writes what was kept, one cycle a line. Control thread, after the cycles have stopped.
    func write() {
        var text = "clock_frame\tframes\tmonotonic_ns\tfirst\tsecond\tskip\ttold_lost\theld\treports"
            + "\ttransport\ttransport_frame\tready\tsynced\n"
        for i in 0..<count {
            let e = entries[i]
            text += "\(e.clockFrame)\t\(e.frames)\t\(e.monotonicNanoseconds)\t\(e.first)\t\(e.second)\t\(e.skipFrames)"
                + "\t\(e.toldLostFrames)\t\(e.heldFrames)\t\(e.reports)\t\(e.transport)\t\(e.transportFrame)\t\(e.ready)\t\(e.synced)\n"
        }
        try? text.write(toFile: path, atomically: true, encoding: .utf8)
    }
}
