import Foundation
import XCTest

/// Wherever a command takes a track, a bus is found by its name too; whatever would put
/// material on it (regions, takes, imports, recordings, an input) is refused in one line, and
/// `record` records only tracks.
final class BusMaterialTests: RoutingTestCase {
    override func setUpWithError() throws {
        try super.setUpWithError()
        try addToneTrack("Tone")
        try ok(["bus", session, "add", "Reverb"])
    }

    func testNothingPutsRegionsTakesOrAnInputOnABus() throws {
        let before = try sessionBytes()
        CLIRun.writeSine(to: path("more.wav"))
        try refused(["import", session, path("more.wav"), "--track", "reverb"],
                    "import: Reverb is a bus: a bus has no regions to import onto")
        try refused(["import", session, path("tune.mid"), "--track", "2"], "import: Reverb is a bus")
        try refused(["region", session, "reverb"], "region: Reverb is a bus: a bus has no regions")
        try refused(["region", session, "reverb", "1", "move", "1.0"], "region: Reverb is a bus: a bus has no regions")
        try refused(["region", session, "reverb", "1", "split", "0.5"], "region: Reverb is a bus")
        try refused(["takes", session, "reverb", "--cycle", "1"], "takes: Reverb is a bus: a bus has no takes")
        try refused(["takes", session, "reverb"], "takes: Reverb is a bus")
        try refused(["learn", session, "--cc", "7", "--param", "reverb:1:size", "--input-chain"],
                    "learn: Reverb is a bus: a bus has no input, so no input chain")
        try refused(["record", session, "--track", "reverb", "--device", "filetap", "--duration", "4800f"],
                    "record: Reverb is a bus: a bus has no input to record", environment: CLIRun.alsaEnvironment)
        try refused(["record", session, "--tracks", "1-2", "--device", "filetap", "--duration", "4800f"],
                    "record: Reverb is a bus", environment: CLIRun.alsaEnvironment)
        XCTAssertEqual(try sessionBytes(), before, "nothing refused was saved")
        XCTAssertFalse(FileManager.default.fileExists(atPath: session + "/audio/more.wav"), "a refused import copies nothing")
        // What a bus does have works by its name.
        XCTAssertTrue(try ok(["learn", session, "--cc", "7", "--fader", "reverb"]).contains("Reverb"))
    }

    func testRecordWithBusesInTheSessionRecordsOnlyTracks() throws {
        // No track armed: the take gets a new track, numbered past the bus, never onto it.
        var out = try CLIRun.run(["record", session, "--device", "filetap", "--device-format", "s24", "--duration", "4800f"],
                                 environment: CLIRun.alsaEnvironment)
        XCTAssertEqual(out.status, 0, out.stderr)
        var tracks = try info()["tracks"] as? [[String: Any]] ?? []
        XCTAssertEqual(tracks.map { $0["name"] as? String }, ["Tone", "Reverb", "Track 3"])
        XCTAssertEqual((tracks[2]["regions"] as? [Any])?.count, 1, "the take is on the new track")
        XCTAssertNil(tracks[1]["regions"], "the bus has none")

        // An armed track records; the bus beside it is left alone.
        try ok(["track", session, "tone", "--arm"])
        out = try CLIRun.run(["record", session, "--device", "filetap", "--device-format", "s24", "--duration", "4800f", "--at", "2.0"],
                             environment: CLIRun.alsaEnvironment)
        XCTAssertEqual(out.status, 0, out.stderr)
        tracks = try info()["tracks"] as? [[String: Any]] ?? []
        XCTAssertEqual(tracks.count, 3)
        XCTAssertEqual((tracks[0]["regions"] as? [Any])?.count, 2, "the take is on the armed track")
        XCTAssertEqual(tracks[1]["kind"] as? String, "bus")
    }
}
