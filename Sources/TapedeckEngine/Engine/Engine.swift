import CProcessGraph
import Synchronization
import TapedeckCore
import TapedeckDSP
import TapedeckIO
#if canImport(Glibc)
import Glibc
#endif

/// The real-time engine of one open device, alive from the moment the device opens until it
/// closes. Play, stop, locate, loop, speed, recording, mixer changes and edits are commands,
/// atomics or graph swaps: nothing the user does while it runs restarts the device.
///
/// Threads: the device's audio thread renders (``RenderCore``); a capture writer thread
/// writes takes; a playback reader thread reads regions; the control thread (the one that
/// calls everything here) builds graphs, sends commands and reads the status. All methods
/// are for the control thread.
public final class Engine: @unchecked Sendable {
    /// The device it runs on.
    public let device: AudioDevice
    /// What the device runs at.
    public let configuration: DeviceConfiguration
    /// The options it was made with.
    public let options: EngineOptions
    let shared = EngineShared()
    let reader: DiskReader
    let writer: CaptureWriter
    let core: RenderCore
    private var serial: UInt64 = 0
    /// Names of commands refused on a full queue, not yet told (Engine+Commands).
    var refusedCommands: [String] = []
    /// Graphs the audio thread may be rendering or about to (the installed one and newer).
    private(set) var graphs: [Graph] = []
    private var generation = 0
    /// Every chain instance a graph has held and that is not released yet (see Engine+Chains).
    var chainsMade: [ObjectIdentifier: ChainInstance] = [:]
    private var servedVoices: [ObjectIdentifier] = []
    /// Whether ``collectGarbage()`` found nothing left to free (cleared by every new graph).
    private var settled = false
    /// The fastest transport speed asked for so far: the playback rings hold the mix's
    /// look-ahead at it (never shrunk, so going back and forth rebuilds nothing).
    var ringSpeed = 1.0
    /// The mix's time-pitch, built on a thread of its own (see Engine+TimePitch).
    let timePitchBuild = TimePitchBuild()
    var takeSets: [TakeSet] = []
    private(set) var prepared = false
    private var started = false
    private var closed = false
    private var memoryLocked = false
    /// MIDI ports attached (kept alive while the audio thread may read them: see Engine+MIDI).
    var midiInputs: [MIDIInputPort] = []
    var midiOutputs: [MIDIOutputPort] = []
    /// The shared transport (JACK's) the engine follows and drives, when its device has one
    /// and asks to be followed.
    private let host: (any HostTransportDevice)?

    /// Whether the audio thread waits for the disk: only on a device with no clock.
    var waitsForDisk: Bool { options.waitsForDisk || !configuration.isPaced }

    /// An engine for `device`, not yet running. `clickOutputs` are the device outputs
    /// (1-based) the metronome plays on. Control thread.
    public init(device: AudioDevice, options: EngineOptions = EngineOptions(), clickOutputs: [Int] = [1, 2]) {
        self.device = device
        configuration = device.configuration
        self.options = options
        host = (device as? any HostTransportDevice).flatMap { $0.followsHostTransport ? $0 : nil }
        reader = DiskReader(board: shared.board)
        writer = CaptureWriter(board: shared.board, options: options)
        core = RenderCore(shared: shared, reader: reader, writer: writer, configuration: device.configuration,
                          options: options, clickOutputs: clickOutputs, startFrame: 0)
        writer.midiHub = core.midi
        // Workers start at SCHED_FIFO 69, below PeriodDriver's 70, and follow the device's
        // thread once it runs (a JACK client's thread has the server's priority). On a device
        // with no clock (an export, a file tap) periods come back to back: real-time workers
        // there would hold every core against the disk, the writers and the control thread.
        if options.renderThreads > 1,
           let threads = RenderThreads(count: options.renderThreads,
                                       realtime: options.realtimePriority && !options.rendersOffline && configuration.isPaced,
                                       priority: 69, frames: core.timelineFrames, core: core) {
            core.threads = threads
            core.threadPool = threads.pool
            core.threadScratch = threads.scratch
            // No clock, no deadline: periods come back to back, and a worker spinning for the
            // next one would keep a core from the disk and the writers.
            if !configuration.isPaced { td_graph_pool_set_idle_spin(threads.pool, 0) }
        }
    }

