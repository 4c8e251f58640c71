import Foundation
import XCTest

/// `send` and `track --output`: sends added, changed, listed and removed; routings that
/// cannot be refused with the line naming them, and the session left as it was.
final class SendCommandTests: RoutingTestCase {
    override func setUpWithError() throws {
        try super.setUpWithError()
        try ok(["track", session, "add", "Vocal"])
        try ok(["bus", session, "add", "Reverb"])
        try ok(["bus", session, "add", "Cue"])
    }

    func testASendIsAddedChangedListedAndRemoved() throws {
        var out = try ok(["send", session, "vocal", "reverb", "--level", "-6", "--pre", "--pan", "L20"])
        XCTAssertEqual(out, "Vocal → Reverb: -6.0 dB pre-fader, pan L20 (new send)\n")
        out = try ok(["send", session, "vocal", "reverb", "--level", "-3"])
        XCTAssertEqual(out, "Vocal → Reverb: -3.0 dB pre-fader, pan L20\n", "a change keeps what it does not name")
        out = try ok(["send", session, "vocal", "reverb", "--post"])
        XCTAssertEqual(out, "Vocal → Reverb: -3.0 dB post-fader, pan L20\n")
        out = try ok(["send", session, "vocal", "cue"])
        XCTAssertEqual(out, "Vocal → Cue: 0.0 dB post-fader, pan C (new send)\n", "a new send starts at unity, post-fader")
        try ok(["send", session, "vocal", "Cue", "--level", "-inf", "--pre"])

        out = try ok(["send", session, "1"])
        XCTAssertEqual(out, """
        track 1 (Vocal)  output master
          send to Reverb: -3.0 dB post-fader, pan L20
          send to Cue: -inf dB pre-fader, pan C

        """)
        let listed = try CLIRun.json(try ok(["send", session, "vocal", "--json"]))
        let sends = listed["sends"] as? [[String: Any]] ?? []
        XCTAssertEqual(sends.count, 2, "one send per strip and bus")
        XCTAssertEqual(sends.first?["bus"] as? String, "Reverb")
        XCTAssertEqual(sends.first?["level_db"] as? Double, -3)
        XCTAssertEqual(sends.first?["pan"] as? Double, -0.2)
        XCTAssertEqual(sends.first?["pre_fader"] as? Bool, false)
        XCTAssertTrue(sends.last?["level_db"] is NSNull, "-inf is null")
        XCTAssertEqual(sends.last?["pre_fader"] as? Bool, true)
        // A bus sends too (a reverb into the cue mix).
        XCTAssertEqual(try ok(["send", session, "reverb", "cue", "--level", "-10"]), "Reverb → Cue: -10.0 dB post-fader, pan C (new send)\n")

        let text = try ok(["info", session])
        XCTAssertTrue(text.contains("  1. Vocal  in 1  0.0 dB  pan C\n       send to Reverb: -3.0 dB post-fader, pan L20\n       send to Cue: -inf dB pre-fader, pan C\n"), text)
        XCTAssertTrue(text.contains("  2. Reverb  bus, stereo  0.0 dB  pan C\n       fed by: Vocal (send -3.0 dB post)\n       send to Cue: -10.0 dB post-fader, pan C\n"), text)
        XCTAssertTrue(text.contains("fed by: Vocal (send -inf dB pre), Reverb (send -10.0 dB post)"), text)

        XCTAssertEqual(try ok(["send", session, "vocal", "reverb", "--remove"]), "removed Vocal's send to Reverb\n")
        try refused(["send", session, "vocal", "reverb", "--remove"], "send: Vocal has no send to Reverb")
        XCTAssertTrue(try ok(["send", session, "vocal"]).contains("send to Cue"))
        try ok(["send", session, "vocal", "cue", "--remove"])
        XCTAssertTrue(try ok(["send", session, "vocal"]).contains("no sends"))
    }

    func testACycleIsRefusedWithTheLineNamingItAndTheSessionIsUnchanged() throws {
        try ok(["send", session, "reverb", "cue", "--level", "-6"])
        let before = try sessionBytes()
        try refused(["send", session, "cue", "reverb"], "send: routing cycle: Reverb → Cue → Reverb")
        try refused(["track", session, "cue", "--output", "bus:reverb"], "track: routing cycle: Reverb → Cue → Reverb")
        // A longer loop is named strip by strip.
        try ok(["bus", session, "add", "Delay"])
        try ok(["track", session, "cue", "--output", "bus:delay"])
        let longer = try sessionBytes()
        try refused(["send", session, "delay", "reverb", "--level", "-3"], "routing cycle: Reverb → Cue → Delay → Reverb")
        XCTAssertEqual(try sessionBytes(), longer, "a refused change writes nothing")
        try ok(["track", session, "cue", "--output", "master"])
        try ok(["bus", session, "remove", "delay"])
        XCTAssertEqual(try sessionBytes(), before)

        try refused(["send", session, "reverb", "reverb"], "send: bus Reverb: a bus cannot send to itself")
        try refused(["track", session, "reverb", "--output", "bus:Reverb"], "track: bus Reverb: a bus cannot output to itself")
        try refused(["send", session, "reverb", "vocal"], "send: Vocal is a track, not a bus (buses: Reverb, Cue)")
        try refused(["track", session, "reverb", "--output", "bus:vocal"], "track: Vocal is a track, not a bus")
        XCTAssertEqual(try sessionBytes(), before, "nothing refused was saved")
    }

    func testSendOptionsAreCheckedBeforeAnythingIsRead() throws {
        try refused(["send", session, "vocal", "reverb", "--level", "loud"], "send: --level 'loud' is not a level in dB")
        try refused(["send", session, "vocal", "reverb", "--level", "+20"], "send: --level +20: a send goes from -inf to +12 dB")
        try refused(["send", session, "vocal", "reverb", "--pan", "L200"], "send: --pan 'L200' must be L100...C...R100 or -1...1")
        try refused(["send", session, "vocal", "reverb", "--pre", "--post"], "--pre and --post cannot be combined")
        try refused(["send", session, "vocal", "reverb", "--remove", "--level", "-3"], "--remove takes the send away")
        try refused(["send", session, "vocal", "--level", "-3"], "send: name the bus the send goes to")
        try refused(["send", session, "vocal", "reverb", "--json"], "--json lists a strip's sends")
        try refused(["send", session, "vocal", "reverb", "--levle", "-3"], "did you mean --level?")
    }
}
