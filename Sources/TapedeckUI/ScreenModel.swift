import TapedeckTransport
import TapedeckCore
import TapedeckDSP
import TapedeckIO
import TapedeckSession

/// The screen's state and everything keys do to it, with no terminal involved: views draw
/// from it and tests drive it directly. UI thread only.
public final class ScreenModel {
    /// The session's one owner (its document, folder, saves, and telling the engine each
    /// change), which headless record and play host too. Every edit goes through it.
    public let owner: OwnedSession
    /// The session and its undo history.
    public var document: SessionDocument { owner.document }
    /// Where the session lives; nil for an untitled session not yet saved.
    public var folder: SessionFolder? { owner.folder }
    /// The engine (the owner's: it is told every edit there).
    public let link: any TransportLink
    /// Host-supplied behaviour (chain checks, export).
    public let hooks: ScreenHooks
    /// Key bindings.
    public let keyMap: KeyMap
    /// The session's chains, parsed when their text changes (``chain(_:_:)``), so drawing
    /// and keys never parse stored text.
    var chains = SessionChains()
    /// Waveform overviews.
    public internal(set) var peaks: PeakCache
    /// MIDI regions' notes, for the note view.
    public internal(set) var midiNotes: MIDINoteCache
    /// A freeze rendering in the background: the track's name and the job.
    var freezing: (track: String, job: FreezeJob)?
    /// Slow work beside the screen (ScreenModel+Jobs): the first runs, the rest wait their turn.
    var jobs: [QueuedJob] = []
    /// What MIDI learn binds the next controller to (nil: not learning).
    public internal(set) var learning: MIDIBinding?
    /// The quantise last typed (offered again).
    var lastQuantize = "1/16 100%"
    /// What the export dialog offers: the last export typed.
    var lastExport = "exports/mix.wav"
    /// The engine state the screen last read.
    public internal(set) var snapshot: TransportSnapshot
    /// The highlighted track.
    public internal(set) var selectedTrack = 0
    /// The panel arrow keys act on.
    public internal(set) var focus = Panel.tracks
    /// The window taking keys, if any.
    public internal(set) var overlay: Overlay?
    /// The message line: text and whether it is an error.
    public internal(set) var message: (text: String, isError: Bool)?
    /// Timeline zoom: frames per character column.
    public internal(set) var framesPerColumn: Int64
    /// First frame shown at the timeline's left edge.
    public internal(set) var viewStartFrame: Int64 = 0
    /// Columns of timeline on screen (set by the layout each frame).
    public var timelineColumns = 60
    /// Ruler in bars (true) or time.
    public internal(set) var rulerInBars = true
    /// Whether the status line shows the master's loudness (the loudness key).
    public internal(set) var showsLoudness = false
    /// Playback speed ratio.
    public internal(set) var speed = 1.0
    /// Speed mode.
    public internal(set) var mode = PlaybackMode.stretch
    /// Pitch shift in semitones.
    public internal(set) var pitchSemitones = 0
    /// Meter readings per track per channel, with hold and clip.
    public internal(set) var meters: [[MeterReading]] = []
    /// The master bus meters (left, right).
    public internal(set) var masterMeters: [MeterReading] = []
    /// The selected region, an index into the selected track's regions (nil: none; edits
    /// then act on the region under the playhead).
    public internal(set) var selectedRegion: Int?
    /// Where moves and playhead steps land.
    public internal(set) var snap = Snap.beats
    /// The region copied last, for paste.
    public internal(set) var clipboard: Region?
    /// Whether the mixer view (vertical strips) replaces the track list and timeline.
    public internal(set) var showsMixer = false
    /// In the mixer view: the master strip is selected rather than a track's.
    public internal(set) var masterStripSelected = false
    /// The selected strip's send the send keys act on (see ``currentSend(of:)``).
    public internal(set) var selectedSend = 0
    /// Tracks whose take lanes are shown, by index.
    public internal(set) var expandedTracks: Set<Int> = []
    /// Tracks whose automation lanes are shown, and the selected track's lane selected (nil:
    /// its own row); see ScreenModel+Automation.
    public internal(set) var automationShown: Set<Int> = []
    public internal(set) var selectedLane: Int?
    /// The takes being recorded and the lanes being written by hand, as of the last tick
    /// (ScreenModel+Live): drawn as they grow.
    public internal(set) var liveTakes: [LiveTake] = []
    public internal(set) var automationInProgress: [AutomationWrite] = []
    let liveColumns = LiveColumnCache()
    /// When a key last moved a control whose lane is written by hand (see ``handBase``).
    var handHeldAt: [String: Double] = [:]
    /// Whether the chain panel edits the input chain (else the playback chain).
    public internal(set) var chainIsInput = false
    /// Selected node in the chain panel.
    public internal(set) var chainNode = 0
    /// Selected parameter of that node.
    public internal(set) var chainParameter = 0
    /// When the metronome sounds.
    public internal(set) var clickMode = ClickMode.off
    /// Bars of count-in before recording starts (0: none).
    public internal(set) var countInBars = 1
    /// Rows of the help overlay on screen, and how far it scrolls (set as it is drawn): page
    /// keys move a page, and never past the end.
    public var helpPageRows = 10, helpMaxScroll = Int.max
    /// Set when the user has asked to leave.
    public internal(set) var shouldQuit = false
    /// Folder the import browser opens in.
    public var importFolder: String

