import Synchronization
import TapedeckIO
import TapedeckCore
import TapedeckDSP
#if canImport(Glibc)
import Glibc
#endif

/// The real-time engine: one audio thread moving periods between the device and lock-free
/// rings, one disk thread moving the rings to and from files.
///
/// Use from one control thread: `init` → ``start()`` → poll ``status()`` / ``drainXruns()`` →
/// ``stop()`` (or wait for ``isDone``) → ``finish()``.
public final class Engine: @unchecked Sendable {
    /// The device configuration in use.
    public let configuration: DeviceConfiguration
    /// Frames at the take's start that come before its timeline position: the round-trip
    /// latency when overdubbing, 0 otherwise.
    public let takeLatencyFrames: Int64

    let device: AudioDevice
    let options: EngineOptions
    let take: TakeRequest?
    let plan: PlaybackPlan?
    let board: StatusBoard
    let commands = SPSCQueue<EngineCommand>(capacity: 64)
    let xrunEvents = SPSCQueue<XrunEvent>(capacity: 4096)
    let diskFailed = Atomic<Bool>(false)
    let audioDone = Atomic<Bool>(false)

    // Audio-thread buffers, allocated here once.
    let periodFrames: Int
    let captureBuffers: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    let selectedCapture: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    /// The take's input chain, if any, and the buffers it processes (a copy of the selected
    /// channels, so the dry input stays available for a dry copy).
    let inputChain: ChainInstance?
    let wetBuffers: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    /// What the capture ring takes each period: the wet channels, then (keeping both) the dry.
    let ringSources: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    /// Channels of the take itself (the ring holds twice as many when a dry copy is kept).
    let takeChannelCount: Int
    var dryWriter: AudioFileWriter?
    let outputBuffers: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    let captureRing: FrameRing?
    let trackRings: [FrameRing]
    /// Each track's playback path (ring → time-pitch → chain), in plan order.
    let voices: [TrackVoice]
    let trackGains: UnsafeMutablePointer<Float>
    /// The master chain on the stereo mix, if the plan has one.
    let masterChain: ChainInstance?
    /// The metronome, when ``EngineOptions/click`` asks for one, and the period it renders.
    let clickNode: MetronomeNode?
    let clickBuffer: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    /// The click's settings as plain values, so the audio thread copies no arrays: its output
    /// channels (0-based), whether it sounds only while recording, and where it stops.
    let clickOutputs: UnsafeMutablePointer<Int>
    let clickOutputCount: Int
    let clickRecordingOnly: Bool
    let clickUntilFrame: Int64
    /// The take's gate (``TakeRequest/gate``), held as a plain value for the audio thread.
    let takeGate: FrameRange?
    /// Whether the audio thread writes periods to the device (playback, click or monitoring).
    let writesOutput: Bool
    /// ``EngineOptions/monitorInput``, held as a plain value for the audio thread.
    let monitorsInput: Bool
    /// Frames the take's input chain delays what is recorded and monitored.
    public var inputChainLatencyFrames: Int { inputChain?.latencyFrames ?? 0 }
    /// The last seconds of input, when ``EngineOptions/retro`` asks for them.
    public let retroBuffer: RetroBuffer?
    /// Timeline frame of the retro buffer's first frame: the transport start minus the
    /// round trip, so frame k of the buffer was played at timeline `retroTimelineOrigin + k`.
    public let retroTimelineOrigin: Int64
    /// Set (releasing) once every voice has its time-pitch processors; the audio thread only
    /// engages them after seeing it (acquiring).
    let timePitchReady = Atomic<Bool>(false)
    let meterPeak: UnsafeMutablePointer<Float>
    let meterSquares: UnsafeMutablePointer<Double>

    // Disk-thread state.
    var writer: AudioFileWriter?
    var streamers: [TrackStreamer] = []
    /// Next timeline frame each track's streamer renders (disk thread after start).
    var trackCursors: [Int64] = []
    /// Frames the disk thread hands the writer at once.
    let diskBlockFrames = 4096
    let diskBuffers: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    private var audioThread: RealtimeThread?
    private var diskThread: RealtimeThread?
    private var started = false
    private var finished = false

