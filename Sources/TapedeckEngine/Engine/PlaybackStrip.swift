import Synchronization
import TapedeckCore
import TapedeckDSP

/// A track's mixer settings as atomics: the control thread stores, the audio thread reads them
/// every period. So a fader move, a mute or a solo can never be lost in a full command queue,
/// and never needs a new graph.
final class MixerControls: @unchecked Sendable {
    private let gainBits = Atomic<UInt32>(Float(1).bitPattern)
    private let panBits = Atomic<UInt32>(Float(0).bitPattern)
    private let flags = Atomic<UInt8>(0)

    /// Stores new settings. Control thread.
    func set(gainDecibels: Double, pan: Double, mute: Bool, solo: Bool) {
        let linear = gainDecibels.isFinite || gainDecibels < 0 ? Float(Decibels.toLinear(gainDecibels)) : 1
        gainBits.store((linear.isFinite ? max(linear, 0) : 0).bitPattern, ordering: .relaxed)
        panBits.store(Float(pan.isFinite ? min(max(pan, -1), 1) : 0).bitPattern, ordering: .relaxed)
        flags.store((mute ? 1 : 0) | (solo ? 2 : 0), ordering: .relaxed)
    }

    /// A controller moved the fader (MIDI learn), or a key did (``Engine/set(_:)``). Audio
    /// thread (or control): one atomic store.
    @inline(__always) func setGain(decibels: Double) {
        // As ``set(gainDecibels:pan:mute:solo:)`` reads it, so a key and a controller agree.
        let linear = decibels.isFinite || decibels < 0 ? Float(Decibels.toLinear(decibels)) : 1
        gainBits.store((linear.isFinite ? max(linear, 0) : 0).bitPattern, ordering: .relaxed)
    }
    /// A controller or a key moved the pan. Audio thread (or control): one atomic store.
    @inline(__always) func setPan(_ pan: Double) {
        panBits.store(Float(pan.isFinite ? min(max(pan, -1), 1) : 0).bitPattern, ordering: .relaxed)
    }
    /// A controller or a key switched the mute. Audio thread (or control): one atomic read-modify-write.
    @inline(__always) func setMute(_ mute: Bool) {
        if mute { flags.bitwiseOr(1, ordering: .relaxed) } else { flags.bitwiseAnd(~1, ordering: .relaxed) }
    }
    /// Solo on or off, the mute as it is. Control thread: one atomic read-modify-write.
    func setSolo(_ solo: Bool) {
        if solo { flags.bitwiseOr(2, ordering: .relaxed) } else { flags.bitwiseAnd(~2, ordering: .relaxed) }
    }
    /// Every value as `other` holds it now (a strip that takes over from `other` for the same
    /// track: a controller's move not yet seen by the control thread is kept). Control thread.
    func copy(from other: MixerControls) {
        gainBits.store(other.gainBits.load(ordering: .relaxed), ordering: .relaxed)
        panBits.store(other.panBits.load(ordering: .relaxed), ordering: .relaxed)
        flags.store(other.flags.load(ordering: .relaxed), ordering: .relaxed)
    }

    /// Audio thread: relaxed loads.
    @inline(__always) var gain: Float { Float(bitPattern: gainBits.load(ordering: .relaxed)) }
    /// Audio thread: relaxed loads.
    @inline(__always) var pan: Float { Float(bitPattern: panBits.load(ordering: .relaxed)) }
    /// Audio thread: relaxed loads.
    @inline(__always) var mute: Bool { flags.load(ordering: .relaxed) & 1 != 0 }
    /// Audio thread: relaxed loads.
    @inline(__always) var solo: Bool { flags.load(ordering: .relaxed) & 2 != 0 }

