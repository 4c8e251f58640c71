import TapedeckCore
import TapedeckDSP
import TapedeckEngine
import TapedeckTransport

/// The screen's (and its session owner's, ``OwnedSession``) handle on the transport: the only
/// way the UI drives audio.
///
/// Every method is called on the UI (main) thread only, and must return quickly. The screen
/// calls ``snapshot()`` about 30 times a second while the transport moves, and a few times a
/// second when idle. ``Transport`` is the implementation (below, in this file); tests drive
/// the screen with a fake.
public protocol TransportLink: AnyObject {
    /// The session changed whole (regions, tracks, chains, an undo): follow it. UI thread.
    func update(session: Session)
    /// Mixer values the user moved, exactly these (the session holds them already): the
    /// transport writes each alone, never a whole mixer over a controller's newer move. UI thread.
    func apply(_ changes: [MixerChange])
    /// A node's parameters or bypasses the user moved, exactly these (the session holds them
    /// already): written to the playing nodes, no new graph. UI thread.
    func apply(_ changes: [ChainValueChange])
    /// Starts playback at `fromFrame`. UI thread.
    func play(fromFrame: Int64)
    /// Stops playback or recording; the playhead stays where it is. UI thread.
    func stop()
    /// Starts recording the armed tracks at `fromFrame`. Returns nil when recording started,
    /// otherwise why not, as one line for the message line. UI thread.
    func record(fromFrame: Int64) -> String?
    /// Moves the playhead, playing or not. UI thread.
    func locate(frame: Int64)
    /// Playback speed ratio (1 = as recorded). UI thread.
    func setSpeed(_ ratio: Double)
    /// Whether speed changes pitch (varispeed) or not (stretch). UI thread.
    func setMode(_ mode: PlaybackMode)
    /// Pitch shift in semitones, applied in stretch mode. UI thread.
    func setPitch(semitones: Double)
    /// The loop range and whether playback cycles over it. UI thread.
    func setLoop(_ range: FrameRange?, enabled: Bool)
    /// The punch range and whether recording is limited to it. UI thread.
    func setPunch(_ range: FrameRange?, enabled: Bool)
    /// The transport's state now. UI thread; cheap (a copy, no waiting on the audio thread).
    func snapshot() -> TransportSnapshot
    /// Devices the user may choose from, by name. UI thread.
    func devices() -> [String]
    /// Switches to the device called `name`; nil on success, else why not. UI thread.
    func selectDevice(_ name: String) -> String?
    /// Takes finished since the last call (by ``stop()``, a punch end or a failure), each
    /// handed over once; the screen puts them on their tracks. UI thread.
    func collectFinishedTakes() -> [FinishedTake]
    /// The metronome: off, while recording (the count-in included), or always. UI thread.
    func setClick(_ mode: ClickMode)
    /// Bars of count-in before the record point (0: none). UI thread.
    func setCountIn(bars: Int)
    /// Retroactive capture: keeps the last seconds heard while listening as takes, handed
    /// over through ``collectFinishedTakes()``. Nil when kept, else why not. UI thread.
    func keepRetro() -> String?
    /// Resets the meters: clip lights out, the master's loudness measured afresh. UI thread.
    func resetMeters()
    /// MIDI learn: binds the next controller moved to what `target` names (nil cancels).
    /// The binding comes back through ``collectMIDIChanges()``. UI thread.
    func learnController(for target: MIDIBinding?)
    /// What MIDI changed since the last call (a binding learnt, bound controllers moved,
    /// automation written by hand), for the screen's session. UI thread.
    func collectMIDIChanges() -> MIDIChanges
    /// Transport requests from MIDI since the last call (machine control, a surface's
    /// buttons), which the screen carries out as its control socket's commands. UI thread.
    func collectMachineRequests() -> [MachineRequest]
    /// Ends the pass running; playback rolls on. UI thread.
    func stopRecording()
    /// The automation lanes being written by hand right now (touch, latch, write), each as it
    /// stands: the screen draws them while the pass runs. UI thread.
    func automationBeingWritten() -> [AutomationWrite]
    /// The takes being recorded right now, growing as the writer writes them: the screen
    /// draws their waveforms while recording. UI thread.
    func liveTakes() -> [LiveTake]
}

extension TransportLink {
    /// No takes: for links that cannot record for real.
    public func collectFinishedTakes() -> [FinishedTake] { [] }
    /// No click: for links without sound.
    public func setClick(_ mode: ClickMode) {}
    /// No count-in: for links that cannot record for real.
    public func setCountIn(bars: Int) {}
    /// Nothing to keep without a device.
    public func keepRetro() -> String? { "retroactive capture needs an audio device (the screen listens while a track is armed)" }
    /// No clip lights to put out.
    public func resetMeters() {}
    /// No MIDI: nothing to learn.
    public func learnController(for target: MIDIBinding?) {}
    /// No MIDI: nothing changes.
    public func collectMIDIChanges() -> MIDIChanges { MIDIChanges() }
    /// No MIDI: nothing asked.
    public func collectMachineRequests() -> [MachineRequest] { [] }
    /// A link that cannot record for real has no pass to end but stops as asked.
    public func stopRecording() { stop() }
    /// Nothing written by hand.
    public func automationBeingWritten() -> [AutomationWrite] { [] }
    /// Nothing recorded.
    public func liveTakes() -> [LiveTake] { [] }
}

extension Transport: TransportLink {
    /// The lanes being written (``Transport/automationInProgress``).
    public func automationBeingWritten() -> [AutomationWrite] { automationInProgress }

    /// Follows the edited session: its graph is built on a worker and swapped in by a later
    /// snapshot (problems come back through one), so an edit never waits on files or an
    /// offline stretch.
    public func update(session: Session) { followInBackground(session: session) }

    /// Rolls from `fromFrame`.
    public func play(fromFrame: Int64) { play(from: fromFrame) }

    /// Starts a pass over the armed tracks; nil when it started, else why not.
    public func record(fromFrame: Int64) -> String? {
        do {
            try record(RecordRequest(fromFrame: fromFrame))
            return nil
        } catch {
            return "\(error)"
        }
    }

    /// Moves the playhead.
    public func locate(frame: Int64) { locate(to: frame) }

    /// Speed ratio, clamped to what time-pitch allows.
    public func setSpeed(_ ratio: Double) {
        var settings = timePitch
        settings.speed = min(max(ratio, TimePitchSettings.minimumSpeed), TimePitchSettings.maximumSpeed)
        setTimePitch(settings)
    }

    /// Varispeed or stretch.
    public func setMode(_ mode: PlaybackMode) {
        var settings = timePitch
        settings.mode = mode == .varispeed ? .varispeed : .stretch
        setTimePitch(settings)
    }

    /// Pitch shift (heard in stretch mode).
    public func setPitch(semitones: Double) {
        var settings = timePitch
        settings.pitchSemitones = min(max(semitones, -TimePitchSettings.maximumPitchSemitones), TimePitchSettings.maximumPitchSemitones)
        setTimePitch(settings)
    }

    /// The metronome mode.
    public func setClick(_ mode: ClickMode) { clickMode = mode }

    /// Bars of count-in.
    public func setCountIn(bars: Int) { countInBars = max(0, bars) }

    /// Keeps the last seconds heard; nil when kept, else why not.
    public func keepRetro() -> String? {
        do {
            try keepRetro(paths: [:])
            return nil
        } catch {
            return "\(error)"
        }
    }
}
