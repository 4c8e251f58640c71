import Foundation
import TapedeckCore
import TapedeckDSP
import TapedeckEngine
import TapedeckIO

/// The one transport every front-end drives — the screen, `record`, `play`, and remote
/// control: play, stop, locate, loop, punch, count-in, click, speed, monitoring, recording
/// passes over every armed track, take placement with latency compensation, retroactive
/// capture, meters with peak hold and clip lights.
///
/// It owns the long-lived ``Engine`` of one open device and turns each request into engine
/// commands, atomics or a new graph. Front-ends only translate keys and flags into these
/// calls and show what ``snapshot()`` reports.
///
/// Control thread only (the screen's UI thread, a command's main thread).
public final class Transport {
    /// The device's name as the user gave it.
    public private(set) var deviceName: String
    /// Whether the device is the silent offline clock.
    public let isOffline: Bool
    /// The engine of the open device.
    public private(set) var engine: Engine
    let provider: DeviceProvider?
    let options: TransportOptions
    /// The session as the transport last heard of it.
    public internal(set) var session: Session
    /// The session's chains, parsed when their text changes: what a controller, a typed
    /// change or a lane being written reads, so none of them parses stored text.
    var chains = SessionChains()

    /// The session's chains as the transport keeps them, brought up to ``session`` (only text
    /// it has not read before is parsed). Control thread.
    public func keptChains() -> SessionChains {
        chains.update(to: session)
        return chains
    }
    /// Where the session lives (nil: untitled, or a take outside any session).
    public let folder: SessionFolder?
    /// The spec the engine plays, and the tracks that listen.
    var spec: GraphSpec
    var listening: Set<Int>
    /// Overrides of the recorded tracks' inputs for the running pass.
    var inputOverride: (chain: Chain?, channels: [Int]?)?
    /// The tracks the running (or starting) pass records.
    var recordingTracks: Set<Int> = []

    /// The loop range and whether playback cycles over it.
    public private(set) var loop: FrameRange?
    /// See ``loop``.
    public private(set) var loopEnabled = false
    /// The punch range and whether recording keeps only it.
    public private(set) var punch: FrameRange?
    /// See ``punch``.
    public private(set) var punchEnabled = false
    /// Bars of count-in before a recording's record point.
    public var countInBars = 0
    /// When the metronome sounds; heard at once while playing.
    public var clickMode = ClickMode.off {
        didSet { if pass == nil { engine.setClick(on: clickMode == .always, levelDecibels: clickLevelDecibels) } }
    }
    /// The metronome's level in dBFS.
    public var clickLevelDecibels = -6.0
    /// The speed ratio, mode and pitch shift.
    public private(set) var timePitch = TimePitchSettings.normal

    var pass: RecordingPass?
    /// What went wrong in the last pass that finished (device or disk failures, lost input);
    /// empty when it went well. A headless command turns these into its exit code.
    public internal(set) var lastPassProblems: [String] = []
    /// Takes of the last finished pass whose disk refused a write (each kept up to there).
    public internal(set) var lastPassFailures: [TakeFailure] = []
    /// The last pass's mirror copies (``RecordRequest/mirrorFolder``), in take order.
    public internal(set) var lastPassMirrors: [MirrorOutcome] = []
    /// Where the last pass's audio takes were placed from at their end (a latency that
    /// changed while they recorded is followed), in take order.
    public internal(set) var lastPassLatencies: [TakeLatency] = []
    /// Every take that stopped on a refused write, as it was said (Transport+Disk.swift).
    public internal(set) var takeFailures: [TakeFailureReport] = []
    /// The running pass's failed takes already said, and the lowest "time left" warned of.
    var saidFailedTakes: Set<Int> = []
    /// The running pass's mirrors (by take index) whose stop has been said.
    var saidFailedMirrors: Set<Int> = []
    var warnedDiskSeconds = Double.infinity
    var finishedTakes: [FinishedTake] = []
    var errors: [String] = []
    var notices: [String] = []
    var saidRealtime = false
    /// The engine's count of NaN/infinite samples when last said, and when (monotonic s).
    var saidNonFinite: Int64 = 0
    var saidNonFiniteAt = -Double.infinity
    /// The graph being built on a worker for the screen's edits (Transport+Build).
    let graphBuild = TransportGraphBuild()
    /// Seconds of input the screen keeps for retroactive capture.
    public static let screenRetroSeconds = 10.0
    var saidDeviceStop = false
    /// Since when (monotonic s) a count-in has stood at its record point waiting for the
    /// shared transport to roll, and whether that was said in this pass (Transport+Snapshot).
    var hostWaitSince: Double?
    var saidHostWait = false
    var meterHolds = MeterHolds()
    var lastStatus: EngineStatus?
    /// Every event seen, for a front-end that reports them all (the headless JSON lines).
    public internal(set) var events: [EngineEvent] = []
    /// MIDI sources, learn and what waits for the front-end (Transport+MIDI.swift).
    let midi = TransportMIDI()
    /// Automation being written by hand (Transport+AutomationWrite).
    let automation = TransportAutomation()
    /// The device's latency as last followed (Transport+Latency).
    let latencyFollow = TransportLatencyFollow()