    /// Which of the strip's lanes a hand holds (``Touch``): while touched, the control's own
    /// value is heard, not the lane's (automation being written in touch or latch).
    private let touchedBits = Atomic<UInt8>(0)
    /// A lane of the strip's own controls.
    struct Touch: OptionSet {
        let rawValue: UInt8
        static let gain = Touch(rawValue: 1)
        static let pan = Touch(rawValue: 2)
        static let mute = Touch(rawValue: 4)
    }
    /// A controller (or the control thread, for a key) took hold of `touch`. Any thread, the
    /// audio thread included: one atomic read-modify-write.
    @inline(__always) func touch(_ touch: Touch) { touchedBits.bitwiseOr(touch.rawValue, ordering: .relaxed) }
    /// The hand let go: the lane plays again. Control thread.
    func release(_ touch: Touch) { touchedBits.bitwiseAnd(~touch.rawValue, ordering: .relaxed) }
    /// What is held now. Audio thread: one relaxed load.
    @inline(__always) var touched: Touch { Touch(rawValue: touchedBits.load(ordering: .relaxed)) }
}

/// One track's playback path inside a graph: its voice (disk → ring), its playback chain, its mixer controls and its post-fader meter.
///
/// A strip is reused by the next graph when the track's material and chain did not change
/// (its chain keeps its state, nothing is heard to change). When they did, the new strip
/// starts with the old one as its *fallback*: the old material keeps playing until the new
/// voice has its first frames, then the new strip takes over at a period boundary.
final class PlaybackStrip: @unchecked Sendable {
    let voice: TrackVoice
    let chain: ChainInstance?
    /// The chain unretained, for the audio thread (``chain`` holds it): taking a class
    /// reference out of a property retains and releases it, every strip every period.
    private let chainRef: Unmanaged<ChainInstance>?
    /// The chain as parsed (after any retuning), to compare with the next spec. Control thread.
    var chainSpec: Chain
    let channelCount: Int
    /// The strip's pre-fader signal for this period, then (in place) post-fader.
    let buffers: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    let controls = MixerControls()
    /// The track's MIDI: its regions' playlist, the notes it holds, this period's events.
    let midi: StripMIDI
    let meter: LevelMeter
    /// Frames the chain delays the track by; the voice reads that far ahead to make up for it.
    let latencyFrames: Int
    /// Most frames one render takes: a period, or more for the mix's time-pitch path.
    private let maxFrames: Int
    /// What played before this strip, kept alive until the hand-over (control thread drops it after).
    private(set) var fallback: PlaybackStrip?
    private let fallbackRef: Unmanaged<PlaybackStrip>?
    /// Set (releasing) by the audio thread once this strip plays its own material.
    let handedOver = Atomic<Bool>(false)
    /// Underrun frames so far (the audio thread adds).
    let underrunFrames = Atomic<Int64>(0)
    /// Rolling periods in which the period itself ran this strip's chain because the workers
    /// had not rendered its frames ahead (counted only for a strip rendered ahead). Written
    /// in the period, read by a benchmark (``PeriodTimes``).
    let aheadMisses = Atomic<Int>(0)
    /// The last period (``RenderCore/periodNumber``) whose node of this strip is done, so its
    /// final paths may be landed. Its node's thread stores; the lander loads.
    let finishedPeriod = Atomic<Int>(-1)

    /// This graph's automation of the strip (set by the audio thread as the graph is
    /// installed). Audio thread.
    var automation: Unmanaged<StripAutomation>?
    /// Pointers into ``buffers`` at a piece's offset, and a piece's MIDI events, for a chain
    /// processed in pieces (automated parameters).
    private let pieceTable: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    private let pieceEvents: UnsafeMutablePointer<MIDIEvent>
    private let pieceEventCapacity = 1024
    /// A bus: no material, its buffers are where what is routed to it is summed.
    let isBus: Bool
    /// The fader (x) and pan gains (y left, z right) as they glide. Audio thread.
    var mixGlide = GainGlide()
    /// Whether a hand held the fader's lane last block (a change glides between the lane's
    /// value and the hand's). Audio thread.
    var gainWasTouched = false
    /// The pan the pan law's gains were last worked out for, and those gains. Audio thread.
    var panGains: (pan: Float, left: Float, right: Float) = (.nan, 0, 0)
    /// On several threads: the frames this period's render missed, told by the device's
    /// thread once every strip is done. Its node's thread, then the audio thread.
    var periodMissing = 0
    /// Its playback rendered ahead by the workers (nil: never, as for a bus or a track with
    /// no material); shared with a successor, which plays what it holds first.
    let ahead: AheadBuffer?
    /// Pointers into ``buffers`` past what came from ``ahead``, for the rest of a period.
    private let tailTable: UnsafeMutablePointer<UnsafeMutablePointer<Float>>

