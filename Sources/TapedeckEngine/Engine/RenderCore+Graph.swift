import CProcessGraph
import TapedeckCore
import TapedeckDSP

/// The period's strips on several threads (``ProcessPlan``, ``RenderThreads``): every strip
/// runs once every strip feeding it is done, each summing point adds what reaches it in the
/// one-thread walk's order, so the mix is the same bits on any number of threads.
extension RenderCore {
    /// What a period's nodes are told: written by the device's thread before it posts the
    /// period, read by the workers after they take a node of it.
    struct GraphPeriod {
        enum Phase {
            /// Strips of the installed graph.
            case render
            /// ``RenderCore/jobBody`` for each index (a freewheeling export's disk reads).
            case job
        }
        var phase = Phase.render
        var frames = 0
        var transport = TransportInfo()
        var rolling = false
        var targets: StripTargets?
        /// ``RenderCore/periodNumber`` of this period.
        var number = 0
    }

    /// Renders every strip of `g` for this period on all the threads, landing the paths into
    /// the master and device outputs in walk order as their strips finish
    /// (``landFinished(_:frameCount:targets:scratch:)``) and the rest on this one once all
    /// are done; then tells the underruns the strips met (the event queue has one writer).
    ///
    /// Audio thread: no allocation, no locks; waits for the workers' last strips (a bounded
    /// spin, then a futex).
    func mixOnThreads(_ g: Graph, pool: OpaquePointer, plan: OpaquePointer, frameCount n: Int, transport: TransportInfo,
                      rolling: Bool, targets: StripTargets) {
        periodNumber &+= 1
        landCursor = 0
        period = GraphPeriod(phase: .render, frames: n, transport: transport, rolling: rolling, targets: targets,
                             number: periodNumber)
        td_graph_pool_run(pool, plan)
        // Every node is done (and with it every landing a node began): what is left lands here.
        let scratch = PathScratch(channels: pathScratch, devices: deviceTargets)
        let p = g.processPlan
        for k in landCursor..<p.finalCount { landFinal(g, k, frameCount: n, targets: targets, scratch: scratch) }
        landCursor = p.finalCount
        for i in 0..<g.trackCount {
            let missing = g.stripTable[i]._withUnsafeGuaranteedRef { strip -> Int in
                let m = strip.periodMissing
                strip.periodMissing = 0
                return m
            }
            countUnderrun(missing, track: i)
        }
    }

    /// Node `i` of this period: a track renders (input, or disk and chain), a bus gathers
    /// what reaches it and runs its chain; then its fader, meter and paths' gains. What it
    /// sends on is landed by its destinations.
    ///
    /// Audio thread or a worker: no allocation, no locks.
    func runNode(_ i: Int, thread t: Int) {
        let period = self.period
        if period.phase == .job {
            jobBody?(i)
            return
        }
        guard let graphRef = graph, let targets = period.targets, let table = threadScratch else { return }
        let scratch = table[t]
        let n = period.frames
        graphRef._withUnsafeGuaranteedRef { g in
            if g.routes.isBus[i] {
                landIncoming(g, bus: i, frameCount: n, targets: targets, scratch: scratch)
                g.stripTable[i]._withUnsafeGuaranteedRef { $0.renderBus(frameCount: n, transport: period.transport) }
            } else {
                let monitor = monitoredInput(g, track: i, rolling: period.rolling)
                let missing = renderTrack(g, track: i, monitor: monitor, frameCount: n, transport: period.transport,
                                          rolling: period.rolling)
                g.stripTable[i]._withUnsafeGuaranteedRef { $0.periodMissing = missing }
            }
            routeStrip(g, strip: i, frameCount: n, targets: targets, lands: false, scratch: scratch)
            g.stripTable[i]._withUnsafeGuaranteedRef { $0.finishedPeriod.store(period.number, ordering: .sequentiallyConsistent) }
            landFinished(g, frameCount: n, targets: targets, scratch: scratch)
        }
    }

    /// The period's `k`th final path, from its strip's buffers.
    ///
    /// Audio thread or a worker: no allocation, no locks.
    @inline(__always)
    private func landFinal(_ g: Graph, _ k: Int, frameCount n: Int, targets: StripTargets, scratch: PathScratch) {
        let p = g.processPlan
        let path = p.final[k], source = p.finalSource[k]
        let buffers = g.stripTable[source]._withUnsafeGuaranteedRef { UnsafePointer($0.buffers) }
        landOutput(g, strip: source, path: path, from: buffers, frameCount: n, own: g.routes.gains[path], targets: targets,
                   scratch: scratch)
    }

