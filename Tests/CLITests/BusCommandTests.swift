import Foundation
import XCTest

/// `bus`, and a bus answering to `track` and `chain` by its name, run as a user runs them.
final class BusCommandTests: RoutingTestCase {
    func testBusesAreAddedListedAndRemovedAndARemovedBusReroutesToTheMaster() throws {
        try ok(["track", session, "add", "Vocal"])
        try ok(["track", session, "add", "Drums"])
        var out = try ok(["bus", session, "add", "Reverb"])
        XCTAssertTrue(out.hasPrefix("added bus 3 (Reverb)  stereo  fader 0.0 dB  pan C  output master"), out)
        out = try ok(["bus", session, "add", "Cue", "--mono"])
        XCTAssertTrue(out.contains("bus 4 (Cue)  mono"), out)
        try ok(["track", session, "vocal", "--output", "bus:reverb"])
        try ok(["send", session, "drums", "REVERB", "--level", "-6", "--pre"])

        out = try ok(["bus", session, "list"])
        XCTAssertTrue(out.contains("bus 3 (Reverb)  stereo  fader 0.0 dB  pan C  output master"), out)
        XCTAssertTrue(out.contains("fed by: Vocal (output), Drums (send -6.0 dB pre)"), out)
        XCTAssertTrue(out.contains("bus 4 (Cue)  mono"), out)
        XCTAssertEqual(try ok(["bus", session]), out, "bus SESSION lists")
        let listed = try CLIRun.json(try ok(["bus", session, "list", "--json"]))
        let buses = listed["buses"] as? [[String: Any]] ?? []
        XCTAssertEqual(buses.map { $0["name"] as? String }, ["Reverb", "Cue"])
        XCTAssertEqual(buses.map { $0["channels"] as? Int }, [2, 1])
        XCTAssertEqual((buses.first?["fed_by"] as? [[String: Any]])?.map { $0["via"] as? String }, ["output", "send"])
        XCTAssertEqual(try strip("Vocal")["output"] as? String, "bus:Reverb", "stored as the bus spells itself")

        out = try ok(["bus", session, "remove", "reverb"])
        XCTAssertEqual(out, "removed bus 3 (Reverb)\n  Vocal now outputs to the master\n  Drums's send to Reverb removed\n")
        XCTAssertEqual(try strip("Vocal")["output"] as? String, "master")
        XCTAssertEqual((try strip("Drums")["sends"] as? [Any])?.count, 0)
        XCTAssertTrue(try ok(["bus", session]).hasPrefix("bus 3 (Cue)"), "the strips after it renumber")
        try ok(["bus", session, "remove", "cue"])
        XCTAssertEqual(try ok(["bus", session, "list"]), "no buses (add one: tapedeck bus SESSION add NAME)\n")
    }

    func testTrackRemoveOnABusReroutesTheSameWay() throws {
        try ok(["track", session, "add", "Keys"])
        try ok(["bus", session, "add", "Group"])
        try ok(["track", session, "keys", "--output", "bus:group"])
        let out = try ok(["track", session, "remove", "group"])
        XCTAssertEqual(out, "removed bus 2 (Group)\n  Keys now outputs to the master\n")
        XCTAssertEqual(try strip("Keys")["output"] as? String, "master")
    }

    func testABusAnswersToTrackOptionsByItsNameAndRefusesWhatNeedsAnInput() throws {
        try ok(["track", session, "add", "Vocal"])
        try ok(["bus", session, "add", "Reverb"])
        let out = try ok(["track", session, "reverb", "--gain", "-6", "--pan", "L20", "--mute", "--solo", "--solo-safe", "on", "--output", "out:3-4"])
        XCTAssertEqual(out, "bus 2 (Reverb)  stereo  fader -6.0 dB  pan L20  output out:3-4  [solo-safe muted solo]\n")
        XCTAssertTrue(try ok(["chain", session, "Reverb", "reverb:size=0.8"]).hasPrefix("bus 2 (Reverb) chain: reverb:"))
        XCTAssertTrue(try ok(["chain", session, "reverb"]).hasPrefix("reverb:"), "shows the bus's chain")
        var bus = try strip("Reverb")
        XCTAssertEqual(bus["kind"] as? String, "bus")
        XCTAssertEqual(bus["gain_db"] as? Double, -6)
        XCTAssertEqual(bus["pan"] as? Double, -0.2)
        XCTAssertEqual(bus["mute"] as? Bool, true)
        XCTAssertEqual(bus["solo"] as? Bool, true)
        XCTAssertEqual(bus["solo_safe"] as? Bool, true)
        XCTAssertEqual(bus["output"] as? String, "out:3-4")
        XCTAssertTrue((bus["chain"] as? String ?? "").hasPrefix("reverb:"))
        try ok(["track", session, "reverb", "--gain", "-inf", "--unmute", "--unsolo", "--solo-safe", "off", "--output", "master"])
        bus = try strip("Reverb")
        XCTAssertTrue(bus["gain_db"] is NSNull, "-inf is null in JSON")
        XCTAssertEqual(bus["solo_safe"] as? Bool, false)

        let before = try sessionBytes()
        let why = "is a bus: "
        try refused(["track", session, "reverb", "--arm"], "track: Reverb \(why)--arm makes no sense there; a bus has no input")
        try refused(["track", session, "reverb", "--disarm"], "a bus has no input")
        try refused(["track", session, "reverb", "--input", "3"], "--input makes no sense there; a bus has no input")
        try refused(["track", session, "reverb", "--monitor", "input"], "--monitor makes no sense there; a bus has no input")
        try refused(["track", session, "reverb", "--freeze"], "a bus has no regions to freeze")
        try refused(["chain", session, "reverb", "--input", "gain:-3"], "chain: Reverb is a bus: a bus has no input, so no input chain")
        try refused(["track", session, "vocal", "--solo-safe", "on"], "track: --solo-safe is for buses; Vocal is a track")
        try refused(["track", session, "add", "Keys", "--solo-safe", "on"], "--solo-safe is for buses")
        try refused(["track", session, "reverb", "--solo-safe", "maybe"], "--solo-safe 'maybe' must be on or off")
        try refused(["track", session, "master", "--output", "bus:reverb"], "the master has only a fader")
        XCTAssertEqual(try sessionBytes(), before, "nothing refused was saved")
    }

