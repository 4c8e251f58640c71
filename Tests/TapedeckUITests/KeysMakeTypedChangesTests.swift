import XCTest
import TapedeckCore
import TapedeckIO
import TapedeckDSP
import TapedeckRemote
@testable import TapedeckUI

/// The screen's region, marker and routing keys make the typed changes `tapedeck region`,
/// `marker`, `bus`, `send` and `track` make (``RegionChange``, ``MarkerChange``,
/// ``RoutingChange``): the same keys, replayed as those changes on a document of their own,
/// give the same session and the same undo steps by the same names.
final class KeysMakeTypedChangesTests: XCTestCase {
    private func at(_ model: ScreenModel, _ link: FakeLink, _ frame: Int64) {
        link.position = frame
        model.tick(nowSeconds: 0)
    }

    func testRegionKeysAreTheRegionChangesTheCommandLineMakes() throws {
        var s = ScreenModelTests.makeSession()
        s.tracks[0].regions = [Region(file: "audio/d.wav", timelineStartFrame: 48000, lengthFrames: 192_000)]
        let link = FakeLink()
        let model = ScreenModel(document: SessionDocument(session: s), folder: nil, link: link)
        var replay = SessionDocument(session: s)
        let first = RegionRef(track: 0, region: 0), second = RegionRef(track: 0, region: 1)

        at(model, link, 96000)
        model.handle(.char("S"))
        try replay.apply(.split(atFrame: 96000), to: first)
        at(model, link, 120_000)
        model.handle(.char("f"))
        try replay.apply(.fades(inFrames: 24000, outFrames: nil), to: second)
        at(model, link, 200_000)
        model.handle(.char("6"))
        try replay.apply(.trim(startFrame: nil, endFrame: 200_000, sourceFrameCount: nil), to: second)
        model.handle(.char("4"))
        try replay.apply(.gain(decibels: 1), to: second)
        model.handle(.char("g")) // snap off: a nudge is 10 ms
        model.handle(.char("2"))
        try replay.apply(.move(toFrame: 96000 + 480, carryingAutomation: false), to: second)
        model.handle(.char("D"))
        try replay.apply(.duplicate, to: second)

        XCTAssertEqual(model.session, replay.session, "each key made the change the command line makes")
        XCTAssertEqual(model.document.undoNames, replay.undoNames)
        XCTAssertEqual(replay.undoNames, ["duplicate region", "move region", "region gain", "trim end", "fade in", "split region"])
        XCTAssertEqual(link.session, model.session, "the engine follows")
    }

    func testMarkerKeysAreTheMarkerChangesTheCommandLineMakes() throws {
        let s = ScreenModelTests.makeSession()
        let link = FakeLink()
        let model = ScreenModel(document: SessionDocument(session: s), folder: nil, link: link)
        var replay = SessionDocument(session: s)
        at(model, link, 48000)
        model.handle(.char("k"))
        try replay.apply(.add(name: "", atFrame: 48000))
        model.handle(.char("K"))
        model.clearTyped()
        model.typeKeys("Verse")
        model.handle(.named(.enter))
        try replay.apply(.rename(index: 0, to: "Verse"))
        XCTAssertEqual(model.session.markers, replay.session.markers)
        XCTAssertEqual(model.document.undoNames, ["rename marker", "add marker"])
        XCTAssertEqual(model.document.undoNames, replay.undoNames)
    }

    func testRoutingKeysAreTheRoutingChangesTheCommandLineMakes() throws {
        let link = FakeLink()
        let model = ScreenModelTests.makeModel(link: link)
        var replay = SessionDocument(session: model.session)
        model.handle(.char("B"))
        model.clearTyped()
        model.typeKeys("Verb")
        model.handle(.named(.enter))
        model.handle(.char("s"))
        try replay.apply(.addBus(name: "Verb", channelCount: 2))
        model.handle(.named(.up)); model.handle(.named(.up)); model.handle(.named(.up))
        model.handle(.char("b"))
        model.pickChoice("Verb")
        try replay.apply(.setSend(strip: 0, Send(bus: "Verb")))
        model.handle(.char("H"))
        try replay.apply(.setSend(strip: 0, Send(bus: "Verb", preFader: true)))
        model.handle(.char("O"))
        model.pickChoice("bus:Verb")
        try replay.apply(.output(strip: 0, .bus("Verb")))

        XCTAssertEqual(model.session, replay.session)
        XCTAssertEqual(model.document.undoNames, replay.undoNames)
        XCTAssertEqual(replay.undoNames, ["output Drums to bus:Verb", "change send Drums to Verb", "send Drums to Verb", "add bus Verb"])

        // A change that would not route is refused, naming why, and records nothing.
        var cyclic = replay
        XCTAssertThrowsError(try cyclic.apply(.output(strip: 3, .bus("Verb")))) { error in
            XCTAssertEqual("\(error)", "bus Verb: a bus cannot output to itself")
        }
        XCTAssertEqual(cyclic.session, replay.session, "nothing changed")
        XCTAssertEqual(cyclic.undoNames, replay.undoNames, "and no step was recorded")
    }

