/// A count-in that starts before the shared transport can (JACK's transport has no frame
/// below 0): the engine rolls from the count-in's start on its own clock while the shared
/// transport waits at the frame it joins at; a few cycles before the engine gets there it
/// asks the shared transport to roll, and answers JACK's slow sync so that the transport rolls
/// from that frame in the very cycle the engine reaches it. If it rolls later (another
/// program is slow to get ready), the engine waits there — takes armed, nothing kept yet —
/// and rolls on with it.
struct PreRoll {
    /// The frame the shared transport joins at (-1: no count-in of this kind runs).
    var joinFrame: Int64 = -1
    /// Whether the shared transport was asked to roll.
    var startAsked = false
    /// The device frame at which the engine reached the join frame and began to wait there
    /// (-1: it has not).
    var heldSinceDevice: Int64 = -1
    /// Cycles before the join that the shared transport is asked to roll: enough for it to
    /// reach "starting" (a cycle or two), far inside the servers' sync timeouts (10 s on
    /// jackd2 1.9.21, measured; 5 s on PipeWire).
    static let leadCycles: Int64 = 8
}

extension RenderCore {
    /// Starts a count-in from `frame` that the shared transport joins at `joinFrame`.
    ///
    /// Audio thread: no allocation, no locks.
    func beginPreRoll(from frame: Int64, joiningAt joinFrame: Int64) {
        jump(to: frame)
        preRoll = PreRoll(joinFrame: joinFrame, startAsked: false)
        if state == .stopped {
            state = .starting
            holdSince = deviceFrame
        }
    }

    /// Rolling reached the join frame: the engine waits there for the shared transport
    /// (which, on time, rolls from it in the next cycle). The takes stay armed — their record
    /// point is not passed yet — and the disk streams stay where they are, read ahead from
    /// here: rolling on needs no seek.
    ///
    /// Audio thread: no allocation, no locks.
    func holdForHost(reachedAtDevice reached: Int64) {
        preRoll.heldSinceDevice = reached
        position = preRoll.joinFrame
        state = .stopped
        shared.log.append(deviceFrame: deviceFrame, timelineFrame: position, speed: 0)
    }

    /// The shared transport while a count-in runs ahead of it: nil once the count-in has
    /// handed over (or given way to another program's move), and the engine follows the
    /// shared transport as usual from this cycle on.
    ///
    /// Audio thread: no allocation, no locks.
    func followDuringPreRoll(_ host: HostClockFrame, frameCount n: Int) -> HostFollowReply? {
        let join = preRoll.joinFrame
        let asked = shared.hostAsked
        let cycle = Int64(n)
        var reply = HostFollowReply(readyToRoll: false, stopHost: false)
        switch host.state {
        case .stopped where host.frame == join:
            // Waiting where it joins: asked to roll a few cycles ahead, or at once when the
            // engine is already there.
            if !preRoll.startAsked && (state == .stopped || position + PreRoll.leadCycles * cycle >= join) {
                preRoll.startAsked = true
                asked.start.store(true, ordering: .releasing)
                reply.startHost = true
            }
        case .starting where host.frame == join:
            // JACK rolls in the cycle after the one whose sync callback says ready, and that
            // callback comes before the next cycle's render: ready now means "there in two".
            reply.readyToRoll = state == .stopped ? position == join && streamsReadyNow(frameCount: n)
                                                  : position + 2 * cycle >= join && position + cycle < join
        case .rolling where host.frame == join && (position == join || state == .stopped):
            // Joined (or the engine is a little short of the frame: it jumps there, nothing
            // kept yet): the usual following takes it from here, as Tapedeck's own start.
            preRoll = PreRoll()
            return nil
        case .rolling where missedJoin(host, frameCount: n):
            // It rolled from the join as asked while an xrun kept this thread away (the
            // engine got there during the frames lost and waited): the take starts at the
            // join all the same, the frames the shared transport rolled through unseen are
            // silence in it, and the engine rolls on from where the transport is — an xrun,
            // not another program's move.
            let lostDevice = Int64((Double(host.frame - join) / speedFactor).rounded())
            // (No `takes.map { … }`: a generic call through a closure allocates in a debug build.)
            var point: Int64?
            if let t = takes { point = t._withUnsafeGuaranteedRef { $0.gate.recordPoint } }
            if let point, point == join { startTakes(recordPoint: point, playedAtDevice: deviceFrame - lostDevice) }
            jump(to: host.frame)
            preRoll = PreRoll()
            return nil
        default:
            // Another program moved or started the shared transport: it rules.
            preRoll = PreRoll()
            return nil
        }
        hostFollow.seen = true
        hostFollow.state = host.state
        hostFollow.expectedFrame = host.frame
        hostFollow.engineRolled = false
        asked.hostStarting.store(host.state == .starting, ordering: .relaxed)
        return reply
    }

    /// Whether the shared transport, rolling at `host.frame` past the join, rolled from the
    /// join on Tapedeck's own start while the engine waited there unseeing: it was asked to
    /// roll, the engine reached the join and waits, and the transport is no further on than
    /// the device time since then (two cycles more: JACK may roll the cycles before it
    /// hears the engine is there, and read a cycle ahead).
    ///
    /// Audio thread: arithmetic only.
    private func missedJoin(_ host: HostClockFrame, frameCount n: Int) -> Bool {
        let join = preRoll.joinFrame
        guard preRoll.startAsked, preRoll.heldSinceDevice >= 0, state == .stopped, position == join, host.frame > join else { return false }
        let waited = Double(deviceFrame - preRoll.heldSinceDevice) * speedFactor
        return Double(host.frame - join) <= waited + Double(host.aheadFrames) + Double(2 * n)
    }
}