    func testARenamedBusKeepsItsSendsAndTheOutputsRoutedToIt() throws {
        try ok(["track", session, "add", "Vocal"])
        try ok(["track", session, "add", "Drums"])
        try ok(["bus", session, "add", "Reverb"])
        try ok(["send", session, "vocal", "reverb", "--level", "-9", "--pre"])
        try ok(["track", session, "drums", "--output", "bus:Reverb"])
        let out = try ok(["track", session, "REVERB", "--name", "Hall"])
        XCTAssertTrue(out.hasPrefix("bus 3 (Hall)"), out)
        let sends = try ok(["send", session, "vocal"])
        XCTAssertTrue(sends.contains("send to Hall: -9.0 dB pre-fader, pan C"), sends)
        XCTAssertEqual(try strip("Drums")["output"] as? String, "bus:Hall")
        XCTAssertTrue(try ok(["bus", session]).contains("fed by: Vocal (send -9.0 dB pre), Drums (output)"))
        // Names stay unique among tracks and buses, and a bus is never called the master.
        try refused(["track", session, "hall", "--name", "vocal"], "track: track 1 is already called Vocal")
        try refused(["track", session, "vocal", "--name", "HALL"], "bus 3 is already called Hall")
        try refused(["bus", session, "add", "drums"], "bus: track 2 is already called Drums")
        try refused(["bus", session, "add", "Master"], "'Master' names the master")
        try refused(["track", session, "hall", "--name", "main"], "'main' names the master")
    }

    func testTyposInBusesAndActionsGetTheNearestName() throws {
        try ok(["track", session, "add", "Vocal"])
        try refused(["bus", session, "remove", "Reverb"], "no bus named 'Reverb' (the session has no buses")
        try ok(["bus", session, "add", "Reverb"])
        try refused(["bus", session, "remove", "Reverv"], "bus: no bus named 'Reverv' (did you mean 'Reverb'?)")
        try refused(["bus", session, "remove", "vocal"], "bus: Vocal is a track, not a bus (buses: Reverb)")
        try refused(["bus", session, "ad", "Delay"], "bus: unknown action 'ad' (did you mean 'add'?)")
        try refused(["send", session, "vocal", "Reverv"], "send: no bus named 'Reverv' (did you mean 'Reverb'?)")
        try refused(["send", session, "vocla", "Reverb"], "send: no track named 'vocla' (did you mean 'Vocal'?)")
        try refused(["track", session, "Reverv", "--gain", "-3"], "track: no track named 'Reverv' (did you mean 'Reverb'?)")
        try refused(["track", session, "vocal", "--output", "bus:Reverv"], "track: no bus named 'Reverv' (did you mean 'Reverb'?)")
        try refused(["track", session, "vocal", "--output", "Reverb"], "'Reverb' is not an output: master, bus:NAME or out:N[-M]")
        try refused(["track", session, "vocal", "--output", "out:3-5"], "a strip is mono or stereo")
        try refused(["bus", session, "add", "Delay", "--stero"], "unknown option '--stero' (did you mean --stereo?")
        try refused(["bus", session, "add", "Delay", "--stereo", "--mono"], "--stereo and --mono cannot be combined")
        try refused(["bus", session, "list", "--mono"], "--stereo and --mono go with add")
    }
}
