import XCTest
@testable import TapedeckCore

final class RegionEditTests: XCTestCase {
    /// A track with a 48000-frame region at 1 s (48000) that starts 1000 frames into its file.
    private func makeDocument() -> SessionDocument {
        var s = Session(sampleRate: 48000, tempoBPM: 120)
        s.tracks = [Track(name: "Vocal", regions: [
            Region(file: "audio/a.wav", timelineStartFrame: 48000, sourceOffsetFrame: 1000, lengthFrames: 48000,
                   gainDecibels: -2, fadeInFrames: 100, fadeOutFrames: 200),
        ])]
        return SessionDocument(session: s)
    }

    private let ref = RegionRef(track: 0, region: 0)

    func testEveryEditIsUndoneExactlyAndRedoneExactly() throws {
        let edits: [(String, (inout Session) throws(RegionEditError) -> Void)] = [
            ("move", { (s: inout Session) throws(RegionEditError) in try s.moveRegion(RegionRef(track: 0, region: 0), toStartFrame: 96000) }),
            ("trim start", { (s: inout Session) throws(RegionEditError) in try s.trimRegionStart(RegionRef(track: 0, region: 0), toFrame: 50000) }),
            ("trim end", { (s: inout Session) throws(RegionEditError) in try s.trimRegionEnd(RegionRef(track: 0, region: 0), toFrame: 90000) }),
            ("split", { (s: inout Session) throws(RegionEditError) in try s.splitRegion(RegionRef(track: 0, region: 0), atFrame: 60000) }),
            ("fades", { (s: inout Session) throws(RegionEditError) in try s.setRegionFades(RegionRef(track: 0, region: 0), fadeInFrames: 4800, fadeOutFrames: 9600) }),
            ("gain", { (s: inout Session) throws(RegionEditError) in try s.setRegionGain(RegionRef(track: 0, region: 0), decibels: 3) }),
            ("stretch", { (s: inout Session) throws(RegionEditError) in try s.stretchRegion(RegionRef(track: 0, region: 0), byFactor: 2) }),
            ("delete", { (s: inout Session) throws(RegionEditError) in try s.deleteRegion(RegionRef(track: 0, region: 0)) }),
            ("duplicate", { (s: inout Session) throws(RegionEditError) in try s.duplicateRegion(RegionRef(track: 0, region: 0)) }),
            ("raise", { (s: inout Session) throws(RegionEditError) in
                try s.placeRegion(s.region(RegionRef(track: 0, region: 0)), track: 0, atFrame: 0)
                try s.raiseRegion(RegionRef(track: 0, region: 0)) }),
        ]
        for (name, change) in edits {
            var doc = makeDocument()
            let before = doc.session
            try doc.editRegions(name, change)
            let after = doc.session
            XCTAssertNotEqual(after, before, "\(name) changed nothing")
            XCTAssertEqual(doc.undo(), name)
            XCTAssertEqual(doc.session, before, "undo of \(name) restores the session exactly")
            doc.redo()
            XCTAssertEqual(doc.session, after, "redo of \(name)")
        }
    }

    func testMoveKeepsTheAudioAndRefusesBeforeTheStartOrBeyondTheLimit() throws {
        var s = makeDocument().session
        try s.moveRegion(ref, toStartFrame: 12345)
        XCTAssertEqual(s.tracks[0].regions[0].timelineStartFrame, 12345)
        XCTAssertEqual(s.tracks[0].regions[0].sourceOffsetFrame, 1000)
        XCTAssertThrowsError(try s.moveRegion(ref, toStartFrame: -1))
        XCTAssertThrowsError(try s.moveRegion(ref, toStartFrame: Int64.max - 10), "no overflow: refused")
        XCTAssertEqual(s.tracks[0].regions[0].timelineStartFrame, 12345, "a refused edit changes nothing")
    }

