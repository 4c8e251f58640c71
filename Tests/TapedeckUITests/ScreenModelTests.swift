import XCTest
import TapedeckCore
import TapedeckDSP
@testable import TapedeckUI
import TapedeckSession
import TapedeckTransport
import TapedeckEngine

/// A link that records what the screen asked of it.
final class FakeLink: TransportLink {
    var state = TransportState.stopped
    var position: Int64 = 0
    var canRecord = false
    var calls: [String] = []
    var session = Session()
    /// Its session's chains, kept as the transport keeps them (so a change parses nothing).
    var chains = SessionChains()
    var loudness: LoudnessReading?
    /// Outputs the fake device plays, and the delay compensation it reports.
    var outputChannelCount = 2
    var stripOutputDelayFrames: [Int] = []
    var outputLatencyFrames = 0

    /// How many times the session was handed over whole.
    var updates = 0
    func update(session: Session) { self.session = session; updates += 1 }
    /// Typed mixer changes, in order, as the screen handed them over.
    var mixerChanges: [MixerChange] = []
    func apply(_ changes: [MixerChange]) {
        mixerChanges += changes
        for c in changes { session.apply(c) }
    }
    /// Typed chain changes, in order.
    var chainChanges: [ChainValueChange] = []
    func apply(_ changes: [ChainValueChange]) {
        chainChanges += changes
        for c in changes { session.apply(c, chains: &chains) }
    }
    func play(fromFrame: Int64) { state = .playing; position = fromFrame; calls.append("play \(fromFrame)") }
    func stop() { state = .stopped; calls.append("stop") }
    func record(fromFrame: Int64) -> String? {
        guard canRecord else { return "no audio device: recording needs one" }
        state = .recording
        return nil
    }
    func locate(frame: Int64) { position = frame }
    func setSpeed(_ ratio: Double) { calls.append("speed \(ratio)") }
    func setMode(_ mode: PlaybackMode) { calls.append("mode \(mode.rawValue)") }
    func setPitch(semitones: Double) { calls.append("pitch \(semitones)") }
    func setLoop(_ range: FrameRange?, enabled: Bool) { calls.append("loop \(enabled)") }
    func setPunch(_ range: FrameRange?, enabled: Bool) {}
    func snapshot() -> TransportSnapshot {
        var s = TransportSnapshot(state: state, positionFrame: position,
                                  trackLevels: session.tracks.map { _ in [ChannelLevel(peakDecibels: -12, rmsDecibels: -15)] },
                                  deviceName: "fake", isOffline: false)
        s.loudness = loudness
        s.outputChannelCount = outputChannelCount
        s.stripOutputDelayFrames = stripOutputDelayFrames
        s.outputLatencyFrames = outputLatencyFrames
        s.notice = notice
        notice = nil
        return s
    }
    func devices() -> [String] { ["fake", "other"] }
    func selectDevice(_ name: String) -> String? { name == "fake" ? nil : "\(name): busy" }
    func resetMeters() { calls.append("reset meters") }
    /// MIDI learn's target, as the screen asked for it.
    var learnTarget: MIDIBinding?
    /// What the next ``collectMIDIChanges()`` hands over.
    var midiChanges = MIDIChanges()
    func learnController(for target: MIDIBinding?) { learnTarget = target }
    func collectMIDIChanges() -> MIDIChanges {
        defer { midiChanges = MIDIChanges() }
        return midiChanges
    }
    /// Transport requests from MIDI the next ``collectMachineRequests()`` hands over.
    var machine: [MachineRequest] = []
    func collectMachineRequests() -> [MachineRequest] {
        defer { machine = [] }
        return machine
    }
    func stopRecording() { state = .playing; calls.append("stop recording") }
    /// The takes the fake records (their peaks filled by the test) and the lanes it writes.
    var live: [LiveTake] = []
    func liveTakes() -> [LiveTake] { live }
    var writing: [AutomationWrite] = []
    func automationBeingWritten() -> [AutomationWrite] { writing }
    /// Takes the next read hands over, and the notice its snapshot carries.
    var finished: [FinishedTake] = []
    var notice: String?
    func collectFinishedTakes() -> [FinishedTake] {
        defer { finished = [] }
        return finished
    }
}

final class ScreenModelTests: XCTestCase {
    static func makeSession() -> Session {
        var s = Session(sampleRate: 48000, tempoBPM: 120)
        s.tracks = [Track(name: "Drums", inputChannels: [1, 2]), Track(name: "Bass"), Track(name: "Vocal", armed: true)]
        return s
    }

