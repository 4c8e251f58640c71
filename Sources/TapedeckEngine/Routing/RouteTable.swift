import Synchronization
import TapedeckCore
import TapedeckDSP

/// A send's level and pan as atomics: the control thread stores, the audio thread glides to
/// them, so turning a send never needs a new graph.
final class SendControls: @unchecked Sendable {
    private let levelBits = Atomic<UInt32>(Float(1).bitPattern)
    private let panBits = Atomic<UInt32>(Float(0).bitPattern)
    /// A hand holds the send while its level lane is written in touch or latch: the level
    /// set here is heard, not the lane's.
    private let touchedFlag = Atomic<Bool>(false)

    /// Stores new values. Control thread.
    func set(levelDecibels: Double, pan: Double) {
        let linear = Float(Decibels.toLinear(levelDecibels))
        levelBits.store((linear.isFinite ? max(linear, 0) : 0).bitPattern, ordering: .relaxed)
        panBits.store(Float(pan.isFinite ? min(max(pan, -1), 1) : 0).bitPattern, ordering: .relaxed)
    }

    /// Audio thread: a relaxed load.
    @inline(__always) var level: Float { Float(bitPattern: levelBits.load(ordering: .relaxed)) }
    /// Audio thread: a relaxed load.
    @inline(__always) var pan: Float { Float(bitPattern: panBits.load(ordering: .relaxed)) }

    /// Stores a new level, the pan as it was (a controller bound to the send's level).
    ///
    /// Audio thread (or control): an atomic store.
    @inline(__always)
    func setLevel(decibels: Double) {
        let linear = Float(Decibels.toLinear(decibels))
        levelBits.store((linear.isFinite ? max(linear, 0) : 0).bitPattern, ordering: .relaxed)
    }

    /// Level and pan as `other` holds them now. Control thread.
    func copy(from other: SendControls) {
        levelBits.store(other.levelBits.load(ordering: .relaxed), ordering: .relaxed)
        panBits.store(other.panBits.load(ordering: .relaxed), ordering: .relaxed)
    }

    /// Stores a new pan, the level as it is. Control thread: an atomic store.
    func setPan(_ pan: Double) {
        panBits.store(Float(pan.isFinite ? min(max(pan, -1), 1) : 0).bitPattern, ordering: .relaxed)
    }

    /// A hand takes hold of the send's level, or lets go. Control thread (or the audio
    /// thread, for a bound controller's move: an atomic store).
    func touch() { touchedFlag.store(true, ordering: .relaxed) }
    func release() { touchedFlag.store(false, ordering: .relaxed) }
    /// Audio thread: a relaxed load.
    @inline(__always) var isTouched: Bool { touchedFlag.load(ordering: .relaxed) }
}

/// What a path keeps from one graph to the next: the gains it glides through, its
/// compensating delay (holding what is on its way) and, for a send, its level and pan. Kept
/// by the next graph when the same strip feeds the same place the same way with the same
/// delay, so a chain edit elsewhere is not heard on this path.
final class PathState: @unchecked Sendable {
    /// Frames this path is held back (nil: none).
    let delay: DelayLine?
    let controls = SendControls()
    /// The send's gains (left, right) as they glide. Audio thread.
    var glide = GainGlide()
    /// The pan and the pan law's gains last worked out for it (for a source of
    /// ``RoutePath/sourceChannels``). Audio thread.
    var panGains: (pan: Float, left: Float, right: Float) = (.nan, 0, 0)
    /// Whether the last block heard the hand rather than the level lane, and the frames left
    /// of the glide back to the lane once it let go. Audio thread.
    var handHeld = false
    var returnFrames = 0
    /// The send's gains (left, right) where the hand let go.
    var handGains = SIMD2<Float>(0, 0)

    init(delay: DelayLine?) { self.delay = delay }
}

/// One path from a strip into a summing point: a send, or the strip's output.
struct RoutePath {
    enum Kind: UInt8 {
        case preFaderSend
        case postFaderSend
        case output
    }

    /// ``target`` of a path into the master bus.
    static let master = -1
    /// ``target`` of a path to device outputs.
    static let device = -2

