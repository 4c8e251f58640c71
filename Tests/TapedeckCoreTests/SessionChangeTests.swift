import XCTest
@testable import TapedeckCore

/// The typed edits every front-end makes (``RegionChange``, ``MarkerChange``,
/// ``RoutingChange``): each is one undo step named for what it did, and a refused one leaves
/// the session and its history as they were.
final class SessionChangeTests: XCTestCase {
    private func session() -> Session {
        var s = Session(sampleRate: 48000)
        s.tracks = [Track(name: "Drums"), Track(name: "Keys"), Track.makeBus(name: "Verb", channelCount: 2)]
        s.tracks[0].regions = [Region(file: "audio/d.wav", timelineStartFrame: 48000, lengthFrames: 96000)]
        return s
    }

    func testARegionChangeIsTheSessionsOwnEditAsOneNamedStep() throws {
        var doc = SessionDocument(session: session())
        let ref = RegionRef(track: 0, region: 0)
        XCTAssertEqual(try doc.apply(.split(atFrame: 96000), to: ref), 1, "a split selects its right half")
        var direct = session()
        try direct.splitRegion(ref, atFrame: 96000)
        XCTAssertEqual(doc.session.tracks[0].regions.map(\.timelineStartFrame), direct.tracks[0].regions.map(\.timelineStartFrame))
        XCTAssertEqual(try doc.apply(.stretch(byFactor: 2), to: ref), 0)
        XCTAssertEqual(doc.session.tracks[0].regions[0].lengthFrames, 96000)
        XCTAssertEqual(try doc.apply(.trim(startFrame: 60000, endFrame: 100_000, sourceFrameCount: nil), to: ref), 0)
        XCTAssertEqual(doc.session.tracks[0].regions[0].timelineStartFrame, 60000)
        XCTAssertEqual(doc.session.tracks[0].regions[0].timelineEndFrame, 100_000)
        XCTAssertNil(try doc.apply(.delete, to: ref), "a deleted region is nowhere")
        XCTAssertEqual(doc.undoNames, ["delete region", "trim region", "stretch region", "split region"])

        let before = doc
        XCTAssertThrowsError(try doc.apply(.split(atFrame: 1), to: ref)) { error in
            XCTAssertTrue("\(error)".contains("is not inside the region"), "\(error)")
        }
        XCTAssertThrowsError(try doc.apply(.gain(decibels: 0), to: RegionRef(track: 0, region: 7)))
        XCTAssertEqual(doc.session, before.session, "a refusal changes nothing")
        XCTAssertEqual(doc.undoNames, before.undoNames, "and records no step")
    }

    func testAQuantisedRegionReplacesItsOriginalUnlessTheTrackIsFrozen() throws {
        var doc = SessionDocument(session: session())
        var moved = doc.session.tracks[0].regions[0]
        moved.file = "midi/q.mid"
        try doc.apply(.replace(with: moved), to: RegionRef(track: 0, region: 0))
        XCTAssertEqual(doc.session.tracks[0].regions.map(\.file), ["midi/q.mid"])
        XCTAssertEqual(doc.undoName, "quantize")
        var frozen = session()
        frozen.tracks[0].frozen = FrozenAudio(file: "audio/f.wav", lengthFrames: 10)
        var cold = SessionDocument(session: frozen)
        XCTAssertThrowsError(try cold.apply(.replace(with: moved), to: RegionRef(track: 0, region: 0))) { error in
            XCTAssertTrue("\(error)".contains("is frozen"), "\(error)")
        }
    }

    func testMarkerChangesReturnWhereTheMarkerLands() throws {
        var doc = SessionDocument(session: session())
        XCTAssertEqual(try doc.apply(.add(name: "B", atFrame: 96000)), 0)
        XCTAssertEqual(try doc.apply(.add(name: "", atFrame: 48000)), 0, "kept in timeline order")
        XCTAssertEqual(doc.session.markers.map(\.name), ["M2", "B"])
        XCTAssertEqual(try doc.apply(.move(index: 0, toFrame: 200_000)), 1)
        XCTAssertEqual(try doc.apply(.rename(index: 1, to: "Out")), 1)
        XCTAssertNil(try doc.apply(.delete(index: 0)))
        XCTAssertEqual(doc.session.markers.map(\.name), ["Out"])
        XCTAssertEqual(doc.undoNames, ["delete marker", "rename marker", "move marker", "add marker", "add marker"])
        XCTAssertThrowsError(try doc.apply(.rename(index: 0, to: "  "))) { XCTAssertEqual("\($0)", "a marker needs a name") }
        XCTAssertThrowsError(try doc.apply(.delete(index: 3))) { XCTAssertEqual("\($0)", "marker 4 does not exist") }
        XCTAssertEqual(doc.undoNames.count, 5)
    }

