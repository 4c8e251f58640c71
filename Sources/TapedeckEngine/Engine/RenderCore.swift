import Synchronization
import CProcessGraph
import TapedeckCore
import TapedeckDSP

/// The atomics and queues the control thread and the audio thread share.
final class EngineShared: @unchecked Sendable {
    let board = StatusBoard()
    let commands = SPSCQueue<EngineCommand>(capacity: 256)
    let events = SPSCQueue<EngineEvent>(capacity: 4096)
    /// The serial of the latest stop asked for (stop is a value, never a queued command).
    let stopSerial = Atomic<UInt64>(0)
    /// A graph waiting to be swapped in (an unretained `Graph`; the control thread keeps it alive).
    let pendingGraph = Atomic<UnsafeMutableRawPointer?>(nil)
    /// The master fader, linear.
    let masterGainBits = Atomic<UInt32>(Float(1).bitPattern)
    /// Set (releasing) once the mix's time-pitch processors exist; the audio thread only
    /// engages them after seeing it.
    let timePitchReady = Atomic<Bool>(false)
    let log = TransportLog()
    /// Tapedeck's own requests to a shared transport (JACK's), told from other programs'.
    let hostAsked = HostRequests()
}

/// The engine's audio thread: the device calls ``renderCycle(input:output:frameCount:)``
/// once per period, and everything here belongs to that thread once the device runs.
///
/// A cycle: swap in a waiting graph, apply the commands, take the inputs (meters, monitoring,
/// retroactive memory), keep what the takes' gate lets through, render every track
/// (disk → chain → fader → pan) onto the bus — at another speed, the playing tracks' mix
/// through one time-pitch processor (``MixTimePitch``), monitored inputs beside it at device
/// rate — run the master chain and fader, add the click, move the transport.
///
/// No allocation, no locks, no logging, no throwing, no files, anywhere below.
final class RenderCore: AudioDeviceClient, @unchecked Sendable {
    let shared: EngineShared
    let reader: DiskReader
    let writer: CaptureWriter
    let periodFrames: Int
    let sampleRate: Int
    let playbackChannels: Int
    let waitsForDisk: Bool
    /// Freewheeling for an export (``EngineOptions/rendersOffline``): nothing reads the
    /// meters.
    let rendersOffline: Bool
    /// The threads that share each period's strips (nil: this one alone, today's walk). Set
    /// on the control thread before the device starts.
    var threads: RenderThreads?
    /// ``threads``' pool and per-thread scratch, held without reference counting for the
    /// audio thread and the workers.
    var threadPool: OpaquePointer?
    var threadScratch: UnsafeMutablePointer<PathScratch>?
    /// What this period's nodes are told (``GraphPeriod``).
    var period = GraphPeriod()
    /// ``runEach(count:_:)``'s job while it runs.
    var jobBody: ((Int) -> Void)?
    /// What the workers rendering ahead know of the transport (set as the window opens).
    var aheadSnapshot: AheadSnapshot?
    /// Where the workers take turns over the strips rendered ahead.
    let aheadCursor = Atomic<Int>(0)
    /// The blocks held that the workers are filling strips up to now: 1 (the next period's)
    /// as the window opens, one more each time no strip holds fewer (``renderAhead(thread:)``).
    let aheadLevel = Atomic<Int>(1)
    /// Who lands the period's final paths now (``landFinished(_:frameCount:targets:scratch:)``):
    /// one thread at a time, so they are summed in walk order whichever thread lands them.
    let landLock = Atomic<Bool>(false)
    /// The next of the period's final paths to land. Read and written under ``landLock``
    /// (the device's thread resets it before posting a period).
    var landCursor = 0
    /// The periods run on the threads so far: each strip notes the last one it finished.
    var periodNumber = 0
    /// Whether the last period was timed for ``periodTimes``.
    var wasTimed = false
    /// Freewheeling for stems: each tapped track's own output, every period.
    var stemTaps: StemTaps?
    /// Freewheeling one stem at another speed: only this strip's path reaches the master
    /// (−1: every strip's). Set before the device starts.
    var isolatedStrip = -1
    /// Freewheeling a stem: the master chain and fader are left out (a stem is what reaches
    /// the master, not what leaves it). Set before the device starts.
    var bypassesMaster = false
    let handoverFrames: Int64
    let holdLimitFrames: Int64
    let stallAtFrame: Int64
    let stallNanoseconds: Int64
    let probe: (any AudioThreadProbe)?
    let periodTimes: PeriodTimes?

