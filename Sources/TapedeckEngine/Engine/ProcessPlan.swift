import CProcessGraph

/// A graph's strips as a process graph for several threads (Ardour's graph, JUCE's compiled
/// render order): each strip is a node that waits for the strips that send or route into it
/// (a bus waits for its feeders), and the order in which every summing point adds what
/// reaches it, fixed here, is the order the one-thread walk adds it in — so the sums, and the
/// output, are the same bits on any number of threads.
///
/// A track's node renders it and works out its paths' gains; a bus's node first adds every
/// path into it (``incoming``, in walk order), then runs its chain and works out its own; once
/// every node is done the device's thread adds the paths into the master and the device
/// outputs (``final``, in walk order). Built on the control thread with its graph.
final class ProcessPlan: @unchecked Sendable {
    /// The C plan (dependency counts, what each node triggers), or nil when the routing does
    /// not run forward (then one thread walks it).
    let plan: OpaquePointer?
    /// For bus `b`, the paths into it: `incoming[incomingFirst[b] ..< incomingFirst[b] + incomingCount[b]]`,
    /// each with its source strip in ``incomingSource``.
    let incomingFirst: UnsafeMutablePointer<Int>
    let incomingCount: UnsafeMutablePointer<Int>
    let incoming: UnsafeMutablePointer<Int>
    let incomingSource: UnsafeMutablePointer<Int>
    /// Paths into the master or device outputs in walk order, with their source strips.
    let final: UnsafeMutablePointer<Int>
    let finalSource: UnsafeMutablePointer<Int>
    let finalCount: Int
    let nodeCount: Int

    /// The plan for `routes`. Control thread.
    init(routes r: RouteTable) {
        let n = r.stripCount
        nodeCount = n
        var position = [Int](repeating: 0, count: n)
        for k in 0..<n { position[r.order[k]] = k }
        var into = [[(path: Int, source: Int)]](repeating: [], count: n)
        var finals: [(path: Int, source: Int)] = []
        var feeds = [[Int32]](repeating: [], count: n)
        var forward = true
        for k in 0..<n {
            let i = r.order[k]
            for p in r.first[i]..<(r.first[i] + r.pathCount[i]) {
                let t = r.paths[p].target
                guard t >= 0 else {
                    finals.append((p, i))
                    continue
                }
                if position[t] <= k { forward = false }
                into[t].append((p, i))
                if !feeds[i].contains(Int32(t)) { feeds[i].append(Int32(t)) }
            }
        }
        var refcount = [Int32](repeating: 0, count: n)
        for list in feeds { for t in list { refcount[Int(t)] += 1 } }
        incomingFirst = .allocate(capacity: max(n, 1))
        incomingCount = .allocate(capacity: max(n, 1))
        let total = into.reduce(0) { $0 + $1.count }
        incoming = .allocate(capacity: max(total, 1))
        incomingSource = .allocate(capacity: max(total, 1))
        var at = 0
        for b in 0..<n {
            incomingFirst[b] = at
            incomingCount[b] = into[b].count
            for (p, source) in into[b] {
                incoming[at] = p
                incomingSource[at] = source
                at += 1
            }
        }
        finalCount = finals.count
        final = .allocate(capacity: max(finals.count, 1))
        finalSource = .allocate(capacity: max(finals.count, 1))
        for (k, f) in finals.enumerated() {
            final[k] = f.path
            finalSource[k] = f.source
        }
        guard forward, n > 0 else {
            plan = nil
            return
        }
        // The strips with nothing to wait for start the period, in walk order.
        let initial = (0..<n).map { r.order[$0] }.filter { refcount[$0] == 0 }.map { Int32($0) }
        var starts = [Int32](), counts = [Int32](), flat = [Int32]()
        for i in 0..<n {
            starts.append(Int32(flat.count))
            counts.append(Int32(feeds[i].count))
            flat += feeds[i]
        }
        plan = td_graph_plan_create(Int32(n), refcount, starts, counts, flat, initial, Int32(initial.count))
    }

    deinit {
        td_graph_plan_destroy(plan)
        incomingFirst.deallocate()
        incomingCount.deallocate()
        incoming.deallocate()
        incomingSource.deallocate()
        final.deallocate()
        finalSource.deallocate()
    }
}