    func testARoutingChangeThatWouldNotRouteIsRefusedWithTheSessionsLine() throws {
        var doc = SessionDocument(session: session())
        try doc.apply(.setSend(strip: 0, Send(bus: "verb", levelDecibels: -6)))
        try doc.apply(.setSend(strip: 0, Send(bus: "Verb", levelDecibels: -3)))
        XCTAssertEqual(doc.session.tracks[0].sends.map(\.levelDecibels), [-3], "a send to a bus it has replaces it (any case)")
        try doc.apply(.addBus(name: "Delay", channelCount: 1))
        try doc.apply(.output(strip: 2, .bus("Delay")))
        let before = doc
        XCTAssertThrowsError(try doc.apply(.setSend(strip: 3, Send(bus: "Verb")))) { error in
            XCTAssertEqual("\(error)", "routing cycle: Verb → Delay → Verb")
        }
        XCTAssertThrowsError(try doc.apply(.output(strip: 1, .bus("Drums")))) { error in
            XCTAssertEqual("\(error)", "track Keys: output to Drums, a track, not a bus")
        }
        XCTAssertThrowsError(try doc.apply(.soloSafe(strip: 0, on: true))) { error in
            XCTAssertTrue("\(error)".hasPrefix("Drums is a track: only a bus is solo-safe"), "\(error)")
        }
        XCTAssertThrowsError(try doc.apply(.removeSend(strip: 1, bus: "Verb"))) { XCTAssertEqual("\($0)", "Keys has no send to Verb") }
        XCTAssertThrowsError(try doc.apply(.removeStrip(9))) { XCTAssertEqual("\($0)", "strip 10 does not exist (the session has 4 strips)") }
        XCTAssertEqual(doc.session, before.session, "every refusal changed nothing")
        XCTAssertEqual(doc.undoNames, before.undoNames)

        XCTAssertEqual(try doc.apply(.removeStrip(3)), ["Verb now outputs to the master"])
        try doc.apply(.rename(strip: 2, to: "Room"))
        XCTAssertEqual(doc.session.tracks[0].sends.map(\.bus), ["Room"], "a renamed bus takes its sends along")
        XCTAssertEqual(doc.undoNames, ["rename bus Verb", "remove bus Delay", "output Verb to bus:Delay", "add bus Delay",
                                       "change send Drums to Verb", "send Drums to verb"])
    }

    func testATrackChangeRefusesABusATakenNameAndAFullSession() throws {
        var doc = SessionDocument(session: session())
        try doc.apply(.add(name: " Vox ", midi: false))
        try doc.apply(.input(strip: 3, channels: [3, 4]))
        try doc.apply(.arm(strip: 3, on: true))
        try doc.apply(.freeze(strip: 0, render: FrozenAudio(file: "audio/freeze-Drums.wav", lengthFrames: 10)))
        XCTAssertEqual(doc.session.tracks[3].name, "Vox", "the name as trimmed")
        XCTAssertEqual(doc.session.tracks[3].inputChannels, [3, 4])
        XCTAssertTrue(doc.session.tracks[3].armed)
        XCTAssertEqual(doc.undoNames, ["freeze Drums", "arm Vox", "input Vox", "add track Vox"])
        let before = doc
        XCTAssertThrowsError(try doc.apply(.arm(strip: 2, on: true))) { XCTAssertEqual("\($0)", "Verb is a bus: a bus has no input to arm") }
        XCTAssertThrowsError(try doc.apply(.add(name: "vox", midi: true))) {
            XCTAssertEqual("\($0)", "track 4 is already called Vox (names are matched ignoring case)")
        }
        XCTAssertThrowsError(try doc.apply(.monitoring(strip: 4, .input))) { XCTAssertEqual("\($0)", "track 5 does not exist (the session has 4 strips)") }
        XCTAssertEqual(doc.session, before.session)
        XCTAssertEqual(doc.undoNames, before.undoNames)
        var full = session()
        full.tracks = (0..<SessionLimits.maximumTracks).map { Track(name: "T\($0)") }
        XCTAssertThrowsError(try full.apply(TrackChange.add(name: "one more", midi: false))) { XCTAssertTrue("\($0)".hasSuffix("at most \(SessionLimits.maximumTracks)")) }
        XCTAssertThrowsError(try full.apply(RoutingChange.addBus(name: "one more", channelCount: 2)))
    }

