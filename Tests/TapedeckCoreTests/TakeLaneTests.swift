import Foundation
import XCTest
@testable import TapedeckCore

final class TakeLaneTests: XCTestCase {
    private func pass(_ n: Int) -> Region {
        Region(file: "audio/take-\(n).wav", timelineStartFrame: 96_000, lengthFrames: 48_000)
    }

    private func threeTakes() throws -> Session {
        var s = Session()
        s.tracks = [Track(name: "Gtr", regions: [Region(file: "audio/bed.wav", timelineStartFrame: 0, lengthFrames: 500_000)])]
        let first = try s.addTake(track: 0, region: pass(1))
        XCTAssertEqual(first, TakeSlot(group: 1, take: 1))
        XCTAssertEqual(try s.addTake(track: 0, region: pass(2), group: 1), TakeSlot(group: 1, take: 2))
        XCTAssertEqual(try s.addTake(track: 0, region: pass(3), group: 1), TakeSlot(group: 1, take: 3))
        return s
    }

    func testThreeStackedTakesHaveExactlyOneActiveAndTheNewestWins() throws {
        let s = try threeTakes()
        let track = s.tracks[0]
        XCTAssertEqual(track.takeGroups, [1])
        XCTAssertEqual(track.takeIndices(group: 1).map { track.regions[$0].file }, ["audio/take-1.wav", "audio/take-2.wav", "audio/take-3.wav"])
        XCTAssertEqual(track.regions.filter { $0.takeGroup == 1 }.filter(track.isActive).count, 1)
        XCTAssertEqual(s.activeTake(track: 0, group: 1)?.file, "audio/take-3.wav")
        XCTAssertEqual(track.activeRegions.map(\.file), ["audio/bed.wav", "audio/take-3.wav"], "the ordinary region always plays")
    }

    func testALoopRecordingStoppedMidPassLeavesTheLastCompletePassActive() throws {
        func passes(_ lengths: [Int64]) -> [Region] {
            lengths.enumerated().map { k, n in
                Region(file: "audio/loop.wav", timelineStartFrame: 96_000, sourceOffsetFrame: Int64(k) * 48_000, lengthFrames: n)
            }
        }
        var s = Session()
        s.tracks = [Track(name: "Gtr")]
        // Two whole passes and a third cut short by the stop: the second plays, the third is kept after it.
        let group = try XCTUnwrap(try s.addLoopPasses(track: 0, passes: passes([48_000, 48_000, 20_000])))
        XCTAssertEqual(s.tracks[0].takeIndices(group: group).count, 3, "every pass is kept")
        XCTAssertEqual(s.activeTake(track: 0, group: group)?.takeNumber, 2)
        XCTAssertEqual(s.activeTake(track: 0, group: group)?.lengthFrames, 48_000)
        XCTAssertEqual(try s.cycleTake(track: 0, group: group), 3, "the partial pass is the take after it")
        // Stopped on a pass's end: the last pass is whole, and plays.
        let whole = try XCTUnwrap(try s.addLoopPasses(track: 0, passes: passes([48_000, 48_000])))
        XCTAssertEqual(s.activeTake(track: 0, group: whole)?.takeNumber, 2)
        // Stopped inside the first pass: the one take there is plays.
        let first = try XCTUnwrap(try s.addLoopPasses(track: 0, passes: passes([20_000])))
        XCTAssertEqual(s.activeTake(track: 0, group: first)?.takeNumber, 1)
        XCTAssertNil(try s.addLoopPasses(track: 0, passes: []))
        XCTAssertThrowsError(try s.addLoopPasses(track: 3, passes: passes([48_000])))
    }

    func testCyclingWalksEveryTakeAndWrapsAround() throws {
        var s = try threeTakes()
        XCTAssertEqual(try s.cycleTake(track: 0, group: 1), 1)
        XCTAssertEqual(s.activeTake(track: 0, group: 1)?.file, "audio/take-1.wav")
        XCTAssertEqual(try s.cycleTake(track: 0, group: 1), 2)
        XCTAssertEqual(try s.cycleTake(track: 0, group: 1), 3)
        XCTAssertEqual(try s.cycleTake(track: 0, group: 1), 1)
        try s.chooseTake(track: 0, group: 1, take: 2)
        XCTAssertEqual(s.tracks[0].activeRegions.map(\.file), ["audio/bed.wav", "audio/take-2.wav"])
    }

    func testASecondGroupIsIndependentOfTheFirst() throws {
        var s = try threeTakes()
        try s.chooseTake(track: 0, group: 1, take: 1)
        let slot = try s.addTake(track: 0, region: Region(file: "audio/b1.wav", timelineStartFrame: 300_000, lengthFrames: 1000))
        XCTAssertEqual(slot, TakeSlot(group: 2, take: 1))
        XCTAssertEqual(s.activeTake(track: 0, group: 1)?.file, "audio/take-1.wav")
        XCTAssertEqual(s.activeTake(track: 0, group: 2)?.file, "audio/b1.wav")
        XCTAssertEqual(s.tracks[0].takeGroups, [1, 2])
    }

    func testAChoiceOfARemovedTakeFallsBackToTheNewestSoOneTakeStillPlays() throws {
        var s = try threeTakes()
        try s.chooseTake(track: 0, group: 1, take: 2)
        s.tracks[0].regions.removeAll { $0.takeNumber == 2 }
        XCTAssertEqual(s.activeTake(track: 0, group: 1)?.takeNumber, 3)
        XCTAssertEqual(s.tracks[0].activeRegions.count, 2)
    }

