import XCTest
@testable import TapedeckCore

/// Regions keep their ids through every edit (issue 28: the command line names a region by
/// it, and split, insert and delete no longer shift what a script holds).
final class RegionIdentityTests: XCTestCase {
    private func session() -> Session {
        var s = Session(sampleRate: 48000, tempoBPM: 120)
        s.tracks = [Track(name: "A"), Track(name: "B")]
        s.tracks[0].regions = [Region(file: "audio/a.wav", timelineStartFrame: 0, lengthFrames: 96_000),
                               Region(file: "audio/b.wav", timelineStartFrame: 192_000, lengthFrames: 96_000)]
        s.tracks[1].regions = [Region(file: "audio/c.wav", timelineStartFrame: 48_000, lengthFrames: 96_000)]
        return s
    }

    func testEveryRegionGetsAnIdAndKeepsItThroughSplitsDuplicatesAndDeletes() throws {
        var document = SessionDocument(session: session())
        document.edit("touch") { $0.tracks[0].name = "A1" }
        let ids = document.session.tracks.flatMap { $0.regions.compactMap(\.id) }
        XCTAssertEqual(ids.count, 3)
        XCTAssertEqual(Set(ids).count, 3, "unique")
        let b = try XCTUnwrap(document.session.tracks[0].regions[1].id)
        let c = try XCTUnwrap(document.session.tracks[1].regions[0].id)

        // Split the first region: its left half keeps the id, the right half gets a new one.
        let a = try XCTUnwrap(document.session.tracks[0].regions[0].id)
        try document.edit("split") { (s: inout Session) throws(RegionEditError) in try s.splitRegion(RegionRef(track: 0, region: 0), atFrame: 48_000) }
        let afterSplit = document.session.tracks[0].regions
        XCTAssertEqual(afterSplit.count, 3)
        XCTAssertEqual(afterSplit.first { $0.timelineStartFrame == 0 }?.id, a)
        let right = try XCTUnwrap(afterSplit.first { $0.timelineStartFrame == 48_000 }?.id)
        XCTAssertFalse([a, b, c].contains(right), "a new id for the right half")
        XCTAssertEqual(document.session.regionRef(id: b).map { document.session.tracks[$0.track].regions[$0.region].file }, "audio/b.wav",
                       "#b still names b, though its number in the listing moved")

        // A duplicate is a new region; the original keeps its id.
        let refB = document.session.regionRef(id: b)!
        try document.edit("dup") { (s: inout Session) throws(RegionEditError) in _ = try s.duplicateRegion(refB) }
        let bs = document.session.tracks[0].regions.filter { $0.file == "audio/b.wav" }
        XCTAssertEqual(bs.count, 2)
        XCTAssertEqual(bs.filter { $0.id == b }.count, 1, "one keeps it")
        // A copy pasted on another track, placed first in the list, does not take the id.
        var copy = document.session.tracks[1].regions[0]
        copy.timelineStartFrame = 500_000
        document.edit("paste") { $0.tracks[0].regions.insert(copy, at: 0) }
        XCTAssertEqual(document.session.regionRef(id: c)?.track, 1, "#c stays on B")
        XCTAssertNotEqual(document.session.tracks[0].regions[0].id, c)

        // Deleting a region frees nothing the others hold.
        let before = document.session.tracks.flatMap { $0.regions.compactMap(\.id) }
        let refA = document.session.regionRef(id: a)!
        try document.edit("delete") { (s: inout Session) throws(RegionEditError) in try s.deleteRegion(refA) }
        XCTAssertEqual(Set(document.session.tracks.flatMap { $0.regions.compactMap(\.id) }), Set(before).subtracting([a]))
        // Undo gives the session back exactly, ids and all.
        document.undo()
        XCTAssertEqual(Set(document.session.tracks.flatMap { $0.regions.compactMap(\.id) }), Set(before))
    }

    func testIdsFromAFileAreCheckedNotTrusted() {
        var s = session()
        s.tracks[0].regions[0].id = 7
        s.tracks[0].regions[1].id = 7  // duplicated by hand
        s.tracks[1].regions[0].id = Int.max  // out of range
        s.identifyRegions()
        let ids = s.tracks.flatMap { $0.regions.compactMap(\.id) }
        XCTAssertEqual(ids.count, 3)
        XCTAssertEqual(Set(ids).count, 3)
        XCTAssertEqual(s.tracks[0].regions[0].id, 7, "the first keeps it")
        XCTAssertTrue(ids.allSatisfy { $0 >= 1 && $0 <= Int(Int32.max) })
        // Ids at the very top: the next free one is found, never an overflow.
        s.tracks[0].regions[0].id = Int(Int32.max)
        s.tracks[0].regions[1].id = nil
        s.identifyRegions()
        XCTAssertEqual(Set(s.tracks.flatMap { $0.regions.compactMap(\.id) }).count, 3)
    }
}