    /// Opens the take file (after writing its marker) and every playback file, and allocates
    /// every buffer. Nothing runs until ``start()``. Control thread.
    public init(device: AudioDevice, take: TakeRequest?, playback: PlaybackPlan?, options: EngineOptions = EngineOptions()) throws {
        let config = device.configuration
        self.configuration = config
        self.device = device
        self.options = options
        self.take = take
        self.plan = playback
        let periodFrames = config.periodFrames
        self.periodFrames = periodFrames
        let inputChannels = take?.deviceChannels ?? options.retro?.deviceChannels
        if let inputChannels {
            guard config.captureChannels > 0 else { throw DeviceError(device: config.name, reason: "it was not opened for capture") }
            guard !inputChannels.isEmpty else { throw DeviceError(device: config.name, reason: "no input channels chosen") }
            for ch in inputChannels where ch < 1 || ch > config.captureChannels {
                throw DeviceError(device: config.name, reason: "input channel \(ch) does not exist (the device has \(config.captureChannels))")
            }
        }
        if let playback {
            guard config.playbackChannels > 0 else { throw DeviceError(device: config.name, reason: "it was not opened for playback") }
            guard playback.sampleRate == config.sampleRate else {
                throw DeviceError(device: config.name, reason: "runs at \(config.sampleRate) Hz but the material is \(playback.sampleRate) Hz")
            }
        }
        var master: ChainInstance?
        if let chain = playback?.masterChain, !chain.entries.isEmpty {
            let instance = chain.instantiate()
            instance.prepare(format: NodeFormat(sampleRate: Double(config.sampleRate), channelCount: 2), maxFrames: periodFrames)
            master = instance
        }
        masterChain = master
        if let click = options.click {
            guard config.playbackChannels > 0 else { throw DeviceError(device: config.name, reason: "it was not opened for playback (the click needs it)") }
            for ch in click.outputChannels where ch < 1 || ch > max(config.playbackChannels, 2) {
                throw DeviceError(device: config.name, reason: "click output channel \(ch) does not exist (the device has \(config.playbackChannels))")
            }
            clickOutputCount = click.outputChannels.count
            clickOutputs = .allocate(capacity: max(click.outputChannels.count, 1))
            for (i, ch) in click.outputChannels.enumerated() { clickOutputs[i] = ch - 1 }
            clickRecordingOnly = click.recordingOnly
            clickUntilFrame = click.untilFrame ?? Int64.max
            let node = MetronomeNode()
            node.parameters.set(0, click.levelDecibels)
            node.prepare(format: NodeFormat(sampleRate: Double(config.sampleRate), channelCount: 1), maxFrames: periodFrames)
            clickNode = node
        } else {
            clickNode = nil
            clickOutputCount = 0
            clickOutputs = .allocate(capacity: 1)
            clickRecordingOnly = false
            clickUntilFrame = Int64.max
        }
        takeGate = take?.gate
        monitorsInput = options.monitorInput
        writesOutput = playback != nil || options.click != nil || (options.monitorInput && take != nil)
        if options.monitorInput && take != nil && config.playbackChannels == 0 {
            throw DeviceError(device: config.name, reason: "it was not opened for playback (monitoring needs it)")
        }
        // What an overdub hears comes out this much later than the timeline says: the device
        // round trip plus the master chain's look-ahead (track chains are primed away).
        takeLatencyFrames = ((take != nil || options.retro != nil) && playback != nil)
            ? config.roundTripLatencyFrames + options.latencyOffsetFrames + Int64(master?.latencyFrames ?? 0) : 0
        board = StatusBoard(meterCount: inputChannels?.count ?? 0)
        if let retro = options.retro {
            retroBuffer = RetroBuffer(seconds: retro.seconds, sampleRate: config.sampleRate, channelCount: inputChannels?.count ?? 1)
        } else {
            retroBuffer = nil
        }
        retroTimelineOrigin = (playback?.startFrame ?? options.transportStartFrame) - takeLatencyFrames

        func buffers(_ count: Int) -> UnsafeMutablePointer<UnsafeMutablePointer<Float>> {
            let p = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: max(count, 1))
            for i in 0..<max(count, 1) {
                p[i] = .allocate(capacity: periodFrames)
                p[i].initialize(repeating: 0, count: periodFrames)
            }
            return p
        }
        captureBuffers = buffers(config.captureChannels)
        clickBuffer = buffers(1)
        outputBuffers = buffers(max(config.playbackChannels, 2))
        let selected = inputChannels ?? []
        selectedCapture = .allocate(capacity: max(selected.count, 1))
        for (i, ch) in selected.enumerated() { selectedCapture[i] = captureBuffers[ch - 1] }
        meterPeak = .allocate(capacity: max(selected.count, 1) + 2)
        meterPeak.initialize(repeating: 0, count: max(selected.count, 1) + 2)
        meterSquares = .allocate(capacity: max(selected.count, 1))
        meterSquares.initialize(repeating: 0, count: max(selected.count, 1))
        let captureCapacity = Int(options.captureRingSeconds * Double(config.sampleRate)) + periodFrames
        takeChannelCount = selected.count
        let keepDry = take?.dryPath != nil
        if let chain = take?.inputChain, !chain.entries.isEmpty {
            let instance = chain.instantiate()
            instance.prepare(format: NodeFormat(sampleRate: Double(config.sampleRate), channelCount: selected.count),
                             maxFrames: periodFrames)
            inputChain = instance
        } else {
            inputChain = nil
        }
        wetBuffers = buffers(selected.count)
        ringSources = .allocate(capacity: max(selected.count * 2, 1))
        for i in 0..<selected.count {
            ringSources[i] = inputChain == nil || take?.recordsDry == true ? selectedCapture[i] : wetBuffers[i]
            ringSources[selected.count + i] = selectedCapture[i]
        }
        captureRing = take == nil ? nil
            : FrameRing(channelCount: selected.count * (keepDry ? 2 : 1), capacityFrames: captureCapacity)
        let tracks = playback?.tracks ?? []
        let playbackCapacity = Int(options.playbackRingSeconds * Double(config.sampleRate)) + periodFrames + 4096
        let rings = tracks.map { FrameRing(channelCount: $0.channelCount, capacityFrames: playbackCapacity) }
        trackRings = rings
        voices = tracks.indices.map { i in
            TrackVoice(ring: rings[i], channelCount: tracks[i].channelCount, periodFrames: periodFrames,
                       chain: tracks[i].chain, sampleRate: config.sampleRate, waitNanoseconds: options.ringWaitNanoseconds)
        }
        trackGains = .allocate(capacity: max(tracks.count * 2, 1))
        for (i, t) in tracks.enumerated() {
            let g = t.busGains
            trackGains[2 * i] = g.left
            trackGains[2 * i + 1] = g.right
        }

