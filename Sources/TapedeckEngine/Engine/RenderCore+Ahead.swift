import CProcessGraph
import TapedeckCore
import TapedeckDSP

/// Playback rendered ahead (Reaper's anticipative processing; Ardour has none): between
/// periods the workers run the chains of the strips that only play from disk a few periods
/// ahead (``AheadBuffer``), so the device period carries the live inputs, the monitored and
/// armed strips, the faders and the sums. The device's thread opens the window at the end of
/// a rolling period with what the workers need to know (``AheadSnapshot``: they read nothing
/// else of the transport), and closes it — waiting for a block in flight, one at most per
/// worker — before it touches a strip: at the start of every period, before a graph is
/// swapped in, before any seek (a locate, a loop or speed change, a stop), which also drops
/// everything rendered ahead.
extension RenderCore {
    /// The transport as the next period will begin, for the workers rendering ahead.
    struct AheadSnapshot {
        var graph: Unmanaged<Graph>
        /// The next period's first sequence number, and its timeline frame.
        var seq: Int64
        var position: Int64
        var route: PlayRoute
        /// A loop change not yet in effect: the way round from sequence ``switchSeq`` on (the
        /// two ways agree up to there, so the voices' rings already hold the right frames).
        var next: PlayRoute?
        var switchSeq: Int64
        var countIn: Range<Int64>
        var sampleRate: Int
        var recording: Bool
        /// Another program's musical time at ``seq`` (JACK's timebase master), if any.
        var host: TransportInfo?

        /// What nodes are told for the block from sequence `s` (at 1×: the transport rolls on
        /// along the route, round the loop).
        ///
        /// A worker: arithmetic only.
        func transport(atSeq s: Int64, graph g: Graph) -> TransportInfo {
            let d = s - seq
            // Up to the switch point both ways agree; from it the new one rules (as the
            // device's period does).
            let frame = (next ?? route).advance(position, by: d)
            let way = next.map { s >= switchSeq ? $0 : route } ?? route
            if var host {
                host = host.advanced(by: Int(d))
                host.timelineFrame = frame
                return host
            }
            let p = RenderCore.tempoPoint(g.tempoTable, countIn: countIn, sampleRate: sampleRate, atFrame: Double(frame))
            var info = TransportInfo(tempoBPM: p.bpm, beatPosition: p.beatPosition, beatsPerBar: p.beatsPerBar, beatUnit: p.beatUnit,
                                     sampleRate: Double(sampleRate), timelineFrame: frame, isPlaying: true, isRecording: recording,
                                     isCycling: way.loops)
            info.barStartBeat = p.barStartBeat
            info.bpmPerFrame = p.bpmPerFrame
            return info
        }
    }

    /// Opens the window for rendering ahead, when the transport rolls at 1× (no count-in to
    /// join) and the graph has strips to render. A loop change waiting for its switch point
    /// does not close it: the voices hold each frame by its sequence number, the old way's up
    /// to the switch and the new way's after it, so a block ahead reads what the device
    /// period would. (It used to: a loop set before or while rolling then left every strip
    /// to the device period until the playhead reached the loop's end, seconds or minutes.)
    ///
    /// Audio thread, at the end of a period: no allocation, no locks.
    func openAhead() {
        guard let pool = threadPool, let g = graph, state == .rolling, !timePitch.engaged,
              preRoll.joinFrame < 0, !rendersOffline, g._withUnsafeGuaranteedRef({ $0.aheadCount > 0 }) else { return }
        var host = hostTransportInfo()
        if let h = host {
            // Read at this period's start: moved on to the next one's.
            host = h.advanced(by: periodFrames)
            host?.timelineFrame = position
        }
        aheadSnapshot = AheadSnapshot(graph: g, seq: seq, position: position, route: route, next: pendingRoute,
                                      switchSeq: routeSwitchSeq, countIn: countInFrames,
                                      sampleRate: sampleRate, recording: takes != nil, host: host)
        // The next period's blocks first (``renderAhead(thread:)``).
        aheadLevel.store(1, ordering: .relaxed)
        td_graph_pool_open_ahead(pool)
    }