    deinit { _ = close() }

    /// Builds the first graph from `spec` with the playhead at `position`, fills the
    /// playback rings, starts the disk threads and the device. Control thread.
    public func start(_ spec: GraphSpec, position: Int64 = 0) throws {
        try prepare(spec, position: position)
        try start()
    }

    /// Builds the first graph from `spec` with the playhead at `position`, fills the playback
    /// rings and starts the disk threads, but not the device: commands sent from now on are
    /// applied in the device's very first period (a command-line run starts rolling, or
    /// recording, exactly with the device). Control thread.
    public func prepare(_ spec: GraphSpec, position: Int64 = 0) throws {
        guard !prepared else { return }
        if spec.sampleRate != configuration.sampleRate {
            throw DeviceError(device: configuration.name, reason: "runs at \(configuration.sampleRate) Hz but the material is \(spec.sampleRate) Hz")
        }
        if options.lockMemory {
            // MCL_ONFAULT: lock pages as they are touched, rather than every reservation up front.
            memoryLocked = mlockall(Int32(MCL_CURRENT | MCL_FUTURE | 4 /* MCL_ONFAULT */)) == 0
        }
        let first = try build(spec, stock: nil)
        setMasterGain(decibels: spec.masterGainDecibels)
        graphs = [first]
        noteChains(of: first)
        core.graph = Unmanaged.passUnretained(first)
        core.position = position
        // Before the device runs the control thread may act as the audio thread.
        core.seekAll(seqStart: 0, timeline: position, route: core.route, continuesOld: false)
        shared.board.installedGeneration.store(first.generation, ordering: .releasing)
        shared.board.positionFrame.store(position, ordering: .releasing)
        shared.log.append(deviceFrame: 0, timelineFrame: position, speed: 0)
        serveVoices()
        reader.fillNow()
        // Still acting as the audio thread: every voice takes up what was just read, every
        // strip its automation.
        for (i, strip) in first.strips.enumerated() {
            strip.voice.settle(seq: 0)
            strip.automation = first.automationTable[i]
        }
        // Freewheeling, the exporting thread reads the disk itself between periods
        // (``fillRingsInline()``): a disk thread would leave the render waiting on it.
        guard options.readsDiskInline || reader.start(), writer.start() else {
            reader.stop()
            writer.stop()
            throw DeviceError(device: configuration.name, reason: "cannot start the disk threads")
        }
        prepared = true
    }

    /// Starts the device (after ``prepare(_:position:)``). Control thread.
    public func start() throws {
        guard prepared, !started else { return }
        // Running from now until the audio thread says otherwise (it may not have begun yet).
        shared.board.deviceRunning.store(true, ordering: .releasing)
        do { try device.start(client: core, realtimePriority: options.realtimePriority) } catch {
            shared.board.deviceRunning.store(false, ordering: .releasing)
            reader.stop()
            writer.stop()
            throw error
        }
        started = true
    }

    /// Whether the device has been started (it may have failed since: see ``isRunning``).
    public var isStarted: Bool { started }

    /// Stops the transport (ending any takes), stops the device and the threads, and closes
    /// every take. Returns the takes closed. Safe to call twice. Control thread.
    @discardableResult
    public func close() -> [TakeOutcome] {
        guard !closed else { return [] }
        closed = true
        guard prepared else { return [] }
        if started {
            stop()
            _ = waitUntilApplied(timeoutSeconds: 1)
            device.stop()
        }
        // The audio thread is gone: what it did not end, ends now.
        for set in takeSets { set.endedFlag.store(true, ordering: .releasing) }
        var outcomes: [TakeOutcome] = []
        for set in takeSets { outcomes += finish(set) }
        writer.stop()
        reader.stop()
        core.loudness.close()
        releaseAllChains()
        // The workers call into the core: ended while it is certainly alive.
        core.threads?.stop()
        timePitchBuild.join()
        return outcomes
    }

