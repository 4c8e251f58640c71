import Foundation
import TapedeckCore
import TapedeckDSP
import TapedeckEngine
import TapedeckIO
import TapedeckUI

/// The screen's ``TransportLink`` over the real-time ``Engine``: each play or record opens
/// the device, builds a plan and runs one engine; stop finishes it and closes the device.
///
/// Everything runs on the UI thread. Starting costs a device open and a one-second prefill of
/// the playback rings; stopping joins the engine's threads, which end within a period. No
/// failure escapes: a device or file problem becomes ``TransportSnapshot/lastError`` (shown
/// once) and the transport is stopped.
final class EngineTransport: TransportLink {
    /// What the running engine is doing.
    enum Activity {
        /// Playing; `thenLoop` when this run ends at the loop's end and the loop follows.
        case playing(thenLoop: Bool)
        /// Recording a take (with the other tracks playing).
        case recording(TakeInProgress)
    }

    /// The engine, and what it is for.
    struct Run {
        let engine: Engine
        let activity: Activity
        /// Audible track indices the plan was built from, in plan order (for live mixes).
        let planTracks: [Int]
        /// Tracks left out of the plan because their input is heard instead (auto monitoring).
        var silenced: Set<Int> = []
    }

    var session: Session
    let folder: SessionFolder?
    let peaks: PeakCache
    var device: ScreenDevice
    var run: Run?
    /// The playhead while stopped (while running, the engine's position is).
    var position: Int64 = 0
    var speed = 1.0
    var mode = PlaybackMode.varispeed
    var pitchSemitones = 0.0
    var loop: FrameRange?
    var loopEnabled = false
    var punch: FrameRange?
    var punchEnabled = false
    /// A problem not yet reported; handed out in one snapshot.
    var pendingError: String?
    /// News not yet reported (the monitoring latency); handed out in one snapshot.
    var pendingNotice: String?
    /// Takes closed and not yet collected by the screen.
    var finishedTakes: [FinishedTake] = []
    /// When the metronome sounds.
    var clickMode = ClickMode.off
    /// Bars of count-in before a recording's record point.
    var countInBars = 1
    /// The retroactive-capture run while stopped with a track armed (see +Retro).
    var listener: Listener?
    /// Set when listening failed to start, so it is not retried every snapshot; cleared
    /// when the session, the device or the transport changes.
    var listenRefused = false
    /// Why listening could not start, for the retro key.
    var listenProblem: String?
    /// The last snapshot's xrun count, kept after the engine is gone so the bar does not
    /// flicker back to 0 between runs.
    var xrunsSoFar = 0

    /// A link for `session` (saved in `folder`, or untitled) playing on `device`.
    init(session: Session, folder: SessionFolder?, peaks: PeakCache, device: ScreenDevice) {
        self.session = session
        self.folder = folder
        self.peaks = peaks
        self.device = device
        self.loop = session.loopRange
        self.loopEnabled = session.loopEnabled
    }

    deinit {
        if let run { run.engine.stop(); _ = try? run.engine.finish() }
        if let listener { listener.engine.stop(); _ = try? listener.engine.finish() }
    }

    // MARK: - TransportLink

    func update(session: Session) {
        let old = self.session
        self.session = session
        if old.tracks.map(\.armed) != session.tracks.map(\.armed)
            || old.tracks.map(\.inputChannels) != session.tracks.map(\.inputChannels) {
            // Another track to listen to: the listener follows at the next snapshot.
            stopListening()
            listenRefused = false
        }
        guard let run else { return }
        // Fader and pan go to the running engine; a change to what is heard (mute, solo,
        // regions, chains) needs a new plan, so playback restarts where it is. A take is
        // never cut for that: the change is heard from the next play.
        let heard = audibleTracks(session).filter { !run.silenced.contains($0) }
        if heard == run.planTracks && sameMaterial(old, session, tracks: heard) {
            for (planIndex, t) in heard.enumerated() {
                let track = session.tracks[t]
                // Only changes: the command queue is small and edits are frequent.
                guard track.gainDecibels != old.tracks[t].gainDecibels || track.pan != old.tracks[t].pan else { continue }
                run.engine.setTrackMix(track: planIndex, gain: Float(Decibels.toLinear(track.gainDecibels)), pan: track.pan)
            }
        } else if case .playing = run.activity {
            play(fromFrame: currentPosition())
        }
    }