    func testTrimmingTheStartMovesTheSourceOffsetWithItAtTheRegionsRate() throws {
        var s = makeDocument().session
        try s.trimRegionStart(ref, toFrame: 50000)
        var r = s.tracks[0].regions[0]
        XCTAssertEqual([r.timelineStartFrame, r.sourceOffsetFrame, r.lengthFrames, r.timelineEndFrame], [50000, 3000, 46000, 96000])
        try s.trimRegionStart(ref, toFrame: 47000)
        r = s.tracks[0].regions[0]
        XCTAssertEqual([r.timelineStartFrame, r.sourceOffsetFrame, r.lengthFrames], [47000, 0, 49000], "uncovers the file's first frames")
        XCTAssertThrowsError(try s.trimRegionStart(ref, toFrame: 46999), "nothing before the file's start")
        XCTAssertThrowsError(try s.trimRegionStart(ref, toFrame: 96000), "the start must stay before the end")
        s.tracks[0].regions[0].rate = 0.5
        try s.trimRegionStart(ref, toFrame: 48000)
        XCTAssertEqual(s.tracks[0].regions[0].sourceOffsetFrame, 500, "1000 timeline frames at rate 0.5 are 500 source frames")
    }

    func testTrimmingTheEndIsLimitedByTheFileAndClampsTheFades() throws {
        var s = makeDocument().session
        try s.trimRegionEnd(ref, toFrame: 48150)
        let r = s.tracks[0].regions[0]
        XCTAssertEqual(r.lengthFrames, 150)
        XCTAssertEqual(r.fadeOutFrames, 150)
        XCTAssertEqual(r.fadeInFrames, 0, "fades never exceed the region")
        XCTAssertNoThrow(try s.trimRegionEnd(ref, toFrame: 48000 + 59000, sourceFrameCount: 60000))
        XCTAssertThrowsError(try s.trimRegionEnd(ref, toFrame: 48000 + 59001, sourceFrameCount: 60000)) { error in
            XCTAssertTrue("\(error)".contains("cannot end later"), "\(error)")
        }
    }

    func testSplitMakesTwoRegionsThatTogetherPlayTheOriginal() throws {
        var s = makeDocument().session
        let right = try s.splitRegion(ref, atFrame: 60000)
        XCTAssertEqual(right, 1)
        let (a, b) = (s.tracks[0].regions[0], s.tracks[0].regions[1])
        XCTAssertEqual([a.timelineStartFrame, a.lengthFrames, a.sourceOffsetFrame, a.fadeInFrames, a.fadeOutFrames], [48000, 12000, 1000, 100, 0])
        XCTAssertEqual([b.timelineStartFrame, b.lengthFrames, b.sourceOffsetFrame, b.fadeInFrames, b.fadeOutFrames], [60000, 36000, 13000, 0, 200])
        XCTAssertEqual(b.gainDecibels, -2)
        XCTAssertThrowsError(try s.splitRegion(ref, atFrame: 48000), "not at the very edge")
        XCTAssertThrowsError(try s.splitRegion(ref, atFrame: 60000), "not at the end")
    }

    func testSplittingATakeSplitsItsWholeStackSoEachPartChoosesItsOwnTake() throws {
        var s = Session()
        s.tracks = [Track(name: "Gtr")]
        for i in 1...3 { try s.addTake(track: 0, region: Region(file: "audio/p\(i).wav", timelineStartFrame: 0, lengthFrames: 1000), group: 1) }
        try s.chooseTake(track: 0, group: 1, take: 2)
        let rightIndex = try s.splitRegion(RegionRef(track: 0, region: 0), atFrame: 400)
        let t = s.tracks[0]
        XCTAssertEqual(t.takeGroups, [1, 2])
        XCTAssertEqual(t.takeIndices(group: 1).map { t.regions[$0].lengthFrames }, [400, 400, 400])
        XCTAssertEqual(t.takeIndices(group: 2).map { t.regions[$0].timelineStartFrame }, [400, 400, 400])
        XCTAssertEqual(t.takeIndices(group: 2).map { t.regions[$0].sourceOffsetFrame }, [400, 400, 400])
        XCTAssertEqual(t.activeTakeNumber(group: 2), 2, "the right part keeps the chosen take")
        XCTAssertEqual(t.regions[rightIndex].takeGroup, 2)
        XCTAssertEqual(t.regions[rightIndex].takeNumber, 1)
        try s.chooseTake(track: 0, group: 2, take: 3)
        XCTAssertEqual(s.tracks[0].activeRegions.map(\.file).sorted(), ["audio/p2.wav", "audio/p3.wav"], "comped: take 2 then take 3")
    }