    /// Whether the device still runs (false once it failed or the engine closed).
    public var isRunning: Bool { started && !closed && shared.board.deviceRunning.load(ordering: .acquiring) }

    // MARK: - Graph

    /// The spec of the newest graph (what plays once any pending swap happened).
    public var spec: GraphSpec? { graphs.last?.spec }

    /// Builds a graph for `spec` off the audio thread (reusing every unchanged track) and
    /// hands it over; the audio thread swaps it in at its next period. A file that cannot be
    /// opened throws and changes nothing. Control thread.
    ///
    /// Mixer values (faders, pans, mutes, solos, send levels, the master fader) of strips
    /// that play on for the same track are kept as they play, not taken from `spec`: a
    /// controller may have moved them since the caller last heard. Change them with
    /// ``set(_:)``; a new track, or one taking over another's strip, starts at `spec`'s.
    ///
    /// New nodes are taken from `stock` where it holds them (made ahead on a worker:
    /// ``GraphNodeStockPlan``); what it holds that the build did not take is released.
    public func apply(_ spec: GraphSpec, stock: NodeStock? = nil) throws {
        defer { stock?.discard() }
        guard prepared else { throw DeviceError(device: configuration.name, reason: "the engine has not been prepared") }
        collectGarbage()
        let graph = try build(spec, stock: stock)
        settled = false
        graphs.append(graph)
        noteChains(of: graph)
        serveVoices()
        let old = shared.pendingGraph.exchange(Unmanaged.passUnretained(graph).toOpaque(), ordering: .acquiringAndReleasing)
        // A pending graph the audio thread never took is simply dropped (it never ran).
        if let old { graphs.removeAll { Unmanaged.passUnretained($0).toOpaque() == old } }
    }

    private func build(_ spec: GraphSpec, stock: NodeStock?) throws -> Graph {
        generation += 1
        let context = Graph.Context(
            sampleRate: configuration.sampleRate, periodFrames: configuration.periodFrames,
            captureChannels: configuration.captureChannels,
            ringFrames: Int(options.playbackRingSeconds * Double(configuration.sampleRate)) + configuration.periodFrames + options.diskBlockFrames
                + (ringSpeed > 1 ? MixTimePitch.lookaheadFrames(speed: ringSpeed, periodFrames: configuration.periodFrames) : 0),
            blockFrames: options.diskBlockFrames, meterWindowFrames: core.meterWindowFrames,
            waitNanoseconds: waitsForDisk ? 2_000_000_000 : 0, isRealtime: !options.rendersOffline,
            // Ahead of what? A device with no clock has no deadline to keep.
            ahead: core.threads == nil || options.rendersOffline || !configuration.isPaced ? .none
                : .of(periodFrames: configuration.periodFrames, sampleRate: configuration.sampleRate,
                      milliseconds: options.renderAheadMilliseconds),
            readsDirect: options.readsDiskInline, stock: stock)
        return try Graph.build(spec, previous: graphs.last, generation: generation, context: context)
    }

    /// Frees graphs the audio thread has left behind and fallbacks it has handed over, and
    /// tells the disk thread which voices are still live. Control thread.
    func collectGarbage() {
        core.loudness.collect()
        // One graph, installed, nothing handed over still pending: nothing to free. (A front-end
        // polls the status every few milliseconds; walking every chain's nodes each time was a
        // few per cent of a core at 256 tracks.)
        if settled { return }
        let installed = shared.board.installedGeneration.load(ordering: .acquiring)
        if let last = graphs.last, graphs.count > 1 {
            graphs.removeAll { $0.generation < installed && $0 !== last }
        }
        for g in graphs { for s in g.strips { s.dropFallbackIfDone(); s.midi.collect(installed: installed) } }
        releaseUnreachableChains()
        serveVoices()
        settled = graphs.count == 1 && graphs[0].generation <= installed && graphs[0].strips.allSatisfy { $0.fallback == nil }
    }