    static func makeModel(link: FakeLink = FakeLink(), hooks: ScreenHooks = ScreenHooks()) -> ScreenModel {
        ScreenModel(document: SessionDocument(session: makeSession()), folder: nil, link: link, hooks: hooks)
    }

    func testSpaceStartsAndStopsPlayback() {
        let link = FakeLink()
        let model = ScreenModelTests.makeModel(link: link)
        model.handle(.named(.space))
        XCTAssertEqual(model.snapshot.state, .playing)
        model.handle(.named(.space))
        XCTAssertEqual(model.snapshot.state, .stopped)
        XCTAssertEqual(link.calls.filter { $0.hasPrefix("play") || $0 == "stop" }, ["play 0", "stop"])
    }

    func testRecordRefusalGoesToTheMessageLine() {
        let model = ScreenModelTests.makeModel()
        model.handle(.char("r"))
        XCTAssertEqual(model.snapshot.state, .stopped)
        XCTAssertEqual(model.message?.text, "no audio device: recording needs one")
        XCTAssertEqual(model.message?.isError, true)
    }

    func testRecordNeedsAnArmedTrackAndThenRecords() {
        let link = FakeLink()
        link.canRecord = true
        let model = ScreenModelTests.makeModel(link: link)
        model.handle(.char("r"))
        XCTAssertEqual(model.snapshot.state, .recording)
        let canvas = ScreenRenderer.render(model, height: 30, width: 100, glyphs: .unicode)
        XCTAssertTrue(canvas.text(row: 0).contains("● REC"))
        XCTAssertEqual(canvas.cell(0, 1).role, .recording)
        model.handle(.char("r"))
        XCTAssertEqual(model.snapshot.state, .stopped)
        model.handle(.named(.down)); model.handle(.named(.down))
        model.handle(.char("a"))   // disarm Vocal: nothing armed now
        model.handle(.char("r"))
        XCTAssertEqual(model.snapshot.state, .stopped)
        XCTAssertTrue(model.message?.text.contains("no armed track") ?? false)
    }

    func testMuteSoloArmAreUndoableAndRedoable() {
        let model = ScreenModelTests.makeModel()
        model.handle(.char("m"))
        XCTAssertTrue(model.session.tracks[0].mute)
        XCTAssertTrue(model.document.isDirty)
        model.handle(.named(.down))
        model.handle(.char("s"))
        XCTAssertTrue(model.session.tracks[1].solo)
        model.handle(.char("u"))
        XCTAssertFalse(model.session.tracks[1].solo)
        model.handle(.ctrl("r"))
        XCTAssertTrue(model.session.tracks[1].solo)
        let canvas = ScreenRenderer.render(model, height: 30, width: 100, glyphs: .unicode)
        XCTAssertTrue(canvas.text(row: 4).contains("- M -"), canvas.text(row: 4))
    }

    func testQuitAsksWhenUnsavedAndNotOtherwise() {
        let clean = ScreenModelTests.makeModel()
        clean.handle(.char("q"))
        XCTAssertTrue(clean.shouldQuit)

        let dirty = ScreenModelTests.makeModel()
        dirty.handle(.char("n"))
        dirty.handle(.char("q"))
        XCTAssertFalse(dirty.shouldQuit)
        guard case .confirm(.quitUnsaved) = dirty.overlay else { return XCTFail("no question") }
        dirty.handle(.char("n"))
        XCTAssertFalse(dirty.shouldQuit)
        XCTAssertNil(dirty.overlay)
        dirty.handle(.char("q"))
        dirty.handle(.char("y"))
        XCTAssertTrue(dirty.shouldQuit)
    }

    func testDeleteTrackAsksFirst() {
        let model = ScreenModelTests.makeModel()
        model.handle(.named(.delete))
        XCTAssertEqual(model.session.tracks.count, 3)
        model.handle(.char("y"))
        XCTAssertEqual(model.session.tracks.map(\.name), ["Bass", "Vocal"])
    }

    func testLoopEdgesAtThePlayheadAndLoopToggle() {
        let link = FakeLink()
        let model = ScreenModelTests.makeModel(link: link)
        model.handle(.char("l"))
        XCTAssertEqual(model.message?.isError, true, "no range yet")
        link.position = 48000
        model.tick(nowSeconds: 0)
        model.handle(.char("["))
        link.position = 96000
        model.tick(nowSeconds: 0)
        model.handle(.char("]"))
        XCTAssertEqual(model.session.loopRange, FrameRange(startFrame: 48000, endFrame: 96000))
        model.handle(.char("l"))
        XCTAssertTrue(model.session.loopEnabled)
        XCTAssertEqual(link.calls.last, "loop true")
    }