    /// Lands the period's final paths (onto the master and device outputs) from the next one
    /// on, for as long as their strips are done: the sum builds up while later strips still
    /// render, on whichever thread finished a strip, and with the strip's output still in its
    /// cache. One thread lands at a time (``landLock``), in walk order, so the sums are the
    /// same bits as the one-thread walk's. A thread that finds another landing goes back to
    /// its strips; the lander looks once more after letting go, so a strip finished while it
    /// held the lock is not left for the device's thread's sweep (only a cost if it were: the
    /// sweep in ``mixOnThreads`` lands whatever is left).
    ///
    /// Audio thread or a worker: no allocation; a try-lock that never waits.
    private func landFinished(_ g: Graph, frameCount n: Int, targets: StripTargets, scratch: PathScratch) {
        let p = g.processPlan, number = period.number
        func ready(_ k: Int) -> Bool {
            k < p.finalCount
                && g.stripTable[p.finalSource[k]]._withUnsafeGuaranteedRef { $0.finishedPeriod.load(ordering: .sequentiallyConsistent) } == number
        }
        while landLock.compareExchange(expected: false, desired: true, ordering: .sequentiallyConsistent).exchanged {
            var k = landCursor
            while ready(k) {
                landFinal(g, k, frameCount: n, targets: targets, scratch: scratch)
                k += 1
            }
            landCursor = k
            landLock.store(false, ordering: .sequentiallyConsistent)
            guard ready(k) else { return }
        }
    }

    /// Every path into bus `b`, in walk order: its sources' pre- or post-fader signal × the
    /// gains their walks worked out, through each path's delay.
    ///
    /// Audio thread or a worker, once the bus's feeders are done: no allocation, no locks.
    private func landIncoming(_ g: Graph, bus b: Int, frameCount n: Int, targets: StripTargets, scratch: PathScratch) {
        let p = g.processPlan, r = g.routes
        let first = p.incomingFirst[b]
        for k in first..<(first + p.incomingCount[b]) {
            let path = p.incoming[k], source = p.incomingSource[k]
            if r.paths[path].kind == .output {
                let buffers = g.stripTable[source]._withUnsafeGuaranteedRef { UnsafePointer($0.buffers) }
                landOutput(g, strip: source, path: path, from: buffers, frameCount: n, own: r.gains[path], targets: targets,
                           scratch: scratch)
                continue
            }
            let from: UnsafePointer<UnsafeMutablePointer<Float>>
            if r.paths[path].kind == .preFaderSend, let kept = r.preFader[source] {
                from = UnsafePointer(kept)
            } else {
                from = g.stripTable[source]._withUnsafeGuaranteedRef { UnsafePointer($0.buffers) }
            }
            landSend(g, path: path, from: from, frameCount: n, scratch: scratch)
        }
    }

    /// Track `i`'s pre-fader signal for this period in its buffers: its monitored input, or its
    /// material through its chain (with its MIDI). Returns the frames its disk stream missed.
    ///
    /// Audio thread or a worker: no allocation, no locks.
    func renderTrack(_ g: Graph, track i: Int, monitor: (channels: UnsafePointer<UnsafeMutablePointer<Float>>?, count: Int),
                     frameCount n: Int, transport: TransportInfo, rolling: Bool) -> Int {
        g.stripTable[i]._withUnsafeGuaranteedRef { strip in
            // A monitored track plays its input, not its chain's MIDI: none is collected.
            let midi = monitor.channels == nil
                ? midiEvents(g, track: i, strip: strip, frameCount: n, from: position, speed: speedFactor)
                : UnsafeBufferPointer<MIDIEvent>(start: nil, count: 0)
            let missing = strip.render(frameCount: n, rolling: rolling, seq: seq, transport: transport,
                                       monitor: monitor.channels, monitorChannels: monitor.count, midi: midi)
            g.prefetch.noteRing(strip: i, frameCount: n)
            return missing
        }
    }

    /// Runs `job` for every index below `count` on all the threads; returns when all are done.
    /// A freewheeling export's disk reads between periods (not for a real device: `job` is a
    /// closure).
    func runEach(count: Int, _ job: @escaping (Int) -> Void) {
        guard let threads, count > 1, let plan = threads.flatPlan(count: count) else {
            for i in 0..<max(count, 0) { job(i) }
            return
        }
        jobBody = job
        period = GraphPeriod(phase: .job)
        td_graph_pool_run(threads.pool, plan)
        period = GraphPeriod()
        jobBody = nil
    }

    /// The workers follow the device's thread's priority, one below it (on a JACK server the
    /// client thread's priority is the server's choice). Audio thread, as it begins and every
    /// 1,024 periods after: two system calls to learn its own priority, no lock.
    func followDevicePriority() {
        guard let threadPool else { return }
        let own = td_thread_fifo_priority()
        td_graph_pool_set_priority(threadPool, own > 1 ? own - 1 : 0)
    }
}
