import Dispatch
import TapedeckDSP

/// Spreads the tracks of one block over worker threads. Each track renders into its own
/// buffers, so workers share nothing but the read-only block position.
final class ParallelTracks: @unchecked Sendable {
    private let groups: [[TrackRenderer]]

    /// Deals `tracks` round-robin into `workerCount` groups (fewer when there are fewer tracks).
    init(_ tracks: [TrackRenderer], workerCount: Int) {
        let count = max(1, min(workerCount, tracks.count))
        var groups = [[TrackRenderer]](repeating: [], count: count)
        for (i, t) in tracks.enumerated() { groups[i % count].append(t) }
        self.groups = groups
    }

    /// Renders every track's block; returns when all are done.
    func render(blockStart: Int64, frameCount: Int, transport: TransportInfo) {
        if groups.count == 1 {
            for t in groups[0] { t.render(blockStart: blockStart, frameCount: frameCount, transport: transport) }
            return
        }
        DispatchQueue.concurrentPerform(iterations: groups.count) { g in
            for t in groups[g] { t.render(blockStart: blockStart, frameCount: frameCount, transport: transport) }
        }
    }
}