    static let speedSteps = [0.25, 0.5, 0.75, 0.9, 1.0, 1.1, 1.25, 1.5, 2.0]

    /// A model for `document` (saved at `folder`, or untitled), driving `link`.
    public init(document: SessionDocument, folder: SessionFolder?, link: any TransportLink, hooks: ScreenHooks = ScreenHooks(),
                keyMap: KeyMap = KeyMap(), peaks: PeakCache? = nil, importFolder: String = ".") {
        self.owner = OwnedSession(document: document, folder: folder, link: link)
        self.link = link
        self.hooks = hooks
        self.keyMap = keyMap
        self.peaks = peaks ?? PeakCache(folder: folder)
        self.midiNotes = MIDINoteCache(folder: folder)
        self.importFolder = importFolder
        self.framesPerColumn = Int64(document.session.sampleRate) / 8
        link.setCountIn(bars: countInBars)
        link.setClick(clickMode)
        self.snapshot = link.snapshot()
    }

    /// The session being edited.
    public var session: Session { document.session }
    /// The playhead.
    public var playheadFrame: Int64 { snapshot.positionFrame }
    /// Whether the screen should poll fast (~30 times a second): the transport is moving or
    /// an export, a job (an import) or a graph build is running.
    public var isMoving: Bool { snapshot.state != .stopped || isExporting || !jobs.isEmpty || snapshot.graphPending }
    /// Whether an export is running.
    public var isExporting: Bool {
        if case .export(let job, _) = overlay, case .running = job.status { return true }
        return false
    }

    /// When the message was shown (monotonic seconds); information fades after a while,
    /// errors stay until the next key.
    var messageShownAtSeconds = 0.0
    /// Seconds an informational message stays.
    static let messageSeconds = 6.0

    /// Shows `text` on the message line.
    public func say(_ text: String, error: Bool = false) {
        message = (text, error)
        messageShownAtSeconds = MonotonicClock.seconds()
    }

    /// Reads the engine's snapshot, updates the meters and keeps the playhead in view.
    public func tick(nowSeconds: Double) {
        if let m = message, !m.isError, nowSeconds - messageShownAtSeconds > ScreenModel.messageSeconds { message = nil }
        readLink()
        followMachineControl()
        serviceJobs()
        updateMeters(nowSeconds: nowSeconds)
        if snapshot.state != .stopped { follow(snapshot.positionFrame) }
    }

    /// Folds the snapshot's levels into the meters: the screen's own hold and clip latch,
    /// merged with the engine's when it keeps them.
    private func updateMeters(nowSeconds: Double) {
        let tracks = session.tracks
        if meters.count != tracks.count { meters = tracks.map { _ in [MeterReading()] } }
        for t in tracks.indices {
            let levels = t < snapshot.trackLevels.count ? snapshot.trackLevels[t] : []
            let channels = max(1, levels.count)
            if meters[t].count != channels { meters[t] = Array(repeating: MeterReading(), count: channels) }
            for c in meters[t].indices {
                MeterBallistics.update(&meters[t][c], with: c < levels.count ? levels[c] : .silent, nowSeconds: nowSeconds)
            }
        }
        let master = snapshot.masterLevels.isEmpty ? snapshot.outputLevels : snapshot.masterLevels
        if masterMeters.count != 2 { masterMeters = [MeterReading(), MeterReading()] }
        for c in 0..<2 {
            MeterBallistics.update(&masterMeters[c], with: c < master.count ? master[c] : .silent, nowSeconds: nowSeconds)
        }
    }