    /// Opens the engine on `device` for `session` (saved in `folder`, or not) with the
    /// playhead at `position`. Armed tracks listen at once (meters, monitoring, retroactive
    /// memory). Throws when the device cannot run (another rate, no threads); a file or chain
    /// of the session that cannot be used is reported through the first snapshot, and the
    /// transport starts without the session's material.
    public init(session: Session, folder: SessionFolder?, device: AudioDevice, deviceName: String? = nil,
                isOffline: Bool = false, provider: DeviceProvider? = nil, options: TransportOptions = TransportOptions(),
                position: Int64 = 0, startsDevice: Bool = true) throws {
        self.session = session
        self.folder = folder
        self.options = options
        self.provider = provider
        self.deviceName = deviceName ?? device.configuration.name
        self.isOffline = isOffline
        loop = session.loopRange
        loopEnabled = session.loopEnabled
        punch = session.punchRange
        punchEnabled = session.punchEnabled
        listening = Set(session.tracks.indices.filter { session.tracks[$0].armed })
        spec = GraphSpec(tracks: [], sampleRate: session.sampleRate, tempoMap: session.tempoMap)
        engine = Engine(device: device, options: Transport.engineOptions(options, for: device), clickOutputs: options.clickOutputs)
        do { spec = try makeSpec(session) } catch {
            // A session with a missing file still opens (silent where the file was); the
            // problem is the first thing the front-end hears.
            errors.append("\(error)")
        }
        try engine.prepare(spec, position: position)
        engine.setLoop(loop, enabled: loopEnabled)
        pushMixer()
        try openMIDI()
        if startsDevice { try engine.start() }
    }

    /// Starts the device of a transport made with `startsDevice: false`: what was asked
    /// before (play, record, loop, speed) begins in its very first period. Control thread.
    public func startDevice() throws {
        try engine.start()
        _ = engine.waitUntilApplied(timeoutSeconds: 2)
    }

    deinit {
        closeMIDI()
        _ = engine.close()
    }

    /// Closes the engine: a running pass is finished and its takes handed over
    /// (``collectFinishedTakes()``). Control thread.
    public func close() {
        engine.stop()
        _ = engine.waitUntilApplied(timeoutSeconds: 1)
        finishPassIfEnded(force: true)
        engine.close()
    }

    // MARK: - Session

    /// The graph spec for `session`: every track, inputs for the listening ones (with a
    /// running pass's overrides), silent tracks when the session is not to be heard.
    func makeSpec(_ session: Session) throws -> GraphSpec { try specMaker()(session) { _ in } }