    func testEditsOnMissingTracksGroupsAndTakesThrowInsteadOfTrapping() throws {
        var s = try threeTakes()
        XCTAssertThrowsError(try s.addTake(track: 5, region: pass(9))) { XCTAssertEqual($0 as? TakeLaneError, .noSuchTrack(index: 5, trackCount: 1)) }
        XCTAssertThrowsError(try s.cycleTake(track: 0, group: 7)) { XCTAssertEqual($0 as? TakeLaneError, .noSuchGroup(track: 0, group: 7)) }
        XCTAssertThrowsError(try s.chooseTake(track: 0, group: 1, take: 9)) {
            XCTAssertEqual(($0 as? TakeLaneError)?.description, "track 1, take group 1 has no take 9")
        }
        XCTAssertThrowsError(try s.cycleTake(track: -1, group: 1))
        XCTAssertNil(s.activeTake(track: 3, group: 1))
    }

    func testDocumentTakeEditsUndoOneAtATime() throws {
        var doc = SessionDocument(session: try threeTakes())
        XCTAssertEqual(try doc.cycleTake(track: 0, group: 1), 1)
        try doc.chooseTake(track: 0, group: 1, take: 2)
        XCTAssertEqual(doc.activeTake(track: 0, group: 1)?.takeNumber, 2)
        XCTAssertEqual(doc.undo(), "Choose take")
        XCTAssertEqual(doc.activeTake(track: 0, group: 1)?.takeNumber, 1)
        XCTAssertEqual(doc.undo(), "Cycle take")
        XCTAssertEqual(doc.activeTake(track: 0, group: 1)?.takeNumber, 3)
        try doc.addTake(track: 0, region: pass(4), group: 1)
        XCTAssertEqual(doc.activeTake(track: 0, group: 1)?.takeNumber, 4)
        XCTAssertEqual(doc.undoName, "Add take")
    }

    func testASessionFileFromBeforeTakeLanesStillDecodesWithDefaults() throws {
        let old = """
        {"schemaVersion":1,"sampleRate":48000,"tempoBPM":120,"timeSignature":{"beatsPerBar":4,"beatUnit":4},
         "markers":[],"loopEnabled":false,"punchEnabled":false,"masterChain":"",
         "tracks":[{"name":"Gtr","inputChannels":[1],"armed":true,"mute":false,"solo":false,"gainDecibels":0,"pan":0,
                    "inputChain":"","playbackChain":"",
                    "regions":[{"file":"audio/a.wav","timelineStartFrame":10,"sourceOffsetFrame":0,"lengthFrames":100,
                                "gainDecibels":0,"fadeInFrames":0,"fadeOutFrames":0,"rate":1}]}]}
        """
        let s = try JSONDecoder().decode(Session.self, from: Data(old.utf8))
        XCTAssertEqual(s.tracks[0].monitoring, .auto)
        XCTAssertEqual(s.tracks[0].activeTakes, [])
        XCTAssertNil(s.tracks[0].regions[0].takeGroup)
        XCTAssertNil(s.tracks[0].regions[0].recordedSpeed)
        XCTAssertEqual(s.tracks[0].activeRegions.count, 1)
        XCTAssertNil(SessionValidator.problem(in: s))
    }

    func testNewFieldsSurviveAnEncodeDecodeRoundTrip() throws {
        var s = try threeTakes()
        s.tracks[0].monitoring = .input
        s.tracks[0].regions[1].recordedSpeed = 0.5
        try s.chooseTake(track: 0, group: 1, take: 2)
        let back = try JSONDecoder().decode(Session.self, from: JSONEncoder().encode(s))
        XCTAssertEqual(back, s)
        XCTAssertEqual(back.activeTake(track: 0, group: 1)?.takeNumber, 2)
    }

    func testAnUnknownMonitoringModeIsRefusedNamingTheChoices() throws {
        let json = """
        {"name":"Gtr","inputChannels":[1],"armed":false,"mute":false,"solo":false,"gainDecibels":0,"pan":0,
         "inputChain":"","playbackChain":"","regions":[],"monitoring":"loud"}
        """
        XCTAssertThrowsError(try JSONDecoder().decode(Track.self, from: Data(json.utf8))) { error in
            XCTAssertTrue("\(error)".contains("'loud' is not off, input or auto"), "\(error)")
        }
    }

    func testTheValidatorNamesBadTakeFields() throws {
        var s = try threeTakes()
        s.tracks[0].regions[2].takeNumber = 1
        XCTAssertEqual(SessionValidator.problem(in: s), "tracks[0].regions[2].takeNumber: take 1 of group 1 appears twice")
        s = try threeTakes()
        s.tracks[0].regions[1].takeNumber = nil
        XCTAssertEqual(SessionValidator.problem(in: s), "tracks[0].regions[1].takeNumber: missing (the region has a takeGroup)")
        s = try threeTakes()
        s.tracks[0].regions[1].recordedSpeed = 0
        XCTAssertEqual(SessionValidator.problem(in: s), "tracks[0].regions[1].recordedSpeed: 0.0 is outside 1/32...32")
        s = try threeTakes()
        s.tracks[0].regions[0].takeNumber = 4
        XCTAssertEqual(SessionValidator.problem(in: s), "tracks[0].regions[0].takeGroup: missing (the region has a takeNumber)")
    }

    func testAudibilityIsUnchangedByTakes() throws {
        var s = try threeTakes()
        s.tracks.append(Track(name: "Bass", solo: true))
        XCTAssertFalse(s.isAudible(trackIndex: 0))
        XCTAssertTrue(s.isAudible(trackIndex: 1))
    }
}
