import CProcessGraph
#if canImport(Glibc)
import Glibc
#endif

/// The threads that share a period's strips: the device's own thread and `count − 1` workers
/// (``ProcessPlan``, `CProcessGraph`), real-time just below the device's thread on a real
/// device, plain threads for an export (which runs the same graph freewheeled). Between
/// periods the workers render playback ahead (``RenderCore/renderAhead(thread:)``).
///
/// Made and ended on the control thread; ``RenderCore`` holds it for as long as its engine runs.
final class RenderThreads: @unchecked Sendable {
    let pool: OpaquePointer
    /// Participants, the device's thread included.
    let count: Int
    /// Each participant's scratch for the paths it lands (index 0: the device's thread).
    let scratch: UnsafeMutablePointer<RenderCore.PathScratch>
    private let frames: Int
    /// Flat plans (no edges) by node count, for ``runEach(count:_:)``. Control thread.
    private var flatPlans: [Int: OpaquePointer] = [:]

    /// One thread per core: the default of `--threads`.
    static var defaultCount: Int { max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))) }

    /// Starts `count − 1` workers for `core` (real-time at `priority` when `realtime`), each
    /// with scratch for paths of `frames` frames. Nil when they cannot be started (the engine
    /// then renders on one thread). Control thread.
    init?(count: Int, realtime: Bool, priority: Int32, frames: Int, core: RenderCore) {
        let context = Unmanaged.passUnretained(core).toOpaque()
        let run: td_graph_run_fn = { context, node, thread in
            Unmanaged<RenderCore>.fromOpaque(context!)._withUnsafeGuaranteedRef { $0.runNode(Int(node), thread: Int(thread)) }
        }
        let ahead: td_graph_ahead_fn = { context, thread in
            Unmanaged<RenderCore>.fromOpaque(context!)._withUnsafeGuaranteedRef { $0.renderAhead(thread: Int(thread)) ? 1 : 0 }
        }
        let hook: td_graph_thread_fn = { context, _, begins in
            Unmanaged<RenderCore>.fromOpaque(context!)._withUnsafeGuaranteedRef { core in
                if begins != 0 { core.probe?.workerThreadBegins() } else { core.probe?.workerThreadEnds() }
            }
        }
        guard count > 1, let pool = td_graph_pool_create(Int32(count), realtime ? 1 : 0, priority, context, run, ahead, hook) else {
            return nil
        }
        self.pool = pool
        self.count = Int(td_graph_pool_threads(pool))
        self.frames = frames
        scratch = .allocate(capacity: self.count)
        for k in 0..<self.count {
            let channels = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: 2)
            for c in 0..<2 {
                (channels + c).initialize(to: .allocate(capacity: frames))
                channels[c].initialize(repeating: 0, count: frames)
            }
            let devices = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: 2)
            devices.initialize(repeating: channels[0], count: 2)
            (scratch + k).initialize(to: RenderCore.PathScratch(channels: channels, devices: devices))
        }
    }

    private var stopped = false

    /// Ends the workers (waits for them). Safe to call twice. Control thread, with no period running.
    func stop() {
        guard !stopped else { return }
        stopped = true
        td_graph_pool_destroy(pool)
        for (_, plan) in flatPlans { td_graph_plan_destroy(plan) }
        flatPlans = [:]
    }

    deinit {
        stop()
        for k in 0..<count {
            for c in 0..<2 { scratch[k].channels[c].deallocate() }
            scratch[k].channels.deallocate()
            scratch[k].devices.deallocate()
        }
        scratch.deallocate()
    }

    /// Workers that got SCHED_FIFO.
    var realtimeWorkers: Int { Int(td_graph_pool_realtime_workers(pool)) }

    /// A plan of `count` independent nodes (made once per count). Control thread.
    func flatPlan(count: Int) -> OpaquePointer? {
        if let plan = flatPlans[count] { return plan }
        let zeros = [Int32](repeating: 0, count: count)
        let initial = (0..<count).map { Int32($0) }
        let plan = td_graph_plan_create(Int32(count), zeros, zeros, zeros, [], initial, Int32(count))
        flatPlans[count] = plan
        return plan
    }
}