    func testTheTempoDialogIsTheTempoMapChangeTempoAndMeterMake() throws {
        let dir = NSTemporaryDirectory() + "td-keys-tempo-\(UUID().uuidString)"
        addTeardownBlock { try? FileManager.default.removeItem(atPath: dir) }
        let folder = SessionFolder(path: dir + "/s")
        var s = Session(sampleRate: 48000, tempoBPM: 120)
        try folder.create(s)
        let notes = MIDISequence(events: [.init(frame: 0, status: 0x90, data1: 60, data2: 100), .init(frame: 24_000, status: 0x80, data1: 60)],
                                 lengthFrames: 48_000)
        let file = try MIDIRegionFile.writeNew(notes, base: "keys", name: "Keys", folder: folder, tempoMap: s.tempoMap)
        // At bar 2 (2 s a bar at 120 BPM in 4/4).
        s.tracks = [Track(name: "Keys", playbackChain: "sampler",
                          regions: [Region(file: file, timelineStartFrame: 96_000, lengthFrames: 48_000, isMIDI: true)], isMIDI: true)]
        try folder.save(s)
        let link = FakeLink()
        let model = ScreenModel(document: SessionDocument(session: s), folder: folder, link: link)
        var replay = SessionDocument(session: s)

        model.handle(.char("|"))
        model.typeKeys("60")
        model.handle(.named(.enter))
        XCTAssertNil(model.overlay, "accepted")
        XCTAssertEqual(try replay.apply(.tempo(bar: 1, bpm: 60, ramp: false), keepingMIDIBarsIn: folder), 1)
        XCTAssertEqual(model.session.tempoBPM, 60)
        XCTAssertEqual(model.session.tracks[0].regions.map(\.timelineStartFrame), [192_000], "the MIDI region kept its bar")
        XCTAssertEqual(model.session.tracks[0].regions.map(\.timelineStartFrame), replay.session.tracks[0].regions.map(\.timelineStartFrame))
        XCTAssertEqual(model.document.undoNames, ["tempo"], "one step, map and MIDI together")
        XCTAssertEqual(model.document.undoNames, replay.undoNames)

        // Without a folder the notes have nowhere to go: refused, nothing changed.
        var unsaved = SessionDocument(session: s)
        XCTAssertThrowsError(try unsaved.apply(.meter(bar: 1, TimeSignature(beatsPerBar: 3, beatUnit: 4)), keepingMIDIBarsIn: nil)) { error in
            XCTAssertTrue("\(error)".hasPrefix("save the session first"), "\(error)")
        }
        XCTAssertEqual(unsaved.session, s)
        XCTAssertEqual(unsaved.undoNames, [])
        // Removing what a bar does not have says so, on the screen as off it.
        XCTAssertThrowsError(try replay.apply(.removeBoth(bar: 3), keepingMIDIBarsIn: folder)) { error in
            XCTAssertEqual("\(error)", "no tempo or meter change at bar 3")
        }
        XCTAssertEqual(model.applyTempo("-", bar: 3), "no tempo or meter change at bar 3")
        XCTAssertEqual(model.applyTempo("-", bar: 1), "bar 1's tempo and meter can be changed, not removed")
    }