    func play(fromFrame: Int64) {
        stopListening()
        endRun()
        position = max(0, fromFrame)
        // The engine loops from where it starts, so a play before or inside the loop range
        // first runs to the loop's end, then a looping run takes over (see snapshot()).
        if loopEnabled, let l = loop, l.frameCount > 0, position < l.endFrame {
            if position == l.startFrame {
                startPlayback(from: l.startFrame, to: l.endFrame, loop: true, thenLoop: false)
            } else {
                startPlayback(from: position, to: l.endFrame, loop: false, thenLoop: true)
            }
        } else {
            startPlayback(from: position, to: nil, loop: false, thenLoop: false)
        }
    }

    func stop() {
        guard let run else { return }
        run.engine.stop()
        endRun()
    }

    func record(fromFrame: Int64) -> String? {
        stopListening()
        endRun()
        position = max(0, fromFrame)
        return startRecording(from: position)
    }

    func locate(frame: Int64) {
        guard let run else { position = max(0, frame); return }
        // Moving a take would tear it in two; the playhead stays with the recording.
        guard case .playing = run.activity else { return }
        play(fromFrame: frame)
    }

    func setSpeed(_ ratio: Double) {
        speed = min(max(ratio, TimePitchSettings.minimumSpeed), TimePitchSettings.maximumSpeed)
        sendTimePitch()
    }

    func setMode(_ mode: PlaybackMode) {
        self.mode = mode
        sendTimePitch()
    }

    func setPitch(semitones: Double) {
        pitchSemitones = min(max(semitones, -TimePitchSettings.maximumPitchSemitones), TimePitchSettings.maximumPitchSemitones)
        sendTimePitch()
    }

    func setLoop(_ range: FrameRange?, enabled: Bool) {
        let changed = range != loop || enabled != loopEnabled
        loop = range
        loopEnabled = enabled
        // The plan fixed the loop when it started: a changed loop is heard at once only
        // through a new plan.
        if changed, let run, case .playing = run.activity { play(fromFrame: currentPosition()) }
    }

    func setPunch(_ range: FrameRange?, enabled: Bool) {
        punch = range
        punchEnabled = enabled
    }

    func snapshot() -> TransportSnapshot {
        if let run, run.engine.isDone { endedByItself(run) }
        if let run, case .recording(let take) = run.activity, let p = take.punch,
           run.engine.status().positionFrame >= p.endFrame + run.engine.takeLatencyFrames {
            // Past the punch end (and the round trip): the gate has kept all it will.
            endRun()
        }
        listenWhenIdle()
        var snap = TransportSnapshot(state: .stopped, positionFrame: position, deviceName: device.name, isOffline: false)
        snap.trackLevels = OfflineTransport.peakLevels(session: session, peaks: peaks, at: position, moving: false)
        snap.xrunCount = xrunsSoFar
        snap.diskSecondsLeft = diskSecondsLeft(freeBytes: nil)
        if let run {
            let status = run.engine.status()
            snap.positionFrame = status.positionFrame
            snap.xrunCount = status.xrunCount
            snap.dspLoad = status.dspLoad
            xrunsSoFar = status.xrunCount
            snap.outputLevels = status.outputPeaks.map(EngineTransport.level)
            snap.trackLevels = OfflineTransport.peakLevels(session: session, peaks: peaks, at: status.positionFrame, moving: true)
            switch run.activity {
            case .playing:
                snap.state = .playing
            case .recording(let take):
                snap.state = .recording
                // The armed track shows what comes in, channel by channel.
                if snap.trackLevels.indices.contains(take.trackIndex) {
                    snap.trackLevels[take.trackIndex] = zip(status.peaks, status.rms).map { peak, rms in
                        ChannelLevel(peakDecibels: EngineTransport.decibels(peak), rmsDecibels: EngineTransport.decibels(rms))
                    }
                }
                snap.diskSecondsLeft = diskSecondsLeft(freeBytes: status.diskFreeBytes >= 0 ? status.diskFreeBytes : nil)
            }
        }
        snap.isListening = listener != nil && run == nil
        snap.lastError = pendingError
        pendingError = nil
        snap.notice = pendingNotice
        pendingNotice = nil
        return snap
    }

    func devices() -> [String] { device.catalog(current: device.name) }

    func selectDevice(_ name: String) -> String? {
        guard run == nil else { return "stop the transport before changing the device" }
        if name == device.name { return nil }
        // The device is free to probe only once the listener let it go.
        stopListening()
        listenRefused = false
        if let problem = device.probe(name: name, sampleRate: session.sampleRate) { return problem }
        device.name = name
        return nil
    }

    func collectFinishedTakes() -> [FinishedTake] {
        defer { finishedTakes = [] }
        return finishedTakes
    }

    func setClick(_ mode: ClickMode) { clickMode = mode }