    /// Mixer values the user moved (a key, a remote surface, a headless command's OSC), as
    /// typed changes: each is written to the engine alone, so a value moved by anyone else
    /// meanwhile (a bound controller) is never written back over. While rolling, a change of
    /// a lane in touch, latch or write is written to it. Ignores a change that names nothing
    /// here or changes nothing. Control thread.
    public func apply(_ changes: [MixerChange]) {
        let frame = automation.rolling ? status.positionFrame : -1
        for change in changes {
            guard let held = change.held else { continue }
            // Written even when the session holds the value already: the engine may not (a
            // controller moved it a moment ago), and the key is the newest hand on it. What
            // names nothing here the engine ignores too.
            session.apply(held)
            // The spec follows its session (a later edit is compared against it, and a new
            // device starts from it); a file played alone has a spec of its own.
            if options.material == nil { spec.apply(held) }
            // A graph on its way (Transport+Build) gets it too: a strip new there starts at it.
            if graphBuild.isBusy { graphBuild.moved.append(held) }
            engine.set(held)
            if frame >= 0 { writeAutomation(held, at: frame) }
        }
    }

    /// A node's parameter or bypass the user moved (the chain panel's keys), as typed changes:
    /// each written to the playing node alone, without a new graph. While rolling, a parameter
    /// whose lane is in touch, latch or write is written to it. Ignores a change that names
    /// nothing here or changes nothing. Control thread.
    public func apply(_ changes: [ChainValueChange]) {
        let frame = automation.rolling ? status.positionFrame : -1
        for change in changes where change.isPlayable {
            // Written even when the session holds the value already (see the mixer's apply).
            session.apply(change, chains: &chains)
            if options.material == nil || change.place == .master { spec.apply(change) }
            // A graph on its way was made before this value: the session is built again.
            if graphBuild.isBusy { graphBuild.pending = true }
            engine.set(change)
            if frame >= 0 { writeAutomation(change, at: frame) }
        }
    }

    /// Follows a session replaced whole (an edit of its material, an undo, a command from
    /// another process): what changed in regions, chains, tracks or arming becomes a new
    /// graph that only changes what changed, without a gap (nodes diffed by identity, see
    /// ``Engine/apply(_:)``); of the mixer values, only those that differ from what the
    /// transport holds are written (``MixerChange``). A front-end that moves a mixer value
    /// hands it over with ``apply(_:)`` instead. Returns the problem when the new session
    /// cannot be played (a file gone); the engine then keeps playing the old one.
    @discardableResult
    public func follow(session new: Session) -> String? {
        follow(session: new, inBackground: false)
    }

    /// As ``follow(session:)``, but a new graph is built on a worker (opening every region's
    /// file, stretching regions offline: seconds for a long stretched region), then swapped
    /// in on this thread by a later ``snapshot()`` (Transport+Build); the old graph plays on
    /// meanwhile. For the screen, whose thread must never wait on it. Control thread.
    public func followInBackground(session new: Session) {
        follow(session: new, inBackground: true)
    }

    @discardableResult
    private func follow(session new: Session, inBackground: Bool) -> String? {
        let old = session
        session = new
        writeAutomation(from: old, to: new, at: status.positionFrame)
        if old.tempoMap != new.tempoMap { (engine.device as? any HostTransportDevice)?.publishTempo(new.tempoMap) }
        let armed = Set(new.tracks.indices.filter { new.tracks[$0].armed })
        // A running pass keeps its tracks listening.
        let wanted = armed.union(recordingTracks)
        let moved = old.mixerChanges(to: new)
        if Transport.sameMaterial(old, new) && wanted == listening {
            if graphBuild.isBusy {
                // A graph of the session before is on its way: the values go to it as well.
                graphBuild.moved += moved
                if spec.tracks.map(\.name) != session.tracks.map(\.name) { return nil }
            }
            for change in moved { engine.set(change) }
            return nil
        }
        listening = wanted
        if inBackground {
            buildInBackground(moved: moved)
            return nil
        }
        return rebuild(moved: moved)
    }

    /// Builds and applies the graph for the current session, then writes `moved` (the mixer
    /// values the caller changed; a strip new to its track starts at the session's values).
    /// Returns the problem, if any.
    @discardableResult
    func rebuild(moved: [MixerChange] = []) -> String? {
        // Built here and now: whatever a worker is building is older (Transport+Build), and
        // stops if it renders what this session does not play.
        cancelIfStale(for: session)
        let moved = graphBuild.supersede() + moved
        do {
            let next = try makeSpec(session)
            if next != spec {
                try engine.apply(next)
                spec = next
            }
            for change in moved { engine.set(change) }
            return nil
        } catch {
            let text = "\(error)"
            errors.append(text)
            // The old graph plays on: the values still reach it where its strips are the
            // session's (by name at each place).
            if spec.tracks.map(\.name) == session.tracks.map(\.name) { for change in moved { engine.set(change) } }
            return text
        }
    }

