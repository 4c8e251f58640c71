import XCTest
import TapedeckCore
import TapedeckDSP
import TapedeckIO
import TapedeckSession
import TapedeckTransport
@testable import TapedeckUI

/// The session's one owner (``OwnedSession``), which the screen and headless record and play
/// host: every change reaches the engine from there, a refusal reaches nothing, a command
/// handed over is one step, and finished takes are placed and saved in one place.
final class OwnedSessionTests: XCTestCase {
    private var folders: [String] = []

    override func tearDown() {
        for f in folders { try? FileManager.default.removeItem(atPath: f) }
        super.tearDown()
    }

    private func makeFolder() throws -> (SessionFolder, SessionLock) {
        let path = NSTemporaryDirectory() + "owned-\(UUID().uuidString).tapedeck"
        folders.append(path)
        let folder = SessionFolder(path: path)
        let lock = try folder.create(ScreenModelTests.makeSession())
        return (folder, lock)
    }

    func testEveryKindOfChangeIsHeardByTheEngine() throws {
        let link = FakeLink()
        let owner = OwnedSession(document: SessionDocument(session: ScreenModelTests.makeSession()), folder: nil, link: link)
        func heard(_ what: String, line: UInt = #line) { XCTAssertEqual(link.session, owner.session, what, line: line) }
        heard("opened")
        try owner.change { try $0.apply(MarkerChange.add(name: "Verse", atFrame: 48000)) }
        heard("a marker")
        try owner.change { try $0.apply(MarkerChange.rename(index: 0, to: "Chorus")) }
        heard("a marker renamed")
        try owner.change { try $0.apply(RangeChange.loop(FrameRange(startFrame: 0, endFrame: 96000), enabled: true)) }
        heard("a loop")
        XCTAssertEqual(link.calls.last, "loop true", "the loop itself, not only the session holding it")
        try owner.change { try $0.apply(RoutingChange.addBus(name: "Verb", channelCount: 2)) }
        heard("a bus")
        try owner.change { try $0.apply(TrackChange.add(name: "Keys", midi: false)) }
        heard("a track")
        owner.editMixer("fader Drums", [.gain(strip: 0, decibels: -6)])
        heard("a fader")
        XCTAssertEqual(link.mixerChanges, [.gain(strip: 0, decibels: -6)], "the fader goes by the fast path")
        owner.edit("rename") { $0.tracks[1].name = "Bass DI" }
        heard("an edit")
        let updates = link.updates
        XCTAssertEqual(owner.undo(), "rename")
        heard("an undo")
        XCTAssertGreaterThan(link.updates, updates)
        owner.undo(); owner.undo(); owner.undo()
        heard("undoing the bus")
        XCTAssertEqual(owner.undo(), "loop")
        XCTAssertEqual(link.calls.last, "loop false", "an undone loop stops looping")
        owner.redo()
        heard("a redo")
        XCTAssertEqual(link.calls.last, "loop true")
    }

    func testARefusedChangeTellsTheEngineNothingAndRecordsNothing() {
        let link = FakeLink()
        let owner = OwnedSession(document: SessionDocument(session: ScreenModelTests.makeSession()), folder: nil, link: link)
        let updates = link.updates
        XCTAssertThrowsError(try owner.change { try $0.apply(RoutingChange.addBus(name: "Master", channelCount: 2)) })
        XCTAssertThrowsError(try owner.change { try $0.apply(TrackChange.add(name: "drums", midi: false)) }, "a name taken")
        XCTAssertEqual(link.updates, updates)
        XCTAssertNil(owner.document.undoName)
        XCTAssertFalse(owner.isDirty)
    }

    func testACommandsTwoSavesAreOneStepHeardAndCountedSaved() throws {
        let (folder, lock) = try makeFolder()
        defer { withExtendedLifetime(lock) {} }
        let link = FakeLink()
        let owner = OwnedSession(document: SessionDocument(session: try folder.load()), folder: folder, link: link)
        var saves = 0
        let served = try XCTUnwrap(owner.served(step: "tempo 90, asked by tapedeck tempo") { saves += 1 })
        let store = SessionStore(served: served)
        var s = try store.load(folder)
        s.tracks[1].gainDecibels = -3
        try store.save(s, to: folder)
        s.tracks[0].name = "Kit"
        try store.save(s, to: folder)
        XCTAssertEqual(saves, 2)
        XCTAssertEqual(owner.document.undoNames, ["tempo 90, asked by tapedeck tempo"], "one step for the command")
        XCTAssertEqual(owner.session.tracks[0].name, "Kit")
        XCTAssertEqual(link.session, owner.session, "heard at once")
        XCTAssertFalse(owner.isDirty, "the command saved this whole session")
        XCTAssertEqual(try folder.load().tracks[0].name, "Kit")
    }

    func testTakesArePlacedAsOneStepSavedAndTheirMarkersGo() throws {
        let (folder, lock) = try makeFolder()
        defer { withExtendedLifetime(lock) {} }
        let link = FakeLink()
        let owner = OwnedSession(document: SessionDocument(session: try folder.load()), folder: folder, link: link)
        var takes: [FinishedTake] = []
        for (t, name) in [(0, "Drums"), (2, "Vocal"), (1, "Gone")] {
            let marker = folder.path + "/take-\(t).recording"
            XCTAssertTrue(FileManager.default.createFile(atPath: marker, contents: Data()))
            takes.append(FinishedTake(trackIndex: t, trackName: name, region: Region(file: "audio/t\(t).wav", timelineStartFrame: 4800, lengthFrames: 48000),
                                      markerPath: marker))
        }
        let result = owner.place(takes) { "screen: \($0)" }
        XCTAssertEqual(result.placed.map(\.track), [0, 2])
        XCTAssertEqual(result.orphans.map(\.trackName), ["Gone"], "its track is Bass now: not placed on another")
        XCTAssertEqual(result.stepName, "record on Drums, Vocal")
        XCTAssertNil(result.saveError)
        XCTAssertEqual(owner.document.undoNames, ["record on Drums, Vocal"], "one step for the pass")
        XCTAssertEqual(link.session, owner.session, "the engine plays the takes")
        let saved = try folder.load()
        XCTAssertEqual(saved.tracks[0].regions.map(\.file), ["audio/t0.wav"])
        XCTAssertEqual(saved.tracks[2].regions.map(\.file), ["audio/t2.wav"])
        XCTAssertFalse(FileManager.default.fileExists(atPath: takes[0].markerPath!), "saved: its marker goes")
        XCTAssertFalse(FileManager.default.fileExists(atPath: takes[1].markerPath!))
        XCTAssertTrue(FileManager.default.fileExists(atPath: takes[2].markerPath!), "not placed: its host decides")
        XCTAssertEqual(try SessionHistory.steps(folder).undo.first, "screen: record on Drums, Vocal", "the folder's history names the save")
    }

    func testAnUntitledSessionKeepsItsTakesMarkersUntilSaved() throws {
        let link = FakeLink()
        let owner = OwnedSession(document: SessionDocument(session: ScreenModelTests.makeSession()), folder: nil, link: link)
        let marker = NSTemporaryDirectory() + "owned-\(UUID().uuidString).recording"
        folders.append(marker)
        XCTAssertTrue(FileManager.default.createFile(atPath: marker, contents: Data()))
        let take = FinishedTake(trackIndex: 1, trackName: "Bass", region: Region(file: "audio/b.wav", timelineStartFrame: 0, lengthFrames: 480), markerPath: marker)
        let result = owner.place([take]) { $0 }
        XCTAssertEqual(result.placed.count, 1)
        XCTAssertTrue(owner.isDirty)
        XCTAssertTrue(FileManager.default.fileExists(atPath: marker), "only in memory: the marker recovers it")
    }

    /// The screen's keys and dialogs leave the engine with the screen's session after every
    /// one: the owner tells it, so no key can forget (a marker renamed in its dialog once
    /// changed the screen's session and not the engine's).
    func testAfterEveryKeyTheEngineHasTheScreensSession() {
        let link = FakeLink()
        let model = ScreenModelTests.makeModel(link: link)
        func check(_ what: String, line: UInt = #line) { XCTAssertEqual(link.session, model.session, what, line: line) }
        link.position = 48000
        model.tick(nowSeconds: 0)
        model.handle(.char("k")); check("marker")
        model.handle(.char("K")); model.clearTyped(); model.typeKeys("Verse"); model.handle(.named(.enter)); check("marker renamed")
        model.handle(.char("[")); check("loop start")
        model.handle(.char("m")); check("mute")
        model.handle(.char("B")); model.clearTyped(); model.typeKeys("Verb"); model.handle(.named(.enter)); check("bus")
        model.handle(.char("u")); check("undo")
        model.handle(.ctrl("r")); check("redo")
        XCTAssertGreaterThanOrEqual(model.document.undoNames.count, 4)
    }
}