    // Transport.
    var graph: Unmanaged<Graph>?
    var position: Int64
    /// Timeline frames rolled through since the start (the voices' sequence numbers).
    var seq: Int64 = 0
    /// Device frames since the start, xruns included.
    var deviceFrame: Int64 = 0
    /// Where the playhead stood when frames of an xrun not told yet were first skipped (-1: none).
    var untoldXrunFrame: Int64 = -1
    /// Whether the device holds frames it cannot tell yet were lost (RenderCore+Xrun).
    var deviceHolding = false
    /// Where the playhead stood when the device began holding: where what it then tells it
    /// lost began (-1: not holding).
    var holdBeganFrame: Int64 = -1
    var fraction = 0.0
    var state = EngineTransportState.stopped
    /// What ``publish()`` last woke the screen for.
    var publishedState = EngineTransportState.stopped
    var publishedStoppedPosition: Int64 = 0
    var holdSince: Int64 = 0
    var route = PlayRoute.straight
    var pendingRoute: PlayRoute?
    var routeSwitchSeq: Int64 = 0
    var epoch: Int64 = 0
    var endFrame: Int64 = .max
    var timePitch = LiveTimePitch()
    /// The mix's speed and pitch processors; set by the control thread before it publishes
    /// ``EngineShared/timePitchReady``, read here only after that.
    var mixTimePitch: MixTimePitch?
    var handledStopSerial: UInt64 = 0
    var stalled = false
    /// The shared transport this engine follows, if its device has one (RenderCore+Host).
    var hostFollow = HostFollow()
    /// A count-in the shared transport joins later (RenderCore+PreRoll).
    var preRoll = PreRoll()

    // Takes.
    var takes: Unmanaged<TakeSet>?
    /// Per track: whether a take of the running pass records it (auto monitoring hears it).
    let recordingTracks: UnsafeMutablePointer<Bool>
    let recordingTrackCapacity = 4096
    let ringSources: UnsafeMutablePointer<UnsafeMutablePointer<Float>>

    // Mix.
    let bus: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    /// Where a block of a track with a chain is mixed at timeline rate: the time-pitch
    /// processors' two channels at the block's offset (a pointer table, nothing owned).
    let timelineTargets: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    /// Frames in one block of a track with a chain at timeline rate (its buffers' size).
    let timelineFrames: Int
    /// Where a delayed path is gathered before its delay (two channels of a strip block).
    let pathScratch: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    /// Outputs routed straight to the device this period (one buffer per device output),
    /// added to the device's outputs after the master.
    let directOutputs: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    let directOutputCount: Int
    /// A pointer table aimed at two of ``directOutputs`` (a path's pair).
    let deviceTargets: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    /// Whether any track is soloed this period.
    var soloedThisCycle = false
    var appliedMasterGain: Float = .nan
    let masterMeter: LevelMeter
    /// EBU R128 of the master bus while rolling.
    let loudness: LoudnessHandoff
    let clickNode: MetronomeNode
    let clickBuffer: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    let clickOutputs: UnsafeMutablePointer<Int>
    let clickOutputCount: Int
    var clickOn = false
    var clickRecordingOnly = false
    var clickUntil: Int64 = .max
    /// The count-in's timeline frames (empty: none): counted at the tempo where it ends.
    var countInFrames: Range<Int64> = 0..<0