    func testTrackKeysAndSurfacesAreTheTrackChangesTheCommandLineMakes() throws {
        let link = FakeLink()
        let model = ScreenModelTests.makeModel(link: link)
        var replay = SessionDocument(session: model.session)
        model.handle(.char("N"))
        try replay.apply(.add(name: "MIDI 1", midi: true))
        XCTAssertNil(model.perform(.arm(strip: 0, on: true), from: .keys, continuing: false))
        try replay.apply(.arm(strip: 0, on: true))
        XCTAssertNil(model.perform(.monitor(strip: 1, mode: .input), from: .keys, continuing: false))
        try replay.apply(.monitoring(strip: 1, .input))
        XCTAssertEqual(model.session, replay.session)
        XCTAssertEqual(model.document.undoNames, replay.undoNames)
        XCTAssertEqual(replay.undoNames, ["monitoring Bass", "arm Drums", "add MIDI track MIDI 1"])
        XCTAssertEqual(link.session, model.session, "the engine follows")
    }

    func testABusCalledMasterIsRefusedOnTheScreenAsOnTheCommandLine() {
        let model = ScreenModelTests.makeModel()
        let before = model.session
        model.handle(.char("B"))
        model.clearTyped()
        model.typeKeys("Master")
        model.handle(.named(.enter))
        guard case .text(let input) = model.overlay else { return XCTFail("the name is refused in the dialog") }
        XCTAssertEqual(input.problem, "'Master' names the master; call the bus something else")
        model.handle(.named(.esc))
        XCTAssertEqual(model.session, before, "no bus was made")
        // The one check the command line makes too (bus add, track --name).
        XCTAssertEqual(before.stripNameProblem("main", index: -1, bus: true), "'main' names the master; call the bus something else")
        XCTAssertNil(before.stripNameProblem("Master", index: -1, bus: false), "a track may be called so: no output names a track")
        XCTAssertEqual(before.stripNameProblem(String(repeating: "x", count: 1001), index: -1, bus: false),
                       "a name is at most 1000 characters (this one has 1001)")
    }

    func testAutomationAndRangeKeysAreTheChangesTheCommandLineMakes() throws {
        let link = FakeLink()
        let model = ScreenModelTests.makeModel(link: link)
        var replay = SessionDocument(session: model.session)
        model.handle(.char("E"))
        model.typeKeys("gain")
        model.handle(.named(.enter))
        try replay.apply(.add(strip: 0, .gain, [AutomationPoint(frame: 0, value: 0)], replacing: false))
        model.handle(.named(.right)); model.handle(.named(.right))
        model.handle(.named(.enter))
        try replay.apply(.add(strip: 0, .gain, [AutomationPoint(frame: 48_000, value: 0)], replacing: false))
        model.handle(.char("9"))
        try replay.apply(.add(strip: 0, .gain, [AutomationPoint(frame: 48_000, value: -0.5)], replacing: false))
        model.handle(.named(.shiftRight))
        try replay.apply(.move(strip: 0, .gain, fromFrame: 48_000, toFrame: 72_000))
        model.handle(.char("Y"))
        try replay.apply(.mode(strip: 0, .gain, .touch))
        model.handle(.char("x"))
        try replay.apply(.clear(strip: 0, .gain, FrameRange(startFrame: 72_000, endFrame: 72_001), droppingEmptyLane: false))
        model.handle(.char("["))
        try replay.apply(.loop(FrameRange(startFrame: 72_000, endFrame: 72_000 + 96_000), enabled: nil))
        model.handle(.char("l"))
        try replay.apply(.loop(FrameRange(startFrame: 72_000, endFrame: 72_000 + 96_000), enabled: true))

        XCTAssertEqual(model.session, replay.session, "each key made the change the command line makes")
        XCTAssertEqual(model.document.undoNames, replay.undoNames)
        XCTAssertEqual(replay.undoNames, ["loop", "loop", "clear gain points", "gain mode", "move gain point", "add gain point",
                                          "add gain point", "add gain point"])
        XCTAssertEqual(link.session, model.session, "the engine follows")
    }

    func testTheChainDialogIsTheChainChangeTheCommandLineMakes() throws {
        let model = ScreenModelTests.makeModel()
        var replay = SessionDocument(session: model.session)
        model.handle(.char("c"))
        model.typeKeys("hpf:80,gain:-3")
        model.handle(.named(.enter))
        try replay.apply(ChainChange(place: .playback(strip: 0), chain: Chain(parsing: "hpf:80,gain:-3")))
        XCTAssertEqual(model.session, replay.session)
        XCTAssertEqual(model.document.undoNames, ["edit chain on Drums"])
        XCTAssertEqual(model.document.undoNames, replay.undoNames)
    }
}