    private func serveVoices() {
        var seen = Set<ObjectIdentifier>()
        var list: [TrackVoice] = []
        for g in graphs { for v in g.voices where v.streams && seen.insert(ObjectIdentifier(v)).inserted { list.append(v) } }
        let ids = list.map(ObjectIdentifier.init)
        if ids != servedVoices {
            servedVoices = ids
            reader.serve(list)
        }
    }

    // MARK: - Transport

    func nextSerial() -> UInt64 {
        serial += 1
        return serial
    }

    /// Whether play, stop and locate go to a shared transport (JACK's) that the engine then
    /// follows, in step with the other programs on it.
    public var followsHost: Bool { host != nil }

    /// Frames in one cycle of the shared transport's server (JACK's buffer size), else the
    /// device's period: a count-in joined by the shared transport starts a whole number of
    /// them before it, so it gets there on a cycle's edge.
    public var hostCycleFrames: Int { host?.hostCycleFrames ?? configuration.periodFrames }

    /// Rolls from the playhead (as soon as every track's disk stream is ready). Following a
    /// shared transport, asks it to roll: the engine rolls with it (once every slow-sync
    /// program is ready, this one included).
    public func play() {
        if let host {
            shared.hostAsked.start.store(true, ordering: .releasing)
            host.requestHostStart()
            return
        }
        send(.play(serial: nextSerial()))
    }

    /// Rolls from `frame` and, following a shared transport that cannot go there (JACK's has
    /// no frame below 0), rolls on the engine's own clock until `joinFrame`, where the shared
    /// transport waits and then rolls on with it in step (see ``PreRoll``). Otherwise the
    /// same as locating to `frame` and playing.
    public func play(from frame: Int64, joiningHostAt joinFrame: Int64) {
        guard let host, frame < joinFrame else {
            locate(to: frame)
            play()
            return
        }
        shared.hostAsked.locate.store(joinFrame, ordering: .releasing)
        host.requestHostLocate(to: joinFrame)
        send(.preRoll(from: frame, join: joinFrame, serial: nextSerial()))
    }

    /// EBU R128 loudness of the master bus: what played while rolling since the engine started
    /// or ``resetLoudness()`` (stopped time does not count; nil when libebur128 could not make
    /// a meter). Control thread.
    public func loudness() -> LoudnessReading? { core.loudness.reading() }

    /// Starts the master's loudness measurement afresh (as a meter's reset button does): a new
    /// meter is handed to the audio thread. Not done on every start: each meter holds a
    /// 3-second window (about 2 MB), and replacing it at every play would churn the heap.
    /// Control thread.
    public func resetLoudness() { core.loudness.renew() }

    /// Stops rolling (and recording). A value the audio thread reads every period: it can
    /// never be lost behind other commands. Following a shared transport, stops it too (the
    /// engine stops at once; the shared transport's stop then finds it stopped).
    public func stop() {
        shared.stopSerial.store(nextSerial(), ordering: .releasing)
        if let host {
            shared.hostAsked.stop.store(true, ordering: .releasing)
            host.requestHostStop()
        }
    }

    /// Moves the playhead, rolling or not (rolling, it waits for the disk and rolls on).
    /// Following a shared transport, moves that: the engine follows it there.
    public func locate(to frame: Int64) {
        if let host {
            shared.hostAsked.locate.store(frame, ordering: .releasing)
            host.requestHostLocate(to: frame)
            return
        }
        send(.locate(frame: frame, serial: nextSerial()))
    }