    func testSpeedModeAndPitchKeysReachTheLink() {
        let link = FakeLink()
        let model = ScreenModelTests.makeModel(link: link)
        model.handle(.char("<"))
        model.handle(.char("M"))
        model.handle(.char("}"))
        XCTAssertEqual(model.speed, 0.9)
        XCTAssertEqual(model.mode, .varispeed, "the screen opens in stretch, as the README says; M switches")
        XCTAssertEqual(model.pitchSemitones, 1)
        XCTAssertTrue(link.calls.contains("speed 0.9"))
        XCTAssertTrue(link.calls.contains("mode varispeed"))
        XCTAssertTrue(link.calls.contains("pitch 1.0"))
    }

    func testATypedChainGoesThroughTheChainParserAndIsStoredCanonically() {
        let model = ScreenModelTests.makeModel()
        model.handle(.char("c"))
        for c in "bogus" { model.handle(.char(c)) }
        model.handle(.named(.enter))
        guard case .text(let input) = model.overlay else { return XCTFail("the dialog should stay open") }
        XCTAssertTrue(input.problem?.hasPrefix("unknown node 'bogus'") ?? false, input.problem ?? "no problem shown")
        for _ in 0..<5 { model.handle(.named(.backspace)) }
        for c in "hpf:100,comp:-20:ratio=3" { model.handle(.char(c)) }
        model.handle(.named(.enter))
        XCTAssertNil(model.overlay)
        XCTAssertEqual(model.session.tracks[0].playbackChain, "hpf:cutoff=100,comp:threshold=-20:ratio=3")
        model.handle(.named(.tab)); model.handle(.named(.tab))
        let canvas = ScreenRenderer.render(model, height: 30, width: 100, glyphs: .unicode)
        XCTAssertTrue(canvas.text.contains("cutoff=100 Hz"), canvas.text)
        XCTAssertTrue(canvas.text.contains("threshold=-20"), canvas.text)
    }

    func testChainPanelNudgesBypassesAndRemovesNodes() {
        let model = ScreenModelTests.makeModel()
        model.handle(.char("c"))
        for c in "hpf:cutoff=80,comp:ratio=4" { model.handle(.char(c)) }
        model.handle(.named(.enter))
        model.handle(.named(.tab)); model.handle(.named(.tab))
        XCTAssertEqual(model.focus, .chain)
        model.handle(.named(.right))
        XCTAssertEqual(model.session.tracks[0].playbackChain, "hpf:cutoff=81,comp:ratio=4")
        model.handle(.named(.pgup))
        XCTAssertEqual(model.session.tracks[0].playbackChain, "hpf:cutoff=91,comp:ratio=4")
        model.handle(.named(.down))
        model.handle(.char("b"))
        XCTAssertEqual(model.session.tracks[0].playbackChain, "hpf:cutoff=91,!comp:ratio=4")
        model.handle(.char("K"))
        XCTAssertEqual(model.session.tracks[0].playbackChain, "!comp:ratio=4,hpf:cutoff=91")
        model.handle(.char("x"))
        model.handle(.char("y"))
        XCTAssertEqual(model.session.tracks[0].playbackChain, "hpf:cutoff=91")
        let canvas = ScreenRenderer.render(model, height: 30, width: 100, glyphs: .unicode)
        XCTAssertTrue(canvas.text.contains("cutoff=91"))
    }

    func testChainPanelNudgesAndBypassesHandTheTransportTheOneValueTheyMoved() {
        let link = FakeLink()
        let model = ScreenModelTests.makeModel(link: link)
        model.handle(.char("c"))
        for c in "hpf:cutoff=80,comp:ratio=4" { model.handle(.char(c)) }
        model.handle(.named(.enter))
        model.handle(.named(.tab)); model.handle(.named(.tab))
        let updates = link.updates
        model.handle(.named(.right))
        model.handle(.named(.down))
        model.handle(.char("b"))
        XCTAssertEqual(link.chainChanges, [ChainValueChange(place: .playback(strip: 0), node: 0, value: .parameter("cutoff", .number(81))),
                                           ChainValueChange(place: .playback(strip: 0), node: 1, value: .bypass(true))])
        XCTAssertEqual(link.updates, updates, "a value is not a whole session")
        XCTAssertEqual(link.session.tracks[0].playbackChain, "hpf:cutoff=81,!comp:ratio=4")
        XCTAssertEqual(link.session, model.session)
        // Reordering changes what the chain is: the session goes whole.
        model.handle(.char("K"))
        XCTAssertEqual(link.updates, updates + 1)
        XCTAssertEqual(link.session.tracks[0].playbackChain, "!comp:ratio=4,hpf:cutoff=81")
        // Undo steps back one gesture at a time.
        model.handle(.char("u")); model.handle(.char("u"))
        XCTAssertEqual(model.session.tracks[0].playbackChain, "hpf:cutoff=81,comp:ratio=4")
        XCTAssertEqual(link.session, model.session)
        // A frozen track's chain does not move: said, nothing handed over.
        model.owner.edit("freeze") { $0.tracks[0].frozen = FrozenAudio(file: "audio/f.wav", lengthFrames: 10) }
        let handed = link.chainChanges.count
        model.handle(.char("b"))
        XCTAssertEqual(link.chainChanges.count, handed)
        XCTAssertEqual(model.message?.isError, true)
    }