    /// Reads the link's snapshot now: finished takes go onto their tracks, a new engine
    /// error onto the message line (after the take's news, so the error is what stays).
    func readLink() {
        let before = snapshot
        snapshot = link.snapshot()
        // The controllers' moves first: the transport has them from this snapshot on, and
        // an edit (a take placed) must not hand it a session without them.
        followMIDI()
        let shownBefore = messageShownAtSeconds
        placeFinishedTakes()
        followLive()
        if let n = snapshot.notice {
            // A take placed in this same read said so: the notice joins that line rather than
            // replacing it (replaced, the take's "recorded …" was gone before anyone read it,
            // and the notice timed out after it).
            if messageShownAtSeconds != shownBefore, let m = message, !m.isError { say("\(m.text); \(n)") } else { say(n) }
        }
        if let e = snapshot.lastError, e != before.lastError {
            // A device that went away (a JACK server killed) comes back on the next play.
            let lost = snapshot.deviceStopped && !before.deviceStopped
            say(lost ? "\(e) — \(keyName(.play)) reconnects, \(keyName(.devices)) picks another device" : e, error: true)
        }
    }

    /// Resets the meters: every clip light out, the engine's and the screen's, and the
    /// master's loudness measured afresh. (Clip lights stay lit until this: a clip in the
    /// verse is still shown after the chorus.)
    func resetMeters() {
        link.resetMeters()
        clearClips()
    }

    /// Puts the screen's own clip latches out.
    func clearClips() {
        for t in meters.indices { for c in meters[t].indices { meters[t][c].clipped = false } }
        for c in masterMeters.indices { masterMeters[c].clipped = false }
    }

    /// Scrolls so `frame` is on screen, paging rather than creeping so the picture is calm.
    func follow(_ frame: Int64) {
        let span = framesPerColumn * Int64(max(1, timelineColumns))
        if frame < viewStartFrame || frame >= viewStartFrame + span {
            viewStartFrame = max(0, frame - span / 8)
        }
    }

    /// Handles one key press.
    public func handle(_ key: Key) {
        if overlay != nil { handleOverlay(key); return }
        if message?.isError == true { message = nil }
        if focus == .chain, handleChainKey(key) { return }
        if showsMixer, handleMixerKey(key) { return }
        guard let action = keyMap.action(for: key) else {
            if key == .named(.esc) { message = nil; selectedRegion = nil; return }
            say("\(key.name): not bound to anything (\(keyName(.help)) lists the keys)")
            return
        }
        perform(action)
    }