    /// A strip whose chain an edit replaced while its material stayed: it plays on through the
    /// same voice (no disk read, no hand-over), meter and MIDI; at the swap the audio thread
    /// takes over its fader and pan glide (``takeOverFromPredecessor()``). Unretained: the
    /// graph holding it lives until this strip's graph is installed.
    private var predecessor: Unmanaged<PlaybackStrip>?

    /// The format a strip's chain is prepared for (``NodeStock`` makes nodes for it ahead).
    static func nodeFormat(sampleRate: Int, channelCount: Int, isRealtime: Bool) -> NodeFormat {
        NodeFormat(sampleRate: Double(sampleRate), channelCount: channelCount, isRealtime: isRealtime)
    }

    /// Builds the strip (instantiating and preparing its chain unless `instance` is given,
    /// taking what new nodes `stock` holds).
    /// With `predecessor`, the strip succeeds it: its voice, meter and MIDI are shared and it
    /// needs no fallback. Control thread.
    init(voice: TrackVoice, chain spec: Chain, reusing instance: ChainInstance?, sampleRate: Int, maxFrames: Int,
         meterWindowFrames: Int, fallback: PlaybackStrip?, stateFolder: String? = nil, files: (any NodeFiles)? = nil,
         isRealtime: Bool = true, isBus: Bool = false, predecessor: PlaybackStrip? = nil, ahead: Graph.Ahead = .none,
         stock: NodeStock? = nil) {
        self.voice = voice
        midi = predecessor?.midi ?? StripMIDI()
        if let kept = predecessor?.ahead {
            self.ahead = kept
        } else if ahead.capacityFrames > 0 && !isBus && voice.streams {
            self.ahead = AheadBuffer(channelCount: voice.channelCount, capacityFrames: ahead.capacityFrames, blockFrames: ahead.blockFrames)
        } else {
            self.ahead = nil
        }
        self.predecessor = predecessor.map { Unmanaged.passUnretained($0) }
        self.isBus = isBus
        channelCount = voice.channelCount
        chainSpec = spec
        self.maxFrames = maxFrames
        if let instance {
            chain = instance
        } else if spec.entries.isEmpty {
            chain = nil
        } else {
            chain = spec.instantiate(reusing: nil, stateFolder: stateFolder, files: files,
                                     format: PlaybackStrip.nodeFormat(sampleRate: sampleRate, channelCount: channelCount,
                                                                      isRealtime: isRealtime),
                                     maxFrames: maxFrames, stock: stock).instance
        }
        latencyFrames = chain?.latencyFrames ?? 0
        chainRef = chain.map { Unmanaged.passUnretained($0) }
        // Its files are scanned for NaN as they are read, a bus sums scanned strips: built-in
        // nodes need no scan after them (ChainInstance.inputIsClean).
        chain?.inputIsClean = true
        buffers = .allocate(capacity: channelCount)
        for c in 0..<channelCount {
            (buffers + c).initialize(to: .allocate(capacity: maxFrames))
            buffers[c].initialize(repeating: 0, count: maxFrames)
        }
        pieceTable = .allocate(capacity: channelCount)
        pieceTable.initialize(repeating: buffers[0], count: channelCount)
        tailTable = .allocate(capacity: channelCount)
        tailTable.initialize(repeating: buffers[0], count: channelCount)
        pieceEvents = .allocate(capacity: pieceEventCapacity)
        pieceEvents.initialize(repeating: MIDIEvent(frameOffset: 0, status: 0, data1: 0, data2: 0), count: pieceEventCapacity)
        meter = predecessor?.meter ?? LevelMeter(channelCount: channelCount, windowFrames: meterWindowFrames)
        self.fallback = fallback
        fallbackRef = fallback.map { Unmanaged.passUnretained($0) }
        if fallback == nil { handedOver.store(true, ordering: .relaxed) }
        // The AVX2 question is asked here, on the control thread: a static's first read runs
        // its initializer under a once-lock, which the audio thread must never meet.
        _ = StripMixSink.usesAVX2
    }