    var kind: Kind
    /// The bus's strip index, ``master`` or ``device``.
    var target: Int
    /// Device channels, 0-based (``deviceRight`` is −1 for one output).
    var deviceLeft: Int
    var deviceRight: Int
    /// Channels where it lands (1 or 2) and where it comes from.
    var targetChannels: Int
    var sourceChannels: Int
    /// Frames it is held back to arrive with the slowest path into the same place.
    var delayFrames: Int
    let state: Unmanaged<PathState>
    /// For a send, its place among the strip's sends in the session (−1: the output).
    var sendIndex = -1
}

/// The routing of one graph, as the audio thread walks it: the strips in an order where
/// every strip comes before the buses it feeds, each strip's paths (pre-fader sends,
/// post-fader sends, then its output), solo followed along the routing, and the delays that
/// line every path up at every summing point (delay compensation: see ``init(spec:strips:masterLatencyFrames:maxFrames:previous:)``).
///
/// Built on the control thread with its graph; read (and its scratch flags written) by the
/// audio thread.
final class RouteTable: @unchecked Sendable {
    let stripCount: Int
    /// Strip indices in render order.
    let order: UnsafeMutablePointer<Int>
    /// For strip i, its paths are `paths[first[i] ..< first[i] + pathCount[i]]`, the output last.
    let first: UnsafeMutablePointer<Int>
    let pathCount: UnsafeMutablePointer<Int>
    let paths: UnsafeMutablePointer<RoutePath>
    let totalPaths: Int
    let isBus: UnsafeMutablePointer<Bool>
    let soloSafe: UnsafeMutablePointer<Bool>
    /// This cycle's audibility (mute and solo along the routing). Audio thread.
    let audible: UnsafeMutablePointer<Bool>
    /// Per cycle: fed by a soloed strip, feeding one, soloed (``markSoloPaths(_:)``). Audio thread.
    let fedFlags: UnsafeMutablePointer<Bool>
    let feedsFlags: UnsafeMutablePointer<Bool>
    let soloFlags: UnsafeMutablePointer<Bool>
    /// Whether any path goes to device outputs directly.
    let hasDeviceOutputs: Bool
    /// Frames each strip's output lags the timeline (its chain's and everything before it);
    /// a track's own chain is made up for by reading ahead, so a track's is 0.
    let outputDelayFrames: [Int]
    /// Where the paths into the master line up.
    let masterArrivalFrames: Int
    /// Frames the master's output (and every device output) lags the timeline: the master
    /// chain's latency and the slowest path into the master. Takes and MIDI are placed by it,
    /// and an export drops that many frames from its start.
    let outputLatencyFrames: Int
    /// The numbers behind the delays.
    let compensation: DelayCompensation
    /// Each strip's sends' states in send order (for ``Engine/setSend``).
    let sendStates: [[PathState]]
    private let states: [PathState]
    /// Keys of ``states``, for the next graph to find them.
    let stateKeys: [PathKey]
    /// Each path's gains this block, worked out by its strip's walk and read where it lands
    /// (at once on one thread; later, by its destination, on several). Audio thread and workers.
    let gains: UnsafeMutablePointer<PathGains>
    /// For each strip with pre-fader sends, its pre-fader signal this block (its own
    /// channels, kept for the sends that land after its fader ran); nil for the others.
    let preFader: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<Float>>?>

    /// What identifies a path across graphs.
    /// A send by what it joins: its track's strip and its bus's strip.
    struct SendKey: Hashable {
        var source: ObjectIdentifier
        var bus: ObjectIdentifier
    }

    struct PathKey: Hashable {
        var source: ObjectIdentifier
        var target: Int
        var targetStrip: ObjectIdentifier?
        var kind: UInt8
        var index: Int
        var delayFrames: Int
        var channels: Int
    }

