import Synchronization
import TapedeckDSP

/// Tapedeck's own requests to a shared transport, so that the engine tells them from other
/// programs' when they come back. The control thread sets them, the audio thread takes them.
final class HostRequests: @unchecked Sendable {
    /// A start was asked for.
    let start = Atomic<Bool>(false)
    /// A stop was asked for.
    let stop = Atomic<Bool>(false)
    /// The frame a locate asked for (-1: none).
    let locate = Atomic<Int64>(-1)
    /// Published by the audio thread: the shared transport is starting (the engine waits to
    /// roll with it), so the engine reports itself starting rather than stopped.
    let hostStarting = Atomic<Bool>(false)
}

/// What the engine remembers of the shared transport between cycles. Audio thread only.
struct HostFollow {
    /// Whether a cycle has seen it yet.
    var seen = false
    /// Its state last cycle.
    var state = HostClockFrame.State.stopped
    /// Where it will be this cycle if nobody moves it.
    var expectedFrame: Int64 = 0
    /// Whether the engine rolled at the end of the last cycle.
    var engineRolled = false
    /// Musical time another program publishes (nil: none, or Tapedeck's own).
    var music: HostClockFrame?
    /// Tapedeck's own locate on its way, and the device frame it was first seen at.
    var pendingLocate: Int64 = -1
    var pendingSince: Int64 = 0
    /// The last own locate that arrived (to name who moved the playhead).
    var lastOwnLocate: Int64 = -1
    /// The device frame Tapedeck's own start was first seen waiting at (-1: none waits).
    var startAskedSince: Int64 = -1
    /// The shared transport was moved while rolling: it rolls on once ready, and that is
    /// part of the move, not a new start.
    var resumes = false
    /// Cycles left in which a standing transport that Tapedeck just stopped may still settle
    /// back: PipeWire's JACK stops the transport a cycle (or, after xruns, the frames it did
    /// not count) behind the playhead. That is Tapedeck's stop, not another program's locate.
    var stopSettling = 0
}