    func testStretchScalesRateAndLengthTogetherWithinTheRateLimits() throws {
        var s = makeDocument().session
        try s.stretchRegion(ref, byFactor: 2)
        var r = s.tracks[0].regions[0]
        XCTAssertEqual(r.lengthFrames, 96000)
        XCTAssertEqual(r.rate, 0.5)
        XCTAssertEqual([r.fadeInFrames, r.fadeOutFrames], [200, 400])
        try s.stretchRegion(ref, toLengthFrames: 24000)
        r = s.tracks[0].regions[0]
        XCTAssertEqual(r.rate, 2, accuracy: 1e-12)
        XCTAssertThrowsError(try s.stretchRegion(ref, byFactor: 1000), "rate 1/500 is outside 1/32...32")
        XCTAssertThrowsError(try s.stretchRegion(ref, byFactor: .nan))
        XCTAssertThrowsError(try s.stretchRegion(ref, byFactor: -2))
        XCTAssertThrowsError(try s.stretchRegion(ref, toLengthFrames: 0))
        // Said with the rate it would need, in digits a person reads (not 1.44e+16 frames, not
        // seventeen digits).
        func refusal(_ edit: (inout Session) throws(RegionEditError) -> Void) -> String {
            var copy = s
            do { try edit(&copy) } catch { return error.description }
            return "no refusal"
        }
        XCTAssertEqual(refusal { (s: inout Session) throws(RegionEditError) in try s.stretchRegion(ref, byFactor: 1e9) },
                       "stretching by 1e+09x needs rate 2e-09, outside 1/32...32")
        XCTAssertEqual(refusal { (s: inout Session) throws(RegionEditError) in try s.stretchRegion(ref, toLengthFrames: 48000 * 40) },
                       "stretching to 00:40.000 needs rate 0.025, outside 1/32...32")
        XCTAssertEqual(Region.rateText(1.0 / 3), "0.333333")
        XCTAssertEqual(Region.rateText(2), "2")
    }

    func testFadesGainAndLookupsRefuseWhatDoesNotFit() throws {
        var s = makeDocument().session
        XCTAssertThrowsError(try s.setRegionFades(ref, fadeInFrames: 48001, fadeOutFrames: nil))
        XCTAssertThrowsError(try s.setRegionFades(ref, fadeInFrames: -1, fadeOutFrames: nil))
        try s.setRegionFades(ref, fadeInFrames: nil, fadeOutFrames: 480)
        XCTAssertEqual([s.tracks[0].regions[0].fadeInFrames, s.tracks[0].regions[0].fadeOutFrames], [100, 480])
        XCTAssertThrowsError(try s.setRegionGain(ref, decibels: .nan))
        XCTAssertThrowsError(try s.setRegionGain(ref, decibels: 25))
        try s.setRegionGain(ref, decibels: -.infinity)
        XCTAssertEqual(s.tracks[0].regions[0].gainDecibels, Fader.silentDecibels, "-inf is stored as the finite -inf stop")
        XCTAssertThrowsError(try s.deleteRegion(RegionRef(track: 0, region: 5))) { error in
            XCTAssertEqual("\(error)", "track 1 (Vocal) has no region 6 (it has 1)")
        }
        XCTAssertThrowsError(try s.deleteRegion(RegionRef(track: 3, region: 0)))
    }

    func testPasteAndDuplicateLieOnTopAsOrdinaryRegions() throws {
        var s = makeDocument().session
        try s.addTake(track: 0, region: Region(file: "audio/t.wav", timelineStartFrame: 0, lengthFrames: 500))
        let take = s.tracks[0].regions[1]
        let pasted = try s.placeRegion(take, track: 0, atFrame: 70000)
        XCTAssertEqual(pasted, 2)
        XCTAssertNil(s.tracks[0].regions[2].takeGroup)
        XCTAssertEqual(s.tracks[0].regions[2].timelineStartFrame, 70000)
        let copy = try s.duplicateRegion(ref)
        XCTAssertEqual(s.tracks[0].regions[copy].timelineStartFrame, 96000, "right after the original's end")
        XCTAssertEqual(s.tracks[0].topRegionIndex(at: 70100), 2, "the paste plays over the region under it")
    }
}