    /// Does what `action` means outside any dialog.
    public func perform(_ action: Action) {
        if performOnLane(action) { return }
        switch action {
        case .play: keyPlay()
        case .record: keyRecord()
        case .home: keyLocate(0)
        case .end: keyLocate(session.endFrame)
        case .left: keyLocate(stepFrame(from: playheadFrame, steps: -1))
        case .right: keyLocate(stepFrame(from: playheadFrame, steps: 1))
        case .automationLanes: toggleAutomationLanes()
        case .automationNew: openNewAutomationLane()
        case .automationMode: cycleAutomationMode()
        case .up: selectUp()
        case .down: selectDown()
        case .zoomIn: zoom(by: 0.5)
        case .zoomOut: zoom(by: 2)
        case .loop: keyCommand(.transport(.loopToggle))
        case .punch: togglePunch()
        case .loopStart: setRangeEdge(loop: true, start: true)
        case .loopEnd: setRangeEdge(loop: true, start: false)
        case .punchStart: setRangeEdge(loop: false, start: true)
        case .punchEnd: setRangeEdge(loop: false, start: false)
        case .mute, .solo: keyToggle(mute: action == .mute)
        case .arm: keyToggleArm()
        case .newTrack: newTrack()
        case .rename: openRename()
        case .input: openInput()
        case .faderDown, .faderUp, .faderDownCoarse, .faderUpCoarse:
            stepFader(steps: action == .faderDown || action == .faderDownCoarse ? -1 : 1,
                      coarse: action == .faderDownCoarse || action == .faderUpCoarse)
        case .panLeft, .panRight, .panLeftCoarse, .panRightCoarse:
            stepPan(steps: action == .panLeft || action == .panLeftCoarse ? -1 : 1,
                    coarse: action == .panLeftCoarse || action == .panRightCoarse)
        case .resetFader: resetFader()
        case .resetPan: resetPan()
        case .mixer: toggleMixer()
        case .selectRegion: selectRegionAtPlayhead()
        case .regionPrevious, .regionNext: stepRegion(forward: action == .regionNext)
        case .moveLeft, .moveRight: moveRegion(steps: action == .moveRight ? 1 : -1)
        case .nudgeLeft, .nudgeRight: nudgeRegion(forward: action == .nudgeRight)
        case .trimStart, .trimEnd: trimRegion(start: action == .trimStart)
        case .split: splitRegion()
        case .fadeIn, .fadeOut: setFade(fadeIn: action == .fadeIn)
        case .regionGainDown, .regionGainUp: stepRegionGain(up: action == .regionGainUp)
        case .stretch: openStretch()
        case .deleteRegion: deleteRegion()
        case .duplicate: duplicateRegion()
        case .copy: copyRegion()
        case .paste: pasteRegion()
        case .raise: raiseRegion()
        case .snap:
            snap = snap.next
            say("snap: \(snap.rawValue)\(snap == .off ? " (steps are one column of the timeline)" : "")")
        case .deleteTrack:
            if let t = requireTrack() { overlay = .confirm(session.tracks[t].isBus ? .deleteBus(t) : .deleteTrack(t)) }
        case .nextPanel:
            let all = Panel.allCases
            focus = all[((all.firstIndex(of: focus) ?? 0) + 1) % all.count]
            chainNode = 0
            chainParameter = 0
        case .undo: undoRedo(undo: true)
        case .redo: undoRedo(undo: false)
        case .save: if folder == nil { _ = save() } else { keyCommand(.transport(.save)) }
        case .quit:
            // An import copying beside the screen is someone's work: ended on purpose only.
            if let job = jobs.first { say("\(job.label) is in progress: \(keyName(.cancel)) cancels it, then \(keyName(.quit)) quits", error: true); return }
            if document.isDirty { overlay = .confirm(.quitUnsaved) } else { quit() }
        case .help: overlay = .help(scroll: 0)
        case .speedDown, .speedUp: keyStepSpeed(up: action == .speedUp)
        case .mode:
            mode = mode.next
            link.setMode(mode)
            say("speed mode: \(mode.rawValue)\(mode == .varispeed ? " (pitch follows speed)" : " (pitch kept)")")
        case .pitchDown, .pitchUp:
            pitchSemitones = min(12, max(-12, pitchSemitones + (action == .pitchUp ? 1 : -1)))
            link.setPitch(semitones: Double(pitchSemitones))
            say("pitch \(pitchSemitones >= 0 ? "+" : "")\(pitchSemitones) semitones\(mode == .varispeed ? " (heard in stretch mode: \(keyName(.mode)))" : "")")
        case .marker: keyCommand(.addMarker(name: nil))
        case .markerRename: openMarkerRename()
        case .tempo: openTempoEdit()
        case .markerDelete: deleteMarker()
        case .markerPrevious, .markerNext: jumpToMarker(next: action == .markerNext)
        case .rulerMode: rulerInBars.toggle()
        case .loudness:
            showsLoudness.toggle()
            say("master loudness \(showsLoudness ? "on the status line" : "off")")
        case .chain: openChainText()
        case .devices:
            let list = link.devices()
            overlay = .devices(list, selected: max(0, list.firstIndex(of: snapshot.deviceName) ?? 0))
        case .importFile: openImport()
        case .export: openExport()
        case .cancel: cancelJob()
        case .click: cycleClick()
        case .countIn: cycleCountIn()
        case .take: cycleActiveTake()
        case .lanes: toggleLanes()
        case .monitor: cycleMonitoring()
        case .retro: keepRetro()
        case .resetMeters:
            resetMeters()
            say("meters reset: clip lights out, loudness measured afresh")
        case .newMIDITrack: newMIDITrack()
        case .quantize: openQuantize()
        case .freeze: toggleFreeze()
        case .learn: cycleLearning()
        case .newBus: openNewBus()
        case .send: openAddSend()
        case .sendNext: nextSend()
        case .sendRemove: removeSend()
        case .sendDown, .sendUp, .sendDownCoarse, .sendUpCoarse:
            stepSend(steps: action == .sendDown || action == .sendDownCoarse ? -1 : 1,
                     coarse: action == .sendDownCoarse || action == .sendUpCoarse)
        case .sendLevel: openSendLevel()
        case .sendPre: toggleSendPre()
        case .output: openOutput()
        case .soloSafe: toggleSoloSafe()
        }
    }