    func testTheLoudnessKeyShowsTheMastersR128ReadingsOnTheStatusLine() {
        let link = FakeLink()
        let model = ScreenModelTests.makeModel(link: link)
        func statusLine() -> String {
            let canvas = ScreenRenderer.render(model, height: 30, width: 100, glyphs: .unicode)
            return String(canvas.text.split(separator: "\n", omittingEmptySubsequences: false)[Layout(height: 30, width: 100).statusRow])
        }
        XCTAssertTrue(statusLine().contains("zoom"), "off by default")
        model.handle(.char("U"))
        XCTAssertTrue(statusLine().contains("master loudness: not measured"), statusLine())
        link.loudness = LoudnessReading(momentaryLUFS: -18.24, shortTermLUFS: -19.0, integratedLUFS: -20.06, truePeakDecibels: -1.2)
        model.tick(nowSeconds: 1)
        XCTAssertTrue(statusLine().contains("master M -18.2  S -19.0  I -20.1 LUFS  TP -1.2 dBTP"), statusLine())
        link.loudness = .silent
        model.tick(nowSeconds: 2)
        XCTAssertTrue(statusLine().contains("M -inf  S -inf  I -inf LUFS  TP -inf dBTP"), statusLine())
        model.handle(.char("X"))
        XCTAssertEqual(link.calls.last, "reset meters", "X resets the engine's meters, loudness included")
        model.handle(.char("U"))
        XCTAssertTrue(statusLine().contains("zoom"), "U again hides it")
    }

    func testHelpOverlayListsEveryActionWithItsKeysFileNameAndScrolls() {
        let model = ScreenModelTests.makeModel()
        model.handle(.char("?"))
        let big = ScreenRenderer.render(model, height: 120, width: 140, glyphs: .unicode)
        for action in Action.allCases {
            XCTAssertTrue(big.text.contains(action.summary), "help lacks \(action.rawValue)")
            XCTAssertTrue(big.text.contains(action.rawValue), "help lacks the name \(action.rawValue)")
        }
        // At 80×24 one column, scrolled: the last section comes into view.
        let small = ScreenRenderer.render(model, height: 24, width: 80, glyphs: .unicode)
        XCTAssertFalse(small.text.contains("Panels and dialogs"))
        XCTAssertTrue(small.text.contains("scroll"))
        for _ in 0..<20 { model.handle(.named(.pgdn)) }
        let scrolled = ScreenRenderer.render(model, height: 24, width: 80, glyphs: .unicode)
        XCTAssertTrue(scrolled.text.contains(HelpOverlay.panelLines.last ?? "-"), "scrolled to the last line:\n\(scrolled.text)")
        model.handle(.char("z"))
        XCTAssertNil(model.overlay)
    }

    func testDevicesComeFromTheLink() {
        let model = ScreenModelTests.makeModel()
        model.handle(.char("d"))
        model.handle(.named(.down))
        model.handle(.named(.enter))
        XCTAssertEqual(model.message?.text, "other: busy")
    }

    func testUntitledSessionAsksWhereToSave() throws {
        let model = ScreenModelTests.makeModel()
        model.handle(.ctrl("s"))
        guard case .text(let input) = model.overlay, input.purpose == .saveAs else { return XCTFail("no save-as dialog") }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("td-save-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        for _ in input.text { model.handle(.named(.backspace)) }
        for c in dir.path + "/s.tapedeck" { model.handle(.char(c)) }
        model.handle(.named(.enter))
        XCTAssertNil(model.overlay)
        XCTAssertFalse(model.document.isDirty)
        XCTAssertTrue(FileManager.default.fileExists(atPath: dir.path + "/s.tapedeck/session.json"))
    }

    func testUnboundKeysSaySo() {
        let model = ScreenModelTests.makeModel()
        model.handle(.char("G"))
        XCTAssertTrue(model.message?.text.contains("not bound") ?? false)
    }
}