    deinit {
        for c in 0..<channelCount { buffers[c].deallocate() }
        buffers.deallocate()
        pieceTable.deallocate()
        tailTable.deallocate()
        pieceEvents.deallocate()
    }

    /// Takes over the predecessor's fader and pan glide, once, as the graph holding this strip
    /// is installed (the predecessor's graph is still alive then).
    ///
    /// Audio thread: no allocation, no locks.
    @inline(__always)
    func takeOverFromPredecessor() {
        guard let p = predecessor else { return }
        predecessor = nil
        mixGlide = p._withUnsafeGuaranteedRef { $0.mixGlide }
    }

    /// Takes this graph's automation as the graph is installed; a fallback still covering for
    /// this strip plays on without any (its graph, which holds its automation, may go now).
    /// A fallback already handed over is not touched: the control thread may have freed it
    /// (a strip reused by a later graph wrote into freed memory here, corrupting the heap:
    /// found as a rare crash of the stretching allocation test on a busy machine).
    ///
    /// Audio thread: pointer stores.
    @inline(__always)
    func install(automation next: Unmanaged<StripAutomation>?) {
        automation = next
        // Only this thread sets `handedOver`, and the control thread frees the fallback only
        // after it is set: while it is not, the fallback is alive.
        guard !handedOver.load(ordering: .relaxed) else { return }
        fallbackRef?._withUnsafeGuaranteedRef { $0.automation = nil }
    }

    /// Lets go of the fallback once the audio thread has handed over. Control thread.
    func dropFallbackIfDone() {
        if fallback != nil && handedOver.load(ordering: .acquiring) { fallback = nil }
    }

    /// Renders `frameCount` frames (at most a period) of pre-fader signal into ``buffers``:
    /// the monitored input when `monitor` is given, otherwise the track's material from
    /// sequence `seq` on and its chain, which gets `midi` (the track's MIDI for these frames).
    /// While stopped the chain still runs on silence (and on live MIDI: an armed instrument
    /// plays standing), so tails fade out instead of freezing. Returns the underrun frames.
    /// (At another speed the engine calls this at timeline rate, as the mix's time-pitch
    /// processors ask.)
    ///
    /// Audio thread: no allocation, no locks.
    func render(frameCount n: Int, rolling: Bool, seq: Int64,
                transport: TransportInfo, monitor: UnsafePointer<UnsafeMutablePointer<Float>>?, monitorChannels: Int,
                midi: UnsafeBufferPointer<MIDIEvent> = UnsafeBufferPointer(start: nil, count: 0)) -> Int {
        if let monitor {
            copy(monitor, channels: monitorChannels, frameCount: n)
            return 0
        }
        guard rolling else {
            // Standing: take up a new seek at once, so its stale frames leave the ring and
            // the disk can fill it for the next start.
            voice.settle(seq: seq + Int64(latencyFrames))
            for c in 0..<channelCount { buffers[c].update(repeating: 0, count: n) }
            processChain(buffers, frameCount: n, transport: transport, midi: midi)
            return 0
        }
        if let fallbackRef, !handedOver.load(ordering: .relaxed) {
            guard voice.hasData(atSeq: seq + Int64(latencyFrames), frameCount: n) else {
                let missing = fallbackRef._withUnsafeGuaranteedRef {
                    $0.render(frameCount: n, rolling: true, seq: seq, transport: transport, monitor: nil, monitorChannels: 0, midi: midi)
                }
                fallbackRef._withUnsafeGuaranteedRef { copy($0.buffers, channels: $0.channelCount, frameCount: n) }
                return missing
            }
            handedOver.store(true, ordering: .releasing)
        }
        // What the workers rendered ahead first (its chain has run); the rest, if any, from
        // the voice now.
        let taken = ahead?.take(into: buffers, seq: seq, frameCount: n) ?? 0
        if taken == n { return 0 }
        if ahead != nil { aheadMisses.add(1, ordering: .relaxed) }
        var out = buffers
        var info = transport
        if taken > 0 {
            for c in 0..<channelCount { tailTable[c] = buffers[c] + taken }
            out = tailTable
            info = transport.advanced(by: taken)
        }
        let at = seq + Int64(taken)
        // Primed where the voice's frames begin: after what was rendered ahead too (a loop
        // change's switch point inside this period cut it there), in the period's own
        // remaining frames, so what was taken stays.
        if latencyFrames > 0 { primeIfAdopted(seq: at, transport: info, scratch: out, chunkFrames: taken > 0 ? n - taken : maxFrames) }
        let missing = voice.pull(into: out, frameCount: n - taken, seq: at + Int64(latencyFrames))
        // Taken up in the middle of the pull (a device that waits for the disk, whose answer
        // came during it): the chain goes on with the new frames, and a later prime would
        // feed it frames already played (a latency's worth of silence then).
        if latencyFrames > 0 { voice.adoptedSincePrime = false }
        processChain(out, frameCount: n - taken, transport: info, midi: taken > 0 ? UnsafeBufferPointer(start: nil, count: 0) : midi)
        ahead?.renderedInPeriod(seq: seq, frameCount: n)
        if missing > 0 { underrunFrames.add(Int64(missing), ordering: .relaxed) }
        return missing
    }