    func quit() {
        let wasClean = !document.isDirty
        link.stop()
        // Saving the take would also save edits the user chose to drop; its crash marker then
        // stays, and the next open recovers it onto its track.
        if wasClean { placeFinishedTakes() }
        shouldQuit = true
    }

    /// `steps` grid lines from `frame` (``snap``), or as many timeline columns when snap is off.
    func stepFrame(from frame: Int64, steps: Int) -> Int64 {
        if let f = session.tempoMap.gridFrame(from: frame, steps: steps, snap: snap) { return f }
        return min(Session.maximumTimelineFrame, max(0, frame + Int64(steps) * framesPerColumn))
    }

    /// The first key bound to `action`, for hints.
    func keyName(_ action: Action) -> String { keyMap.keys(for: action).first?.name ?? action.rawValue }

    // MARK: - Edits

    /// Applies an undoable edit and tells the engine (``OwnedSession/edit(_:_:)``).
    func edit(_ name: String, _ change: (inout Session) -> Void) {
        owner.edit(name, change)
    }

    /// Moves mixer values as one undoable step (merged into the last when `merging` and it has
    /// the same name: one gesture), and hands the transport exactly those (``MixerChange``).
    /// `heard`: the engine has the values already (a learnt controller's move), so nothing is
    /// handed to it.
    func editMixer(_ name: String, merging: Bool = false, heard: Bool = false, _ changes: [MixerChange]) {
        owner.editMixer(name, merging: merging, heard: heard, changes)
    }

    func selectTrack(_ index: Int) {
        let before = selectedTrack
        selectedTrack = session.tracks.isEmpty ? 0 : min(session.tracks.count - 1, max(0, index))
        masterStripSelected = false
        if selectedTrack != before { selectedRegion = nil; selectedSend = 0; selectedLane = nil }
        // A bus has only the one chain it plays through.
        if isBus(selectedTrack) { chainIsInput = false }
        if let r = selectedRegion, !(session.tracks.indices.contains(selectedTrack) && session.tracks[selectedTrack].regions.indices.contains(r)) {
            selectedRegion = nil
        }
        chainNode = 0
        chainParameter = 0
    }

    /// Loops or stops looping over the loop range (the screen's `loop` verb). UI thread.
    func toggleLoop() {
        guard session.loopRange != nil else {
            say("no loop range: set it with \(keyName(.loopStart)) and \(keyName(.loopEnd)) at the playhead", error: true)
            return
        }
        // The range is the session's own, so the change cannot be refused.
        let change = RangeChange.loop(session.loopRange, enabled: !session.loopEnabled)
        try? owner.change { try $0.apply(change) }
    }

    private func togglePunch() {
        guard session.punchRange != nil else {
            say("no punch range: set it with \(keyName(.punchStart)) and \(keyName(.punchEnd)) at the playhead", error: true)
            return
        }
        let change = RangeChange.punch(session.punchRange, enabled: !session.punchEnabled)
        try? owner.change { try $0.apply(change) }
    }

    private func undoRedo(undo: Bool) {
        guard let name = undo ? owner.undo() : owner.redo() else {
            say("nothing to \(undo ? "undo" : "redo")")
            return
        }
        selectTrack(selectedTrack)
        say("\(undo ? "undid" : "redid"): \(name)")
    }

    /// Saves to the session folder, or asks where when the session is untitled.
    /// Returns whether it was saved.
    @discardableResult
    func save() -> Bool {
        guard let folder else {
            overlay = .text(TextInput(purpose: .saveAs, prompt: "Save session as:", text: "untitled.tapedeck", offered: true))
            return false
        }
        do {
            // The folder's history names this save after the screen's last edit.
            try owner.save(label: "screen: \(document.undoName ?? "save")")
            say("saved \(folder.path)")
            return true
        } catch {
            say("cannot save: \(error.description)", error: true)
            return false
        }
    }
}