/// Following a shared transport (JACK's) on the audio thread, in the cycle it moves: no
/// polling delay, and the engine rolls from exactly the frame JACK rolls from, so a take
/// recorded against other JACK programs lands where they played. Tapedeck's own play, stop
/// and locate go to the shared transport (see ``Engine/play()``) and come back this way too,
/// so there is one clock and nothing echoes: the engine acts on what changed in the shared
/// transport (it started, stopped, or jumped), never on a difference from its own playhead,
/// so its own loop and speed stay its own.
extension RenderCore: HostClockClient {
    /// Audio thread: no allocation, no locks.
    func followHost(_ reading: HostClockFrame, frameCount n: Int) -> HostFollowReply {
        let asked = shared.hostAsked
        let was = hostFollow.state
        let first = !hostFollow.seen
        var host = reading
        // A rolling transport read ahead by what the device holds (see
        // ``HostClockFrame/aheadFrames``) is where the engine expects it, one cycle early.
        if host.aheadFrames > 0 && !first && was == .rolling && host.state == .rolling
            && host.frame == hostFollow.expectedFrame + host.aheadFrames {
            host.frame = hostFollow.expectedFrame
        }
        let jumped = !first && host.frame != hostFollow.expectedFrame
        // Where a standing transport stood last cycle: a start seen a cycle late is a roll from there.
        let stoodAt = hostFollow.expectedFrame
        hostFollow.seen = true
        hostFollow.state = host.state
        hostFollow.expectedFrame = host.state == .rolling ? host.frame + Int64(n) : host.frame
        hostFollow.music = host.hasMusicalTime ? host : nil
        // Tapedeck's own locate on its way: until the shared transport gets there, a frame
        // elsewhere is from before it and is not followed.
        let pending = ownLocate(asked, arrivedAt: host.frame)
        if preRoll.joinFrame >= 0 && (pending < 0 || pending == preRoll.joinFrame) {
            if pending >= 0 && host.frame != pending {
                // The join frame is on its way to the shared transport: the count-in rolls on.
                hostFollow.seen = true
                hostFollow.state = host.state
                hostFollow.expectedFrame = host.frame
                return HostFollowReply(readyToRoll: false, stopHost: false)
            }
            if let reply = followDuringPreRoll(host, frameCount: n) { return reply }
        }
        var reply = HostFollowReply(readyToRoll: true, stopHost: false)
        if pending >= 0 && host.frame != pending {
            // What the shared transport does before it gets there is not followed.
            reply.readyToRoll = false
            expireOwnStart(asked)
            return reply
        }
        let started = host.state == .rolling && (first || was != .rolling)
        let moves = position != host.frame && (first || jumped || started || host.state == .starting)
        switch host.state {
        case .rolling:
            if started {
                let own = asked.start.exchange(false, ordering: .acquiringAndReleasing)
                let resumes = hostFollow.resumes && !own
                hostFollow.resumes = false
                // A stop and a start in one JACK cycle leave only the start: the stop is done with.
                asked.stop.store(false, ordering: .releasing)
                // JACK2 changes the state as soon as the server's cycle ends, and its frame only at
                // the next cycle's start. A cycle that reads the transport before that end sees it
                // starting, then the next one sees it rolling a period on: it rolled from where it
                // stood, and following it there is part of the start, not a move.
                let seenLate = !first && was != .rolling && position == stoodAt
                    && host.frame > stoodAt && host.frame - stoodAt <= Int64(2 * n)
                if moves { jumpForHost(to: host.frame, quiet: seenLate) }
                // Started by another program: it decides when to stop, not the end of Tapedeck's material.
                if !own && !resumes { endFrame = .max }
                if state != .rolling {
                    state = .rolling
                    shared.log.append(deviceFrame: deviceFrame, timelineFrame: position, speed: speedFactor)
                    let from = seenLate ? stoodAt : position
                    if !resumes { shared.events.push(EngineEvent(kind: .hostStarted, frame: from, frames: 0, external: !own)) }
                }
            } else if moves {
                // Moved while rolling, with no slow-sync client to hold it: follow at once.
                jumpForHost(to: host.frame)
            }
        case .starting:
            if state != .stopped {
                stopRolling()
                hostFollow.resumes = true
            }
            if moves { jumpForHost(to: host.frame) }
            reply.readyToRoll = position == host.frame && streamsReadyNow(frameCount: n)
        case .stopped:
            hostFollow.resumes = false
            let stopsNow = !first && was != .stopped
            var own = false
            if stopsNow {
                own = asked.stop.exchange(false, ordering: .acquiringAndReleasing)
                if state != .stopped { stopRolling() }
                shared.events.push(EngineEvent(kind: .hostStopped, frame: position, frames: 0, external: !own))
                hostFollow.stopSettling = own ? 3 : 0
            }
            // Tapedeck's own stop settling where the shared transport stops (behind the
            // playhead by what it did not count of the last cycles) is followed, as the stop.
            let settling = hostFollow.stopSettling > 0 && host.frame <= position && position - host.frame <= Int64(sampleRate / 2)
            if !stopsNow { hostFollow.stopSettling = max(0, hostFollow.stopSettling - 1) }
            if moves { jumpForHost(to: host.frame, quiet: first || settling) }
            reply.readyToRoll = position == host.frame && streamsReadyNow(frameCount: n)
        }
        // The engine stopped by itself (its end frame, a punch's end) while the shared
        // transport rolls on: the roll was Tapedeck's, so it stops it.
        if hostFollow.engineRolled && state == .stopped && host.state == .rolling
            && !asked.stop.load(ordering: .acquiring) {
            asked.stop.store(true, ordering: .releasing)
            reply.stopHost = true
        }
        hostFollow.engineRolled = state == .rolling
        hostFollow.lastOwnLocate = -1
        asked.hostStarting.store(host.state == .starting, ordering: .relaxed)
        expireOwnStart(asked)
        return reply
    }