    func testAnAutomationChangeMakesTheLaneItNeedsAndDropsOneEmptiedWhenAsked() throws {
        var doc = SessionDocument(session: session())
        let points = [AutomationPoint(frame: 100, value: -3), AutomationPoint(frame: 200, value: -6)]
        try doc.apply(.add(strip: 0, .pan, points, replacing: false))
        XCTAssertEqual(doc.session.tracks[0].automation.map(\.parameter), [.pan], "the lane made")
        try doc.apply(.add(strip: 0, .pan, [AutomationPoint(frame: 200, value: 0.5)], replacing: false))
        XCTAssertEqual(doc.session.tracks[0].automation[0].points.map(\.value), [-3, 0.5], "a point at a frame replaces it")
        XCTAssertEqual(try doc.apply(.clear(strip: 0, .pan, FrameRange(startFrame: 0, endFrame: 150), droppingEmptyLane: true)), 1)
        XCTAssertEqual(try doc.apply(.clear(strip: 0, .pan, nil, droppingEmptyLane: false)), 1)
        XCTAssertEqual(doc.session.tracks[0].automation.map(\.points.count), [0], "an emptied lane stays when not asked to go")
        try doc.apply(.add(strip: 0, .pan, points, replacing: true))
        XCTAssertEqual(try doc.apply(.clear(strip: 0, .pan, nil, droppingEmptyLane: true)), 2)
        XCTAssertTrue(doc.session.tracks[0].automation.isEmpty, "and goes when asked")
        let before = doc
        XCTAssertThrowsError(try doc.apply(.move(strip: 0, .gain, fromFrame: 5, toFrame: 9))) {
            XCTAssertEqual("\($0)", "Drums has no gain point at 00:00.000")
        }
        XCTAssertThrowsError(try doc.apply(.mode(strip: 7, .gain, .touch)))
        XCTAssertEqual(doc.session, before.session)
        XCTAssertEqual(doc.undoNames, ["clear pan points", "replace pan points", "clear pan points", "clear pan points", "add pan point",
                                       "add pan points"])
    }

    func testARangeChangeRefusesAnInsideOutRange() throws {
        var doc = SessionDocument(session: session())
        try doc.apply(.loop(FrameRange(startFrame: 0, endFrame: 48000), enabled: true))
        try doc.apply(.punch(FrameRange(startFrame: 100, endFrame: 200), enabled: nil))
        XCTAssertEqual(doc.session.loopRange, FrameRange(startFrame: 0, endFrame: 48000))
        XCTAssertTrue(doc.session.loopEnabled)
        XCTAssertFalse(doc.session.punchEnabled, "the switch kept")
        XCTAssertThrowsError(try doc.apply(.loop(FrameRange(startFrame: 10, endFrame: 10), enabled: nil))) {
            XCTAssertEqual("\($0)", "the loop range must end after it starts")
        }
        try doc.apply(.loop(nil, enabled: nil))
        XCTAssertFalse(doc.session.loopEnabled, "no range, no looping")
        XCTAssertEqual(doc.undoNames, ["loop", "punch", "loop"])
    }

    func testABindingLearntAgainReplacesTheControllersOldOne() throws {
        var doc = SessionDocument(session: session())
        let fader = MIDIBinding(controller: 7, kind: .fader, track: "Drums"), pan = MIDIBinding(controller: 10, kind: .pan, track: "Keys")
        XCTAssertEqual(try doc.apply(.bind(fader)), [])
        try doc.apply(.bind(pan))
        let master = MIDIBinding(controller: 7, kind: .master)
        XCTAssertEqual(try doc.apply(.bind(master)), [fader], "CC 7 now moves the master")
        XCTAssertEqual(doc.session.midiBindings, [pan, master])
        XCTAssertThrowsError(try doc.apply(.remove(index: 2))) { XCTAssertEqual("\($0)", "there is no binding 3 (the session has 2)") }
        XCTAssertEqual(try doc.apply(.remove(index: 0)), [pan])
        XCTAssertEqual(try doc.apply(.removeAll), [master])
        XCTAssertEqual(doc.undoNames, ["remove bindings", "remove binding", "learn \(master)", "learn \(pan)", "learn \(fader)"])
    }
}