    /// The loop range and whether the transport wraps round it. While rolling the change
    /// takes effect a moment ahead, seamlessly.
    public func setLoop(_ range: FrameRange?, enabled: Bool) {
        let r = PlayRoute(loop: range, enabled: enabled)
        send(.route(start: r.loopStart, end: r.loopEnd, loops: r.loops, serial: nextSerial()))
    }

    /// Where rolling stops by itself (nil: never).
    public func setEndFrame(_ frame: Int64?) { send(.endFrame(frame ?? .max, serial: nextSerial())) }

    /// Above this speed the live stretcher is Rubber Band's R3 engine whatever the quality
    /// asked for (there it is both cheaper and steadier than R2).
    public static let fineStretchAboveSpeed = MixTimePitch.fineAboveSpeed

    /// The metronome: on while rolling, only while recording, until a frame, at a level; over
    /// the timeline frames of `countIn` it counts at the tempo and meter where the count-in
    /// ends (a count-in into bar 17 counts bar 17's beats, whatever the bars before it hold).
    public func setClick(on: Bool, recordingOnly: Bool = false, untilFrame: Int64? = nil, levelDecibels: Double = -6,
                         countIn: Range<Int64>? = nil) {
        core.clickNode.parameters.set(0, levelDecibels)
        send(.click(on: on, recordingOnly: recordingOnly, untilFrame: untilFrame ?? .max, countInFrom: countIn?.lowerBound ?? 0,
                    countInTo: countIn?.upperBound ?? 0, serial: nextSerial()))
    }

    /// Waits until the audio thread has applied every command and stop sent so far (for a
    /// front-end that must know, e.g. before reading the final position). False on timeout
    /// or when the device no longer runs.
    @discardableResult
    public func waitUntilApplied(timeoutSeconds: Double = 2) -> Bool {
        let deadline = monotonicNanoseconds() + Int64(timeoutSeconds * 1e9)
        var followedHost = false
        while shared.board.appliedSerial.load(ordering: .acquiring) < serial
                // A locate sent to the shared transport is applied once the engine has followed
                // it there (a cycle or two): until then a snapshot still shows the old place,
                // and a play from "the playhead" at once (Home then Space) would undo it.
                || host != nil && shared.hostAsked.locate.load(ordering: .acquiring) >= 0 {
            if !isRunning || monotonicNanoseconds() > deadline { return false }
            usleep(500)
            followedHost = host != nil
        }
        // The engine publishes where it went at the end of the cycle it followed in.
        if followedHost { usleep(useconds_t(max(1, configuration.periodFrames) * 1_000_000 / max(1, configuration.sampleRate))) }
        return true
    }

    // MARK: - Status

    /// A snapshot. Control thread; also frees what the audio thread has left behind.
    public func status() -> EngineStatus {
        collectGarbage()
        let board = shared.board
        let rt = board.realtime.load(ordering: .relaxed)
        var status = EngineStatus(
            transport: EngineTransportState(rawValue: board.transport.load(ordering: .acquiring)) ?? .stopped,
            deviceRunning: isRunning,
            positionFrame: board.positionFrame.load(ordering: .relaxed),
            deviceFrame: board.deviceFrame.load(ordering: .relaxed),
            xrunCount: board.xrunCount.load(ordering: .relaxed),
            underrunFrames: board.underrunFrames.load(ordering: .relaxed),
            droppedFrames: board.droppedFrames.load(ordering: .relaxed),
            dspLoad: Double(board.dspLoadPermille.load(ordering: .relaxed)) / 1000,
            captureRingHighWaterFrames: board.captureHighWaterFrames.load(ordering: .relaxed),
            playbackRingFill: Double(board.playbackFillPermille.load(ordering: .relaxed)) / 1000,
            diskFreeBytes: board.diskFreeBytes.load(ordering: .relaxed),
            realtime: rt < 0 ? nil : rt == 1,
            memoryLocked: memoryLocked,
            lastError: errorText())
        let left = board.diskMillisecondsLeft.load(ordering: .relaxed)
        if left >= 0 && takeSets.contains(where: { $0.bytesPerSecond > 0 }) { status.diskSecondsLeft = Double(left) / 1000 }
        status.nonFiniteSamples = board.busNonFiniteSamples.load(ordering: .relaxed) + chainNonFiniteSamples()
        // A start asked of the shared transport, or the shared transport starting (after a
        // locate while rolling), is under way until it rolls.
        let asked = shared.hostAsked
        if host != nil && status.transport == .stopped && status.deviceRunning
            && (asked.start.load(ordering: .acquiring) || asked.hostStarting.load(ordering: .relaxed)) {
            status.transport = .starting
        }
        return status
    }