    /// Every strip's fader, pan, mute, solo and send levels, and the master fader, to the
    /// engine (atomics): for an engine just opened, which has heard nothing yet.
    func pushMixer() {
        engine.setMasterGain(decibels: session.masterGainDecibels)
        for (i, t) in session.tracks.enumerated() {
            engine.setMixer(track: i, gainDecibels: t.gainDecibels, pan: t.pan, mute: t.mute, solo: t.solo)
            for (k, send) in t.sends.enumerated() {
                engine.setSend(track: i, index: k, levelDecibels: send.levelDecibels, pan: send.pan)
            }
        }
    }

    /// Whether two sessions sound the same but for the mixer values and send levels (and markers, loop and
    /// punch ranges, which the transport follows on its own).
    static func sameMaterial(_ a: Session, _ b: Session) -> Bool {
        func stripped(_ s: Session) -> Session {
            var s = s
            for i in s.tracks.indices {
                s.tracks[i].gainDecibels = 0
                s.tracks[i].pan = 0
                s.tracks[i].mute = false
                s.tracks[i].solo = false
                for k in s.tracks[i].sends.indices {
                    s.tracks[i].sends[k].levelDecibels = 0
                    s.tracks[i].sends[k].pan = 0
                }
            }
            s.masterGainDecibels = 0
            s.markers = []
            s.loopRange = nil
            s.loopEnabled = false
            s.punchRange = nil
            s.punchEnabled = false
            return s
        }
        return stripped(a) == stripped(b)
    }

    // MARK: - Transport

    /// Where rolling stops by itself: the end of the material (or of the loop, when the
    /// loop reaches further and playback starts before its end); nil when it should not.
    func endFrame(startingAt frame: Int64) -> Int64? {
        guard options.stopsAtEnd else { return nil }
        var end = options.endFrame ?? spec.endFrame
        if loopEnabled, let l = loop, l.frameCount > 0, frame < l.endFrame { end = max(end, l.endFrame) }
        return max(end, frame)
    }

    /// Rolls from `frame`. Ignored while a recording pass runs.
    public func play(from frame: Int64) {
        guard pass == nil else { return }
        reopenIfNeeded()
        let start = Transport.clamp(frame)
        if options.waitsForTimePitchToStart && status.transport == .stopped { engine.waitForTimePitch() }
        // A shared transport (JACK's) may stand elsewhere than the playhead: it is always told.
        if engine.followsHost || status.positionFrame != start || status.transport != .stopped { engine.locate(to: start) }
        engine.setClick(on: clickMode == .always, levelDecibels: clickLevelDecibels)
        engine.setEndFrame(endFrame(startingAt: start))
        automation.playFrom = start
        engine.play()
        _ = engine.waitUntilApplied(timeoutSeconds: 0.5)
    }

    /// Stops rolling; a recording pass ends (its takes are handed over at the next snapshot).
    public func stop() {
        engine.stop()
        _ = engine.waitUntilApplied(timeoutSeconds: 0.5)
    }

    /// Moves the playhead, rolling or not. Ignored while recording (a take is never torn in two).
    public func locate(to frame: Int64) {
        guard pass == nil else { return }
        let target = Transport.clamp(frame)
        let now = status
        // Standing where it is already: nothing to move (and the disk keeps what it read).
        if now.transport == .stopped && now.positionFrame == target && !engine.followsHost { return }
        engine.locate(to: target)
        if status.transport != .stopped { engine.setEndFrame(endFrame(startingAt: target)) }
        _ = engine.waitUntilApplied(timeoutSeconds: 0.5)
    }

    /// The loop range and whether playback cycles over it; heard at once, without a gap.
    public func setLoop(_ range: FrameRange?, enabled: Bool) {
        guard range != loop || enabled != loopEnabled else { return }
        loop = range
        loopEnabled = enabled
        guard pass == nil else { return }
        engine.setLoop(range, enabled: enabled)
        if status.transport != .stopped { engine.setEndFrame(endFrame(startingAt: status.positionFrame)) }
    }