    func setCountIn(bars: Int) { countInBars = max(0, bars) }

    // MARK: - Runs

    /// The speed, mode and pitch as the engine takes them: pitch is heard in stretch mode only.
    var timePitch: TimePitchSettings {
        TimePitchSettings(speed: speed, mode: mode == .varispeed ? .varispeed : .stretch,
                          pitchSemitones: mode == .stretch ? pitchSemitones : 0)
    }

    private func sendTimePitch() {
        guard let run, case .playing = run.activity else { return }
        run.engine.setTimePitch(timePitch)
    }

    /// Where the transport is now: the engine's position while one runs.
    func currentPosition() -> Int64 {
        run.map { $0.engine.status().positionFrame } ?? position
    }

    /// Indices of the tracks a plan of `session` plays, in plan order.
    func audibleTracks(_ session: Session) -> [Int] {
        session.tracks.indices.filter { session.isAudible(trackIndex: $0) }
    }

    /// Whether the played tracks hold the same regions and chains in both sessions.
    private func sameMaterial(_ a: Session, _ b: Session, tracks: [Int]) -> Bool {
        guard a.masterChain == b.masterChain else { return false }
        return tracks.allSatisfy { t in
            a.tracks.indices.contains(t) && a.tracks[t].regions == b.tracks[t].regions
                && a.tracks[t].playbackChain == b.tracks[t].playbackChain
        }
    }

    private func startPlayback(from: Int64, to: Int64?, loop: Bool, thenLoop: Bool) {
        do {
            var plan = try PlaybackPlan(session: session, folder: folder ?? SessionFolder(path: "."), from: from, to: to, loop: loop)
            plan.timePitch = timePitch
            let dev = try device.open(sampleRate: session.sampleRate, captureChannels: 0)
            var options = DeviceOptions.engineOptions()
            if clickMode == .always { options.click = ClickSettings() }
            let engine: Engine
            do { engine = try Engine(device: dev, take: nil, playback: plan, options: options) } catch { dev.stop(); throw error }
            do { try engine.start() } catch { dev.stop(); throw error }
            run = Run(engine: engine, activity: .playing(thenLoop: thenLoop), planTracks: audibleTracks(session))
            listenRefused = false
        } catch {
            pendingError = "cannot play: \(error)"
        }
    }

    /// Finishes the engine (asking it to stop if it still runs), keeps the playhead where it
    /// ended and hands a take over. Returns whether the run ended without a failure.
    @discardableResult
    func endRun() -> Bool {
        guard let current = run else { return true }
        run = nil
        current.engine.stop()
        var failure: String?
        var frames: Int64 = 0
        do {
            let summary = try current.engine.finish()
            position = summary.positionFrame
            failure = summary.error
            frames = summary.takeFrames
        } catch {
            position = current.engine.status().positionFrame
            failure = "\(error)"
            frames = current.engine.status().recordedFrames
        }
        if case .recording(let take) = current.activity {
            // The timeline position counts the take's latency frames too; the playhead shows
            // where the take ends on the timeline.
            finish(take, frames: frames)
        }
        if let failure { pendingError = failure }
        return failure == nil
    }

    /// The engine stopped on its own: end of material, a punch end, or a failure.
    private func endedByItself(_ ended: Run) {
        let ok = endRun()
        if ok, case .playing(thenLoop: true) = ended.activity, let l = loop, loopEnabled {
            startPlayback(from: l.startFrame, to: l.endFrame, loop: true, thenLoop: false)
        }
    }

    /// Seconds of recording left on the session's disk at the armed tracks' data rate
    /// (24-bit WAV): from the engine's measurement while recording, else `statvfs`.
    private func diskSecondsLeft(freeBytes: Int64?) -> Double? {
        var bytes = freeBytes.map(Double.init)
        if bytes == nil {
            var st = statvfs()
            guard statvfs(folder?.path ?? ".", &st) == 0 else { return nil }
            bytes = Double(st.f_bavail) * Double(st.f_frsize)
        }
        let channels = max(1, session.tracks.filter(\.armed).reduce(0) { $0 + $1.inputChannels.count })
        return (bytes ?? 0) / (Double(channels) * 3 * Double(session.sampleRate))
    }

    /// dBFS of a linear level; garbage (NaN, negative) reads as silence.
    static func decibels(_ linear: Float) -> Double {
        guard linear.isFinite, linear > 0 else { return -.infinity }
        return Decibels.fromLinear(Double(linear))
    }

    static func level(_ peak: Float) -> ChannelLevel {
        ChannelLevel(peakDecibels: decibels(peak), rmsDecibels: decibels(peak) - 3.01)
    }
}