        diskBuffers = .allocate(capacity: max(selected.count * 2, 1))
        for i in 0..<max(selected.count * 2, 1) { diskBuffers[i] = .allocate(capacity: diskBlockFrames) }
        trackCursors = tracks.map { _ in playback?.startFrame ?? 0 }
        if let playback, !playback.timePitch.isIdentity { attachTimePitch() }
        if let playback {
            streamers = try playback.tracks.map { t throws(AudioFileError) in try TrackStreamer(track: t, blockFrames: 4096) }
        }
        if let take {
            if let marker = take.marker { try marker.write(forAudio: take.path) }
            let format = AudioFileFormat(container: take.container, encoding: take.encoding,
                                         sampleRate: config.sampleRate, channelCount: selected.count)
            do {
                writer = try AudioFileWriter(path: take.path, format: format, peakPath: take.peakPath, metadata: take.metadata)
            } catch {
                if take.marker != nil { TakeMarker.remove(forAudio: take.path) }
                throw error
            }
            writer?.updateHeader()
            if let dryPath = take.dryPath {
                dryWriter = try AudioFileWriter(path: dryPath, format: format)
            }
        }
    }

    deinit {
        if started && !finished { _ = try? finish() }
        for i in 0..<max(configuration.captureChannels, 1) { captureBuffers[i].deallocate() }
        captureBuffers.deallocate()
        for i in 0..<max(configuration.playbackChannels, 2) { outputBuffers[i].deallocate() }
        outputBuffers.deallocate()
        selectedCapture.deallocate()
        meterPeak.deallocate()
        meterSquares.deallocate()
        trackGains.deallocate()
        masterChain?.release()
        clickNode?.release()
        clickBuffer[0].deallocate()
        clickBuffer.deallocate()
        clickOutputs.deallocate()
        for i in 0..<max(takeChannelCount * 2, 1) { diskBuffers[i].deallocate() }
        for i in 0..<max(takeChannelCount, 1) { wetBuffers[i].deallocate() }
        wetBuffers.deallocate()
        ringSources.deallocate()
        inputChain?.release()
        diskBuffers.deallocate()
    }

    /// Prefills the playback rings, starts the device, the disk thread and the audio thread.
    /// Control thread.
    public func start() throws {
        guard !started else { return }
        for i in trackRings.indices { fillTrackRing(i) }
        let disk = RealtimeThread { [self] in diskLoop() }
        guard disk.start(priority: 0, realtime: false) else {
            throw DeviceError(device: configuration.name, reason: "cannot start the disk thread")
        }
        diskThread = disk
        do { try device.start() } catch {
            audioDone.store(true, ordering: .releasing)
            disk.join()
            diskThread = nil
            _ = try? writer?.close()
            throw error
        }
        board.state.store(EngineState.running.rawValue, ordering: .releasing)
        let audio = RealtimeThread { [self] in audioLoop() }
        guard audio.start(priority: 70, realtime: options.realtimePriority) else {
            audioDone.store(true, ordering: .releasing)
            disk.join()
            throw DeviceError(device: configuration.name, reason: "cannot start the audio thread")
        }
        audioThread = audio
        started = true
    }

    /// Asks the audio thread to finish at the end of its period. Control thread.
    public func stop() { commands.push(.stop) }

    /// Changes a track's fader and pan while playing. Control thread.
    public func setTrackMix(track: Int, gain: Float, pan: Double) {
        guard let plan, plan.tracks.indices.contains(track) else { return }
        var t = plan.tracks[track]
        t.gain = gain
        t.pan = pan
        let g = t.busGains
        commands.push(.setTrackGains(track: Int32(track), left: g.left, right: g.right))
    }

    /// Changes speed, mode and pitch while playing (through the command queue: the audio
    /// thread applies it at the next period). Control thread.
    public func setTimePitch(_ settings: TimePitchSettings) {
        if !settings.isIdentity { attachTimePitch() }
        commands.push(.setTimePitch(speed: settings.speed, varispeed: settings.mode == .varispeed,
                                    pitchSemitones: settings.pitchSemitones))
    }

    /// Gives every voice its stretcher and varispeed, then publishes them to the audio thread.
    /// Control thread; does the allocating (and Rubber Band's warm-up) so the audio thread
    /// never has to.
    private func attachTimePitch() {
        guard !timePitchReady.load(ordering: .acquiring) else { return }
        for v in voices { v.attachTimePitch(sampleRate: configuration.sampleRate, maxFrames: periodFrames) }
        timePitchReady.store(true, ordering: .releasing)
    }

    /// Whether the audio thread has ended (duration reached, playback ended, stop, failure).
    public var isDone: Bool { audioDone.load(ordering: .acquiring) }

    /// A snapshot for display. Control thread.
    public func status() -> EngineStatus {
        let meters = board.meterCount
        var peaks: [Float] = [], rms: [Float] = []
        for i in 0..<meters {
            peaks.append(Float(bitPattern: board.peakBits[i].load(ordering: .relaxed)))
            rms.append(Float(bitPattern: board.rmsBits[i].load(ordering: .relaxed)))
        }
        let outputs = [0, 1].map { Float(bitPattern: board.outputPeakBits[$0].load(ordering: .relaxed)) }
        return EngineStatus(
            state: EngineState(rawValue: board.state.load(ordering: .acquiring)) ?? .idle,
            positionFrame: board.positionFrame.load(ordering: .relaxed),
            recordedFrames: board.recordedFrames.load(ordering: .relaxed),
            peaks: peaks, rms: rms, outputPeaks: plan == nil ? [] : outputs,
            xrunCount: board.xrunCount.load(ordering: .relaxed),
            captureRingFill: captureRing.map { Double($0.availableFrames) / Double($0.capacityFrames) } ?? 0,
            captureRingHighWaterFrames: board.captureHighWaterFrames.load(ordering: .relaxed),
            dspLoad: Double(board.dspLoadPermille.load(ordering: .relaxed)) / 1000,
            playbackRingFill: Double(board.playbackFillPermille.load(ordering: .relaxed)) / 1000,
            diskFreeBytes: board.diskFreeBytes.load(ordering: .relaxed),
            lastError: errorText())
    }

    private var collectedXruns: [XrunEvent] = []

    /// Xruns reported since the last call. Control thread.
    public func drainXruns() -> [XrunEvent] {
        var out: [XrunEvent] = []
        while let e = xrunEvents.pop() { out.append(e) }
        collectedXruns += out
        return out
    }

    /// Waits for both threads, closes the take (final header and peaks) and stops the device.
    /// Returns what happened; a failure during the run is in ``EngineSummary/error``, a
    /// failure to close the take throws. Control thread.
    public func finish() throws -> EngineSummary {
        if !finished {
            finished = true
            if started {
                commands.push(.stop)
                audioThread?.join()
                diskThread?.join()
            }
            device.stop()
        }
        _ = drainXruns()
        var closeError: AudioFileError?
        if let w = writer {
            writer = nil
            do { try w.close() } catch { closeError = error }
        }
        if let w = dryWriter {
            dryWriter = nil
            do { try w.close() } catch { closeError = closeError ?? error }
        }
        if let closeError { board.fail(closeError.description) }
        if board.state.load(ordering: .relaxed) == EngineState.running.rawValue {
            board.state.store(EngineState.finished.rawValue, ordering: .releasing)
        }
        return EngineSummary(takeFrames: board.recordedFrames.load(ordering: .acquiring), xruns: collectedXruns,
                             latencyFrames: takeLatencyFrames, error: errorText(),
                             positionFrame: board.positionFrame.load(ordering: .acquiring))
    }

    /// The first failure, in words: a disk error, or the device code the audio thread left.
    func errorText() -> String? {
        if let text = board.errorText.withLock({ $0 }) { return text }
        let code = board.deviceErrorCode.load(ordering: .acquiring)
        if code != 0 { return DeviceError.alsa(configuration.name, "stopped", code).description }
        return nil
    }
}