    /// What the audio thread noticed since the last call (xruns, underruns, dropped input).
    public func drainEvents() -> [EngineEvent] {
        var out: [EngineEvent] = []
        while let e = shared.events.pop() { out.append(e) }
        return out
    }

    /// Levels now: every track post-fader, every listening track's input, the master.
    public func meters() -> EngineMeters {
        guard let g = graphs.last else { return EngineMeters(tracks: [], inputs: [:], master: core.masterMeter.read()) }
        var inputs: [Int: [MeterReading]] = [:]
        for (i, strip) in g.inputs.enumerated() { inputs[g.trackOfInput[i]] = strip.meter.read() }
        return EngineMeters(tracks: g.strips.map { $0.meter.read() }, inputs: inputs, master: core.masterMeter.read())
    }

    /// NaN and infinite samples the files and chains of the newest graph replaced.
    private func chainNonFiniteSamples() -> Int64 {
        guard let g = graphs.last else { return 0 }
        return g.strips.reduce(0) { $0 + ($1.chain?.nonFiniteSampleCount ?? 0) + $1.voice.nonFiniteSampleCount }
            + g.inputs.reduce(0) { $0 + ($1.chain?.nonFiniteSampleCount ?? 0) } + (g.masterChain?.nonFiniteSampleCount ?? 0)
    }

    /// Puts every clip light out.
    public func resetClipLights() {
        for g in graphs {
            for s in g.strips { s.meter.resetClip() }
            for s in g.inputs { s.meter.resetClip() }
        }
        core.masterMeter.resetClip()
    }

    /// The retroactive memory of `track`'s input, if it listens with one.
    public func retroBuffer(track: Int) -> RetroBuffer? {
        guard let g = graphs.last, g.strips.indices.contains(track), g.inputForTrack[track] >= 0 else { return nil }
        return g.inputs[g.inputForTrack[track]].retro
    }

    /// Where the transport was (timeline frame, speed; 0 standing) at device frame `device`,
    /// and from which device frame on that held; nil when it is too long ago.
    public func transportSegment(at device: Int64) -> (deviceFrame: Int64, timelineFrame: Int64, speed: Double)? {
        guard let s = shared.log.segment(containing: device) else { return nil }
        return (s.deviceFrame, s.timelineFrame, s.speed)
    }

    /// The mix's time-pitch processors, once built (for tests of their lifetime).
    var mixTimePitch: MixTimePitch? { core.mixTimePitch }

    /// The voices of the newest graph, in track order (for tests of their lifetime).
    func currentVoices() -> [TrackVoice] { graphs.last?.strips.map(\.voice) ?? [] }

    /// The device's failure or a disk problem, in words.
    func errorText() -> String? {
        if let text = shared.board.errorText.withLock({ $0 }) { return text }
        let code = shared.board.deviceErrorCode.load(ordering: .acquiring)
        if code != 0 { return device.failureDescription(code: code) }
        return nil
    }
}

/// Levels of everything at one moment.
public struct EngineMeters: Sendable {
    /// Per track, post-fader, one reading per track channel.
    public var tracks: [[MeterReading]]
    /// Per listening track (by track index), its input after the input chain.
    public var inputs: [Int: [MeterReading]]
    /// The master bus, left and right, after the master fader.
    public var master: [MeterReading]
}