    /// Renders the next block ahead into ``ahead`` — the material from its sequence number
    /// through the chain, heard as `transport(seq)` says — when there is room and the voice
    /// has the frames (a late disk is left to the device period, which counts it). Returns
    /// whether it rendered. A block's MIDI is none: a strip that plays MIDI is never rendered
    /// ahead.
    ///
    /// A worker holding the ahead buffer's claim, while the device's thread keeps the window
    /// open: no allocation, no locks.
    func renderAhead(transport: (Int64) -> TransportInfo) -> Bool {
        guard let ahead, handedOver.load(ordering: .acquiring), let (seq, k) = ahead.nextBlock() else { return false }
        guard voice.hasData(atSeq: seq + Int64(latencyFrames), frameCount: k) else { return false }
        let info = transport(seq)
        // A loop change whose switch point fell inside what was rendered ahead: what lay past
        // it was dropped and the voice read on the new way, so a latent chain starts again
        // there, as after a locate.
        if latencyFrames > 0 { primeIfAdopted(seq: seq, transport: info, scratch: buffers, chunkFrames: maxFrames) }
        let missing = voice.pull(into: ahead.blockTable, frameCount: k, seq: seq + Int64(latencyFrames))
        processChain(ahead.blockTable, frameCount: k, transport: info, midi: UnsafeBufferPointer(start: nil, count: 0))
        if missing > 0 { underrunFrames.add(Int64(missing), ordering: .relaxed) }
        ahead.wrote(frameCount: k)
        return true
    }

    /// A bus: runs its chain over what was summed into its buffers this block (`frameCount`
    /// frames), rolling or not, so tails ring out.
    ///
    /// Audio thread: no allocation, no locks.
    func renderBus(frameCount n: Int, transport: TransportInfo) {
        processChain(buffers, frameCount: n, transport: transport, midi: UnsafeBufferPointer(start: nil, count: 0))
    }

    /// Clears a bus's buffers for the next block's sums.
    ///
    /// Audio thread: no allocation, no locks.
    @inline(__always)
    func clearBus(frameCount n: Int) {
        for c in 0..<channelCount { buffers[c].update(repeating: 0, count: n) }
    }

    /// After the voice took a new seek (a locate, the start of play), feeds the chain its
    /// latency's worth of the frames just before the ones it will play and drops the output,
    /// so from then on the chain's output lines up with the timeline (as in export).
    ///
    /// `scratch` (channel pointers with room for `chunkFrames` frames each) holds the frames
    /// fed and dropped.
    ///
    /// Audio thread, or a worker rendering ahead (holding the claim): no allocation, no locks.
    private func primeIfAdopted(seq: Int64, transport: TransportInfo, scratch: UnsafeMutablePointer<UnsafeMutablePointer<Float>>,
                                chunkFrames: Int) {
        voice.settle(seq: seq)
        guard voice.adoptedSincePrime, let chain else { return }
        voice.adoptedSincePrime = false
        chain.reset()
        var left = latencyFrames
        var at = seq
        while left > 0 {
            let k = min(left, max(1, chunkFrames))
            _ = voice.pull(into: scratch, frameCount: k, seq: at)
            var context = RenderContext(inPlace: UnsafeBufferPointer(start: scratch, count: channelCount),
                                        frameCount: k, transport: transport)
            chain.process(&context)
            left -= k
            at += Int64(k)
        }
    }