    /// The routing of `spec` over `strips` (one per spec track, with its chain's latency).
    /// Delay compensation: a track's output lags by nothing (its chain is made up for by
    /// reading ahead); a bus's input lines up with the slowest path into it and its output
    /// lags by that and its chain; the master lines up every path into it, and device outputs
    /// line up with the master's output, each quicker path held back by the difference.
    /// `predecessors[i]`: the strip of the previous graph that strip `i` plays on for (itself
    /// when kept; nil: new to its track). Its sends keep the levels they play (a
    /// controller's move included) rather than the spec's.
    /// Control thread.
    init(spec: GraphSpec, strips: [PlaybackStrip], predecessors: [ObjectIdentifier?] = [], masterLatencyFrames: Int, maxFrames: Int, previous: RouteTable?) {
        let n = spec.tracks.count
        stripCount = n
        let tracks = spec.tracks
        let ordered = DelayCompensation.renderOrder(tracks)
        let compensation = DelayCompensation(tracks: tracks, chainLatencyFrames: strips.map(\.latencyFrames),
                                             masterLatencyFrames: masterLatencyFrames, order: ordered)
        let outDelay = compensation.outputDelayFrames
        let arrival = compensation.arrivalFrames
        let master = compensation.masterArrivalFrames
        masterArrivalFrames = master
        outputLatencyFrames = compensation.outputLatencyFrames
        outputDelayFrames = outDelay
        self.compensation = compensation

        // Paths, each strip's pre-fader sends, post-fader sends, then output.
        var old: [PathKey: PathState] = [:]
        // Each send's controls by its source strip and bus strip (not by place: places move
        // when a track or a send is added before it).
        var oldSends: [SendKey: SendControls] = [:]
        if let previous {
            for (key, state) in zip(previous.stateKeys, previous.states) {
                old[key] = state
                if let bus = key.targetStrip, key.kind == RoutePath.Kind.preFaderSend.rawValue || key.kind == RoutePath.Kind.postFaderSend.rawValue {
                    oldSends[SendKey(source: key.source, bus: bus)] = oldSends[SendKey(source: key.source, bus: bus)] ?? state.controls
                }
            }
        }
        var list: [RoutePath] = []
        var states: [PathState] = []
        var keys: [PathKey] = []
        var sendStates: [[PathState]] = Array(repeating: [], count: n)
        var firsts = [Int](repeating: 0, count: n)
        var counts = [Int](repeating: 0, count: n)
        var anyDevice = false
        for i in 0..<n {
            let source = strips[i]
            let width = source.channelCount
            var isNew = false
            func state(kind: RoutePath.Kind, target: Int, index: Int, delay: Int, channels: Int) -> PathState {
                let key = PathKey(source: ObjectIdentifier(source), target: target,
                                  targetStrip: target >= 0 ? ObjectIdentifier(strips[target]) : nil,
                                  kind: kind.rawValue, index: index, delayFrames: delay, channels: channels)
                let kept = old.removeValue(forKey: key)
                let s = kept ?? PathState(delay: delay > 0 ? DelayLine(delayFrames: delay, channelCount: channels, maxFrames: maxFrames) : nil)
                isNew = kept == nil
                states.append(s)
                keys.append(key)
                return s
            }
            firsts[i] = list.count
            let sends = tracks[i].sends.enumerated().filter { tracks.indices.contains($0.element.target) }
            var perSend = [PathState?](repeating: nil, count: tracks[i].sends.count)
            for pre in [true, false] {
                for (index, send) in sends where send.preFader == pre {
                    let t = send.target
                    let channels = strips[t].channelCount
                    let delay = arrival[t] - outDelay[i]
                    let kind: RoutePath.Kind = pre ? .preFaderSend : .postFaderSend
                    let s = state(kind: kind, target: t, index: index, delay: delay, channels: channels)
                    // A send of a strip kept for the same track keeps its level as it plays
                    // (a controller's move included, see Graph.build), on a new path too.
                    let was = predecessors.indices.contains(i) ? predecessors[i] : nil
                    if was == nil {
                        s.controls.set(levelDecibels: send.levelDecibels, pan: send.pan)
                    } else if isNew, let was {
                        let bus = (predecessors.indices.contains(t) ? predecessors[t] : nil) ?? ObjectIdentifier(strips[t])
                        if let before = oldSends[SendKey(source: was, bus: bus)] {
                            s.controls.copy(from: before)
                        } else {
                            s.controls.set(levelDecibels: send.levelDecibels, pan: send.pan)
                        }
                    }
                    perSend[index] = s
                    list.append(RoutePath(kind: kind, target: t, deviceLeft: -1, deviceRight: -1, targetChannels: channels,
                                          sourceChannels: width, delayFrames: delay, state: Unmanaged.passUnretained(s),
                                          sendIndex: index))
                }
            }
            sendStates[i] = perSend.map { $0 ?? PathState(delay: nil) }
            // The output.
            var path: RoutePath
            switch tracks[i].output {
            case .strip(let b) where tracks.indices.contains(b):
                let delay = arrival[b] - outDelay[i]
                let s = state(kind: .output, target: b, index: 0, delay: delay, channels: strips[b].channelCount)
                path = RoutePath(kind: .output, target: b, deviceLeft: -1, deviceRight: -1, targetChannels: strips[b].channelCount,
                                 sourceChannels: width, delayFrames: delay, state: Unmanaged.passUnretained(s))
            case .device(let channels) where !channels.isEmpty:
                anyDevice = true
                let left = channels[0] - 1, right = channels.count > 1 ? channels[1] - 1 : -1
                let targetChannels = right >= 0 ? 2 : 1
                let delay = outputLatencyFrames - outDelay[i]
                let s = state(kind: .output, target: RoutePath.device, index: left * 1000 + right, delay: delay, channels: targetChannels)
                path = RoutePath(kind: .output, target: RoutePath.device, deviceLeft: left, deviceRight: right,
                                 targetChannels: targetChannels, sourceChannels: width, delayFrames: delay,
                                 state: Unmanaged.passUnretained(s))
            default:
                let delay = master - outDelay[i]
                let s = state(kind: .output, target: RoutePath.master, index: 0, delay: delay, channels: 2)
                path = RoutePath(kind: .output, target: RoutePath.master, deviceLeft: -1, deviceRight: -1, targetChannels: 2,
                                 sourceChannels: width, delayFrames: delay, state: Unmanaged.passUnretained(s))
            }
            list.append(path)
            counts[i] = list.count - firsts[i]
        }
        hasDeviceOutputs = anyDevice
        self.states = states
        stateKeys = keys
        self.sendStates = sendStates
        totalPaths = list.count
        paths = .allocate(capacity: max(list.count, 1))
        paths.initialize(from: list, count: list.count)
        order = .allocate(capacity: max(n, 1))
        order.initialize(from: ordered, count: n)
        first = .allocate(capacity: max(n, 1))
        first.initialize(from: firsts, count: n)
        pathCount = .allocate(capacity: max(n, 1))
        pathCount.initialize(from: counts, count: n)
        isBus = .allocate(capacity: max(n, 1))
        isBus.initialize(repeating: false, count: max(n, 1))
        soloSafe = .allocate(capacity: max(n, 1))
        soloSafe.initialize(repeating: false, count: max(n, 1))
        for i in 0..<n {
            isBus[i] = tracks[i].isBus
            soloSafe[i] = tracks[i].soloSafe
        }
        audible = .allocate(capacity: max(n, 1))
        audible.initialize(repeating: true, count: max(n, 1))
        fedFlags = .allocate(capacity: max(n, 1))
        fedFlags.initialize(repeating: false, count: max(n, 1))
        feedsFlags = .allocate(capacity: max(n, 1))
        feedsFlags.initialize(repeating: false, count: max(n, 1))
        soloFlags = .allocate(capacity: max(n, 1))
        soloFlags.initialize(repeating: false, count: max(n, 1))
        gains = .allocate(capacity: max(list.count, 1))
        gains.initialize(repeating: .glide((0, 0, 0, 0), 0), count: max(list.count, 1))
        preFader = .allocate(capacity: max(n, 1))
        preFader.initialize(repeating: nil, count: max(n, 1))
        for i in 0..<n where list[firsts[i]..<(firsts[i] + counts[i])].contains(where: { $0.kind == .preFaderSend }) {
            let channels = strips[i].channelCount
            let table = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: channels)
            for c in 0..<channels {
                (table + c).initialize(to: .allocate(capacity: maxFrames))
                table[c].initialize(repeating: 0, count: maxFrames)
            }
            preFader[i] = table
            preFaderChannels[i] = channels
        }
    }

    /// Channels of each ``preFader`` table (to free them).
    private var preFaderChannels: [Int: Int] = [:]

    deinit {
        paths.deinitialize(count: totalPaths)
        paths.deallocate()
        order.deallocate()
        first.deallocate()
        pathCount.deallocate()
        isBus.deallocate()
        soloSafe.deallocate()
        audible.deallocate()
        fedFlags.deallocate()
        feedsFlags.deallocate()
        soloFlags.deallocate()
        gains.deallocate()
        for (i, channels) in preFaderChannels {
            guard let table = preFader[i] else { continue }
            for c in 0..<channels { table[c].deallocate() }
            table.deallocate()
        }
        preFader.deallocate()
    }
}