    /// The frame of Tapedeck's own locate still on its way to the shared transport (-1:
    /// none): taken back once the transport is there, or after half a second (something else
    /// moved it meanwhile).
    ///
    /// Audio thread: no allocation, no locks.
    private func ownLocate(_ asked: HostRequests, arrivedAt frame: Int64) -> Int64 {
        let requested = asked.locate.load(ordering: .acquiring)
        if requested != hostFollow.pendingLocate {
            hostFollow.pendingLocate = requested
            hostFollow.pendingSince = deviceFrame
        }
        guard requested >= 0 else { return -1 }
        if frame == requested || deviceFrame - hostFollow.pendingSince > Int64(sampleRate / 2) {
            _ = asked.locate.compareExchange(expected: requested, desired: -1, ordering: .acquiringAndReleasing)
            hostFollow.pendingLocate = -1
            if frame == requested { hostFollow.lastOwnLocate = frame }
            return -1
        }
        return requested
    }

    /// Tapedeck's own start shows as "starting" until the shared transport rolls; one that
    /// never does (another program stopped it first, a slow-sync client never got ready) is
    /// let go after five seconds — longer than JACK's sync timeout.
    ///
    /// Audio thread: no allocation, no locks.
    private func expireOwnStart(_ asked: HostRequests) {
        guard asked.start.load(ordering: .acquiring) else {
            hostFollow.startAskedSince = -1
            return
        }
        if hostFollow.startAskedSince < 0 {
            hostFollow.startAskedSince = deviceFrame
        } else if deviceFrame - hostFollow.startAskedSince > Int64(sampleRate) * 5 {
            asked.start.store(false, ordering: .releasing)
            hostFollow.startAskedSince = -1
        }
    }

    /// Follows a jump of the shared transport: the playhead moves there (the disk reads from
    /// there), and a take that was keeping frames ends — a take is never torn in two.
    ///
    /// Audio thread: no allocation, no locks.
    private func jumpForHost(to frame: Int64, quiet: Bool = false) {
        if let t = takes, t._withUnsafeGuaranteedRef({ $0.startDevice != .max }) { endTakes() }
        jump(to: frame)
        let own = hostFollow.lastOwnLocate == frame
        hostFollow.lastOwnLocate = -1
        if !quiet { shared.events.push(EngineEvent(kind: .hostLocated, frame: frame, frames: 0, external: !own)) }
    }

    /// Moves the playhead to `frame` and sends every disk stream there (rolling or standing).
    ///
    /// Audio thread: no allocation, no locks.
    func jump(to frame: Int64) {
        if let next = pendingRoute { route = next; pendingRoute = nil }
        position = frame
        fraction = 0
        if let graphRef = graph { graphRef._withUnsafeGuaranteedRef { flushRouting($0) } }
        seekAll(seqStart: seq, timeline: position, route: route, continuesOld: false)
        shared.log.append(deviceFrame: deviceFrame, timelineFrame: position, speed: state == .rolling ? speedFactor : 0)
    }

    /// Whether every track's disk stream holds this cycle's frames.
    ///
    /// Audio thread: no allocation, no locks.
    func streamsReady(_ g: Graph, frameCount n: Int) -> Bool {
        for i in 0..<g.trackCount {
            let ready = g.stripTable[i]._withUnsafeGuaranteedRef { strip in
                strip.voice.hasData(atSeq: seq + Int64(strip.latencyFrames), frameCount: n)
            }
            if !ready { return false }
        }
        return true
    }

    /// Audio thread: no allocation, no locks.
    func streamsReadyNow(frameCount n: Int) -> Bool {
        guard let graphRef = graph else { return true }
        return graphRef._withUnsafeGuaranteedRef { streamsReady($0, frameCount: n) }
    }

    /// The host clock for nodes while another program publishes musical time: its tempo,
    /// meter and beat position.
    ///
    /// Audio thread: arithmetic only.
    func hostTransportInfo() -> TransportInfo? {
        guard let music = hostFollow.music else { return nil }
        return TransportInfo(tempoBPM: music.tempoBPM, beatPosition: music.beatPosition, beatsPerBar: music.beatsPerBar,
                             beatUnit: music.beatUnit, sampleRate: Double(sampleRate), timelineFrame: position,
                             isPlaying: state == .rolling, isRecording: takes != nil, isCycling: route.loops)
    }
}