    /// The chain over `frameCount` frames of `channels` (the strip's buffers, or a block of
    /// its ahead buffer), its automated parameters set from their lanes.
    ///
    /// Audio thread or a worker (for its strip): no allocation, no locks.
    @inline(__always)
    private func processChain(_ channels: UnsafeMutablePointer<UnsafeMutablePointer<Float>>, frameCount n: Int,
                              transport: TransportInfo, midi: UnsafeBufferPointer<MIDIEvent>) {
        guard let chain = chainRef else { return }
        if let automation, automation._withUnsafeGuaranteedRef({ $0.parameterCount > 0 }) {
            // A block no longer than a piece is one piece: its parameters set, then the chain
            // as usual (at 32-frame periods, the pieces' bookkeeping was a tenth of automation's cost).
            guard n <= StripAutomation.anchorFrames else {
                processAutomated(chain, channels: channels, automation: automation, frameCount: n, transport: transport, midi: midi)
                return
            }
            automation._withUnsafeGuaranteedRef { $0.setParameters(at: transport.timelineFrame) }
        }
        var context = RenderContext(inPlace: UnsafeBufferPointer(start: channels, count: channelCount),
                                    frameCount: n, midiEvents: midi, transport: transport)
        chain._withUnsafeGuaranteedRef { $0.process(&context) }
    }

    /// The chain over the block in pieces of ``StripAutomation/anchorFrames``, its automated
    /// parameters set from their lanes before each (at the piece's timeline frame), each
    /// piece given its own MIDI events.
    ///
    /// Audio thread: no allocation, no locks.
    private func processAutomated(_ chain: Unmanaged<ChainInstance>, channels: UnsafeMutablePointer<UnsafeMutablePointer<Float>>,
                                  automation: Unmanaged<StripAutomation>, frameCount n: Int,
                                  transport: TransportInfo, midi: UnsafeBufferPointer<MIDIEvent>) {
        var done = 0
        var event = 0
        while done < n {
            let k = min(StripAutomation.anchorFrames, n - done)
            automation._withUnsafeGuaranteedRef { $0.setParameters(at: transport.timelineFrame + Int64(done)) }
            var count = 0
            while event < midi.count && Int(midi[event].frameOffset) < done + k && count < pieceEventCapacity {
                var e = midi[event]
                e.frameOffset = Int32(max(0, Int(e.frameOffset) - done))
                pieceEvents[count] = e
                count += 1
                event += 1
            }
            for c in 0..<channelCount { pieceTable[c] = channels[c] + done }
            let piece = transport.advanced(by: done)
            var context = RenderContext(inPlace: UnsafeBufferPointer(start: pieceTable, count: channelCount), frameCount: k,
                                        midiEvents: UnsafeBufferPointer(start: pieceEvents, count: count), transport: piece)
            chain._withUnsafeGuaranteedRef { $0.process(&context) }
            done += k
        }
    }

    /// Copies `channels` into the strip's buffers: mono spreads to both sides, a pair folds
    /// to mono at half level each.
    ///
    /// Audio thread: no allocation, no locks.
    @inline(__always)
    private func copy(_ source: UnsafePointer<UnsafeMutablePointer<Float>>, channels: Int, frameCount n: Int) {
        if channels == channelCount || channels == 1 {
            for c in 0..<channelCount { buffers[c].update(from: source[min(c, channels - 1)], count: n) }
        } else {
            for i in 0..<n { buffers[0][i] = (source[0][i] + source[1][i]) * 0.5 }
        }
    }
}