    /// Closes the window and waits for the blocks in flight (one at most per worker).
    ///
    /// Audio thread: no allocation; a bounded spin, then a futex wait.
    @inline(__always)
    func closeAhead() {
        guard let pool = threadPool else { return }
        _ = td_graph_pool_close_ahead(pool)
    }

    /// Drops what the strips of `g` hold rendered ahead from sequence `seqStart` on, where the
    /// voices read again (after ``closeAhead()``): everything for a seek from here, only what
    /// lies past the switch point for a loop change that `continuesOld` (the frames before it
    /// were read the old way, which still plays up to there, and the voices have given them
    /// up: dropping them too left that much silence in the next period).
    ///
    /// Audio thread: no allocation, no locks.
    func dropAhead(_ g: Graph, fromSeq seqStart: Int64, continuesOld: Bool) {
        for k in 0..<g.trackCount {
            g.stripTable[k]._withUnsafeGuaranteedRef { strip in
                guard let ahead = strip.ahead else { return }
                if continuesOld { ahead.drop(fromSeq: seqStart) } else { ahead.discard() }
            }
        }
    }

    /// One block of one strip rendered ahead, the emptiest strips first: every strip gets the
    /// next period's block before any gets a second, so a worker that falls behind (a busy
    /// core, a heavy stretch) leaves the device period the fewest strips to render itself.
    /// (Taking the strips in plain turns, a worker behind kept topping up strips that had
    /// two periods held while others had none: in a 60 s run 2,542 periods rendered 300 strips
    /// each on the device's thread, wall p99.9 81 %.) Within a level the strips take turns
    /// (a shared cursor, moved past each strip rendered), and a strip another worker renders
    /// is passed over. False when no strip has room or frames to render.
    ///
    /// A worker, while the window is open: no allocation, no locks.
    func renderAhead(thread t: Int) -> Bool {
        guard let snapshot = aheadSnapshot else { return false }
        return snapshot.graph._withUnsafeGuaranteedRef { g in
            let count = g.aheadCount
            guard count > 0 else { return false }
            var level = aheadLevel.load(ordering: .relaxed)
            while level <= g.aheadLevels {
                let start = Int(UInt(bitPattern: aheadCursor.load(ordering: .relaxed)) % UInt(count))
                // The lowest level a strip passed over would be rendered at: where to go on.
                var next = g.aheadLevels + 1
                for k in 0..<count {
                    var at = start + k
                    if at >= count { at -= count }
                    let did = g.aheadBuffers[at]._withUnsafeGuaranteedRef { ahead -> Bool in
                        // A hint read without the claim; the claim's holder checks again.
                        let held = ahead.heldFrames.load(ordering: .relaxed)
                        guard held < level * ahead.blockFrames else {
                            next = min(next, held / ahead.blockFrames + 1)
                            return false
                        }
                        guard ahead.claim.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged else { return false }
                        let did = ahead.frames < level * ahead.blockFrames
                            && g.stripTable[g.aheadStrips[at]]._withUnsafeGuaranteedRef { $0.renderAhead { snapshot.transport(atSeq: $0, graph: g) } }
                        ahead.claim.store(false, ordering: .releasing)
                        return did
                    }
                    if did {
                        aheadCursor.store(at + 1, ordering: .relaxed)
                        return true
                    }
                }
                // None below this level (or none that could be rendered): on to the lowest
                // one held, at once. (At 32-frame periods most windows find every strip a
                // block or less short of full: one pass, not one per level.)
                _ = aheadLevel.compareExchange(expected: level, desired: max(level + 1, next), ordering: .relaxed)
                level = aheadLevel.load(ordering: .relaxed)
            }
            return false
        }
    }
}

extension RenderCore {
    /// The strips rendered ahead whose chains ran in the period just rendered because the
    /// workers had not reached them (each strip's count is taken back to zero). For a
    /// benchmark's ``PeriodTimes``.
    ///
    /// Audio thread, at the end of a timed period: no allocation, no locks.
    func takeAheadMisses() -> Int {
        guard let g = graph else { return 0 }
        return g._withUnsafeGuaranteedRef { g in
            var total = 0
            for k in 0..<g.aheadCount {
                total += g.stripTable[g.aheadStrips[k]]._withUnsafeGuaranteedRef { $0.aheadMisses.exchange(0, ordering: .relaxed) }
            }
            return total
        }
    }
}