    /// The punch range and whether recording keeps only it.
    public func setPunch(_ range: FrameRange?, enabled: Bool) {
        punch = range
        punchEnabled = enabled
    }

    /// Starts building the speed and pitch processors in the background, so the first speed
    /// change is heard at once (see ``Engine/prepareTimePitch()``). Control thread.
    public func prepareTimePitch() { engine.prepareTimePitch() }

    /// Whether a speed or pitch change is waiting for its processors (heard at 1× until then).
    public var isTimePitchPending: Bool { engine.isTimePitchPending }

    /// Speed, mode and pitch, live.
    public func setTimePitch(_ settings: TimePitchSettings) {
        timePitch = settings
        engine.setTimePitch(settings)
    }

    /// The master fader.
    public func setMasterGain(decibels: Double) { engine.setMasterGain(decibels: decibels) }

    /// Resets the meters: every clip light out, peak holds dropped, and the master's
    /// loudness measured afresh.
    public func resetMeters() {
        engine.resetClipLights()
        engine.resetLoudness()
        meterHolds.resetClips()
    }

    /// A playhead the timeline can hold: never before a count-in's reach nor past 2⁶⁰.
    static func clamp(_ frame: Int64) -> Int64 { min(max(frame, 0), 1 << 60) }

    /// The engine's status (cached for one call chain).
    var status: EngineStatus {
        let s = engine.status()
        lastStatus = s
        return s
    }

    /// After the device failed, the next play tries to open it again (through the provider).
    func reopenIfNeeded() {
        guard engine.isStarted, !engine.isRunning, let provider else { return }
        do {
            let device = try provider.open(name: deviceName, sampleRate: session.sampleRate)
            try restart(on: device, name: deviceName)
        } catch {
            errors.append("cannot reopen \(deviceName): \(error)")
        }
    }

    /// The engine's options for `device`: its calibrated latency offset, where the front-end
    /// gave a way to look it up.
    static func engineOptions(_ options: TransportOptions, for device: AudioDevice) -> EngineOptions {
        var engine = options.engine
        if let offset = options.latencyOffset { engine.latencyOffsetFrames = offset(device.calibrationName) }
        return engine
    }

    /// Moves to another device: the old engine closes (finishing a pass), a new one starts
    /// where the playhead was. Control thread.
    public func restart(on device: AudioDevice, name: String) throws {
        let position = lastStatus?.positionFrame ?? 0
        close()
        let next = Engine(device: device, options: Transport.engineOptions(options, for: device), clickOutputs: options.clickOutputs)
        try next.start(spec, position: position)
        engine = next
        deviceName = name
        saidRealtime = false
        saidDeviceStop = false
        engine.setLoop(loop, enabled: loopEnabled)
        engine.setTimePitch(timePitch)
        pushMixer()
        attachMIDI()
    }

    /// Devices the user may choose from (the current one first).
    public func devices() -> [String] { provider?.catalog(current: deviceName) ?? [deviceName] }

    /// Switches to the device called `name`; nil on success, else why not.
    public func selectDevice(_ name: String) -> String? {
        guard pass == nil, status.transport == .stopped else { return "stop the transport before changing the device" }
        // The same device again is opened again only when the routing names outputs it was
        // opened without (a cue mix routed to out:3-4 since).
        let outputsNamed = session.tracks.compactMap { t -> Int? in if case .device(let c) = t.output { return c.max() } else { return nil } }.max() ?? 0
        if name == deviceName && engine.isRunning && outputsNamed <= engine.configuration.playbackChannels { return nil }
        guard let provider else { return "\(name): no other device can be opened here" }
        // A sound card opens once at a time (hw:1 is busy while open): the same one is
        // closed before it opens again. Should that open fail, it stays closed and the next
        // play opens it again.
        if name == deviceName { close() }
        do {
            let device = try provider.open(name: name, sampleRate: session.sampleRate)
            try restart(on: device, name: name)
            return nil
        } catch {
            return "\(error)"
        }
    }
}