    // MIDI (see RenderCore+MIDI.swift).
    let midi = MIDIHub()
    /// A period plus the output latency: see ``midiLatencyFrames(_:)``.
    let midiBaseLatencyFrames: Int64

    // DSP load.
    let periodNanoseconds: Int64
    let meterWindowFrames: Int
    var busiestNanoseconds: Int64 = 0
    /// When this period's work began (monotonic nanoseconds).
    var cycleBegan: Int64 = 0
    var loadFrames = 0
    /// Periods rendered, for asking the device thread's priority again now and then.
    var priorityCheckPeriods = 0

    init(shared: EngineShared, reader: DiskReader, writer: CaptureWriter, configuration: DeviceConfiguration,
         options: EngineOptions, clickOutputs outputs: [Int], startFrame: Int64) {
        self.shared = shared
        self.reader = reader
        self.writer = writer
        periodFrames = configuration.periodFrames
        sampleRate = configuration.sampleRate
        playbackChannels = configuration.playbackChannels
        waitsForDisk = options.waitsForDisk || !configuration.isPaced
        rendersOffline = options.rendersOffline
        handoverFrames = max(options.handoverFrames, Int64(configuration.periodFrames))
        holdLimitFrames = waitsForDisk ? .max : (options.holdLimitFrames ?? Int64(configuration.sampleRate))
        stallAtFrame = options.stallAtFrame ?? .max
        stallNanoseconds = Int64(options.stallMilliseconds) * 1_000_000
        probe = options.audioThreadProbe
        periodTimes = options.periodTimes
        position = startFrame
        let n = periodFrames
        func buffers(_ count: Int) -> UnsafeMutablePointer<UnsafeMutablePointer<Float>> {
            let table = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: count)
            for c in 0..<count {
                (table + c).initialize(to: .allocate(capacity: n))
                table[c].initialize(repeating: 0, count: n)
            }
            return table
        }
        bus = buffers(2)
        timelineFrames = Graph.stripFrames(periodFrames: n)
        pathScratch = .allocate(capacity: 2)
        for c in 0..<2 {
            (pathScratch + c).initialize(to: .allocate(capacity: timelineFrames))
            pathScratch[c].initialize(repeating: 0, count: timelineFrames)
        }
        directOutputCount = max(configuration.playbackChannels, 2)
        directOutputs = buffers(directOutputCount)
        deviceTargets = .allocate(capacity: 2)
        deviceTargets.initialize(repeating: directOutputs[0], count: 2)
        timelineTargets = .allocate(capacity: 2)
        timelineTargets.initialize(repeating: bus[0], count: 2)
        clickBuffer = buffers(1)
        ringSources = .allocate(capacity: 4)
        ringSources.initialize(repeating: bus[0], count: 4)
        recordingTracks = .allocate(capacity: recordingTrackCapacity)
        recordingTracks.initialize(repeating: false, count: recordingTrackCapacity)
        meterWindowFrames = max(configuration.sampleRate / 10, n)
        masterMeter = LevelMeter(channelCount: 2, windowFrames: meterWindowFrames)
        // The activity signal is a lazily made global: made here, on the control thread, so
        // the audio thread's first signal never allocates it.
        _ = EngineActivity.shared
        loudness = LoudnessHandoff(sampleRate: configuration.sampleRate, maxFrames: n, threaded: !options.rendersOffline)
        periodNanoseconds = Int64(n) * 1_000_000_000 / Int64(max(configuration.sampleRate, 1))
        midiBaseLatencyFrames = Int64(n) + configuration.playbackLatencyFrames
        clickNode = MetronomeNode()
        clickNode.prepare(format: NodeFormat(sampleRate: Double(configuration.sampleRate), channelCount: 1), maxFrames: n)
        let usable = outputs.map { $0 - 1 }.filter { $0 >= 0 && $0 < max(configuration.playbackChannels, 2) }
        clickOutputCount = usable.count
        clickOutputs = .allocate(capacity: max(usable.count, 1))
        clickOutputs.initialize(repeating: 0, count: max(usable.count, 1))
        for (i, ch) in usable.enumerated() { clickOutputs[i] = ch }
    }

    deinit {
        for c in 0..<2 { bus[c].deallocate() }
        bus.deallocate()
        for c in 0..<2 { pathScratch[c].deallocate() }
        pathScratch.deallocate()
        for c in 0..<directOutputCount { directOutputs[c].deallocate() }
        directOutputs.deallocate()
        deviceTargets.deallocate()
        timelineTargets.deallocate()
        clickBuffer[0].deallocate()
        clickBuffer.deallocate()
        ringSources.deallocate()
        recordingTracks.deallocate()
        clickOutputs.deallocate()
        clickNode.release()
    }

    // MARK: - Device callbacks

    /// Audio thread.
    func audioThreadBegins(realtime: Bool) {
        shared.board.realtime.store(realtime ? 1 : 0, ordering: .relaxed)
        td_thread_name_audio()
        followDevicePriority()
        probe?.audioThreadBegins()
    }

    /// Swaps in a waiting graph and applies the commands; says whether audio moves.
    ///
    /// Audio thread: no allocation, no locks.
    func beginCycle() -> Bool {
        installPendingGraph()
        applyCommands()
        return state != .stopped || takes != nil
    }

    /// Audio thread.
    func audioThreadEnds() {
        closeAhead()
        probe?.audioThreadEnds()
        shared.board.deviceRunning.store(false, ordering: .releasing)
    }

    /// One period. Audio thread: no allocation, no locks, no logging, no files.
    func renderCycle(input: UnsafePointer<UnsafeMutablePointer<Float>>, output: UnsafePointer<UnsafeMutablePointer<Float>>,
                     frameCount n: Int) {
        // The device's wait for the period is not work: load is measured from here.
        let began = monotonicNanoseconds()
        cycleBegan = began
        let timed = periodTimes?.isArmed ?? false
        // What strips missed before the first timed period is not this period's.
        if timed && !wasTimed { _ = takeAheadMisses() }
        wasTimed = timed
        let cpuBegan = timed ? PeriodTimes.threadCPUNanoseconds() : 0
        defer {
            if timed {
                periodTimes?.record(wallNanoseconds: monotonicNanoseconds() - began,
                                    cpuNanoseconds: PeriodTimes.threadCPUNanoseconds() - cpuBegan,
                                    aheadMisses: takeAheadMisses())
            }
        }
        // The strips are this thread's again (the workers' blocks ahead are done).
        closeAhead()
        // A device thread may be made real-time after its first period (PipeWire's data loop
        // is): the workers follow it, asked about every 1,024 periods (two system calls).
        priorityCheckPeriods &+= 1
        if priorityCheckPeriods & 1023 == 0 { followDevicePriority() }
        if state == .rolling, !stalled, position >= stallAtFrame {
            stalled = true
            sleepNanoseconds(stallNanoseconds)
        }
        guard let graphRef = graph else {
            gatherMIDI(nil, frameCount: n, now: began)
            for c in 0..<max(playbackChannels, 2) { output[c].update(repeating: 0, count: n) }
            finishCycle(frameCount: n, began: began)
            return
        }
        graphRef._withUnsafeGuaranteedRef { g in
            if state == .starting { rollWhenReady(g, frameCount: n) }
            gatherMIDI(g, frameCount: n, now: began)
            let info = transportInfo(g)
            processInputs(g, input: input, frameCount: n, transport: info)
            keepTakes(g, frameCount: n, silence: false)
            mixTracks(g, frameCount: n, transport: info)
            master(g, output: output, frameCount: n)
            addClick(g, output: output, frameCount: n, transport: info)
        }
        finishCycle(frameCount: n, began: began)
        openAhead()
    }

    /// Moves the transport on and publishes the period's numbers.
    ///
    /// Audio thread: no allocation, no locks.
    private func finishCycle(frameCount n: Int, began: Int64) {
        if state == .rolling { advance(deviceFrames: Int64(n)) }
        deviceFrame += Int64(n)
        publish()
        busiestNanoseconds = max(busiestNanoseconds, monotonicNanoseconds() - began)
        loadFrames += n
        if loadFrames >= meterWindowFrames {
            shared.board.dspLoadPermille.store(Int(busiestNanoseconds * 1000 / max(periodNanoseconds, 1)), ordering: .relaxed)
            busiestNanoseconds = 0
            loadFrames = 0
        }
    }

    /// Audio thread.
    func deviceDidFail(code: Int32) {
        shared.board.deviceErrorCode.store(code, ordering: .releasing)
        endTakes()
        state = .stopped
        publish()
    }

    // MARK: - Graph and commands

    /// Takes a waiting graph; its new voices ask the disk for their material (a little ahead
    /// while rolling, so the old material plays until the new is there).
    ///
    /// Audio thread: no allocation, no locks.
    private func installPendingGraph() {
        guard let raw = shared.pendingGraph.exchange(nil, ordering: .acquiringAndReleasing) else { return }
        // The old graph may be freed once this one is in: no worker may still be in it.
        closeAhead()
        let ref = Unmanaged<Graph>.fromOpaque(raw)
        graph = ref
        // Under time-pitch the mix is read ahead of the playhead: hand over ahead of that.
        let ahead = handoverFrames + (timePitch.engaged ? max(0, (mixTimePitch?.seq ?? seq) - seq) : 0)
        ref._withUnsafeGuaranteedRef { g in
            for i in 0..<g.trackCount {
                g.stripTable[i]._withUnsafeGuaranteedRef { strip in
                    strip.takeOverFromPredecessor()
                    strip.install(automation: g.automationTable[i])
                    let voice = strip.voice
                    guard voice.wantedEpoch != epoch else { return }
                    if state == .rolling {
                        voice.requestSeek(epoch: epoch, seqStart: seq + ahead, timelineStart: timeline(afterRolling: ahead),
                                          route: pendingRoute ?? route, continuesOld: false)
                    } else {
                        voice.requestSeek(epoch: epoch, seqStart: seq, timelineStart: position, route: route, continuesOld: false)
                    }
                }
            }
            shared.board.installedGeneration.store(g.generation, ordering: .releasing)
        }
        reader.signal()
    }

    /// Applies queued commands in order, with a stop asked for between two of them applied
    /// between them.
    ///
    /// Audio thread: no allocation, no locks.
    private func applyCommands() {
        let stopWanted = shared.stopSerial.load(ordering: .acquiring)
        var applied = handledStopSerial
        while let command = shared.commands.pop() {
            if stopWanted > handledStopSerial && stopWanted < command.serial {
                stopRolling()
                handledStopSerial = stopWanted
            }
            apply(command)
            applied = max(applied, command.serial)
        }
        if stopWanted > handledStopSerial {
            stopRolling()
            handledStopSerial = stopWanted
        }
        applied = max(applied, handledStopSerial)
        // What the commands did is published before they are acknowledged, so a front-end
        // that waited for them reads their effect.
        publish()
        if applied > shared.board.appliedSerial.load(ordering: .relaxed) {
            shared.board.appliedSerial.store(applied, ordering: .releasing)
        }
    }

    /// Publishes the transport's numbers.
    ///
    /// Audio thread: no allocation, no locks.
    @inline(__always)
    func publish() {
        let board = shared.board
        board.positionFrame.store(position, ordering: .relaxed)
        board.deviceFrame.store(deviceFrame, ordering: .relaxed)
        board.transport.store(state.rawValue, ordering: .releasing)
        // The screen follows a moving transport by itself; a change of state, or a stopped
        // transport moved (a locate, another JACK client's), wakes it.
        if state != publishedState || (state == .stopped && position != publishedStoppedPosition) {
            publishedState = state
            publishedStoppedPosition = position
            EngineActivity.shared.signal()
        }
    }
}
