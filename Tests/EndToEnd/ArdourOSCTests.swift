import Foundation
import XCTest
import TapedeckCore
import TapedeckIO
import TapedeckRemote
#if canImport(Glibc)
import Glibc
#endif

/// What an OSC layout made for Ardour (TouchOSC, Open Stage Control) sends, replayed on the
/// real screen with liblo's `oscsend`, and every feedback message it gets checked through
/// `oscdump` (address, type tags, value), against what Ardour's own surface code sends.
final class ArdourOSCTests: XCTestCase {
    var folder = ""
    var session = ""

    override func setUpWithError() throws {
        guard access("/usr/bin/oscsend", X_OK) == 0, access("/usr/bin/oscdump", X_OK) == 0 else {
            throw XCTSkip("liblo-tools (oscsend, oscdump) is not installed: make test-deps")
        }
        (folder, session) = try ScreenTmux.demoFolder(self)
    }

    /// One message as `oscdump` printed it: `/strip/mute if 2 1.000000`.
    struct Dumped: Equatable, CustomStringConvertible {
        let path: String
        let types: String
        let values: [String]
        var description: String { "\(path) \(types) \(values.joined(separator: " "))" }
    }

    /// `oscdump` on a port of its own; what it was sent so far, in order.
    final class Surface {
        let port = ScreenOSCTests.freePort()
        let file: String
        private let process = Process()

        init(folder: String) throws {
            file = folder + "/oscdump-\(port).txt"
            FileManager.default.createFile(atPath: file, contents: nil)
            process.executableURL = URL(fileURLWithPath: "/usr/bin/oscdump")
            process.arguments = ["-L", "\(port)"]
            process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: file))
            process.standardError = FileHandle.nullDevice
            try process.run()
            usleep(300_000) // oscdump binds its port
        }

        deinit {
            process.terminate()
            process.waitUntilExit()
        }

        var messages: [Dumped] {
            ((try? String(contentsOfFile: file, encoding: .utf8)) ?? "").split(separator: "\n").compactMap { line in
                let f = line.split(separator: " ", omittingEmptySubsequences: false).map(String.init)
                guard f.count >= 2 else { return nil }
                // A string argument is printed in quotes and may hold spaces: joined back.
                let rest = f.count > 3 ? Array(f[3...]) : []
                var values: [String] = []
                var open: String?
                for word in rest {
                    if let o = open {
                        open = o + " " + word
                        if word.hasSuffix("\"") { values.append(open!); open = nil }
                    } else if word.hasPrefix("\"") && !(word.count > 1 && word.hasSuffix("\"")) {
                        open = word
                    } else {
                        values.append(word)
                    }
                }
                return Dumped(path: f[1], types: f.count > 2 ? f[2] : "", values: values)
            }
        }

        /// The last message sent to `path`, or nil.
        func last(_ path: String) -> Dumped? { messages.last { $0.path == path } }

        /// The last message sent to `path` whose first value is `id` (a strip's).
        func last(_ path: String, id: Int) -> Dumped? { messages.last { $0.path == path && $0.values.first == "\(id)" } }
    }

    func oscsend(_ port: Int, _ path: String, _ types: String = "", _ args: String..., file: StaticString = #filePath, line: UInt = #line) {
        let result = try? Tapedeck.run(["127.0.0.1", "\(port)", path] + (types.isEmpty ? [] : [types] + args), executable: "/usr/bin/oscsend")
        XCTAssertEqual(result?.status, 0, "oscsend \(path): \(result?.stderr ?? "did not run")", file: file, line: line)
    }

    /// Polls `condition` every 50 ms for at most `timeout` seconds; fails when it never holds.
    @discardableResult
    func wait(_ what: String, timeout: Double = 20, file: StaticString = #filePath, line: UInt = #line, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if condition() { return true }
            usleep(50_000)
        }
        XCTFail("timed out waiting for \(what)", file: file, line: line)
        return false
    }

    /// The playhead the surface was last sent (`/position/samples`).
    func position(_ s: Surface) -> Int? {
        s.last("/position/samples").flatMap { Int($0.values.first?.trimmingCharacters(in: CharacterSet(charactersIn: "\"")) ?? "") }
    }

    /// A screen on the offline device with OSC on, and a surface registered with `feedback`.
    func open(feedback: Int, bankSize: Int = 0, faderMode: Int = 2, pluginPageSize: Int = 0) throws -> (ScreenTmux, Surface, Int) {
        let port = ScreenOSCTests.freePort()
        let screen = try ScreenTmux(self, folder: folder, args: [session, "--device", "offline", "--osc", "\(port)"])
        screen.waitFor("STOPPED")
        let surface = try Surface(folder: folder)
        oscsend(port, "/set_surface", "iiiiiii", "\(bankSize)", "0", "\(feedback)", "\(faderMode)", "0", "\(pluginPageSize)", "\(surface.port)")
        return (screen, surface, port)
    }

    private func loopOn(_ s: Surface) -> Bool? { s.last("/loop_toggle")?.values.first.flatMap(Double.init).map { $0 == 1 } }

    func testButtonsActOnThePressAndNotOnTheRelease() throws {
        for (t, name) in [("0:01", "A"), ("0:02", "B"), ("0:03", "C"), ("0:04", "D")] {
            XCTAssertEqual(try Tapedeck.run(["marker", session, "add", t, name]).status, 0)
        }
        XCTAssertEqual(try Tapedeck.run(["loop", session, "0:01-0:03", "--off"]).status, 0)
        // Buttons and the playhead in samples (1 + 16 + 1024).
        let (screen, surface, port) = try open(feedback: 1 + 16 + 1024)
        wait("the playhead at 0") { position(surface) == 0 }
        let rate = try SessionFolder(path: session).load().sampleRate

        // Two presses of next marker, each with its release: two markers on, not four.
        for _ in 0..<2 {
            oscsend(port, "/next_marker", "f", "1.0")
            oscsend(port, "/next_marker", "f", "0.0")
        }
        // Other floats than 1.0 are not presses either.
        oscsend(port, "/next_marker", "f", "0.5")
        oscsend(port, "/next_marker", "i", "0")
        wait("the playhead on marker B") { position(surface) == 2 * rate }
        usleep(500_000)
        XCTAssertEqual(position(surface), 2 * rate, "a release moved the playhead on")

        // The loop button: on with its press, and still on after its release.
        oscsend(port, "/loop_toggle", "f", "1.0")
        oscsend(port, "/loop_toggle", "f", "0.0")
        wait("the loop on") { loopOn(surface) == true }
        usleep(500_000)
        XCTAssertEqual(loopOn(surface), true, "the release turned the loop off again")
        XCTAssertTrue(screen.capture().contains("LOOP on"), screen.capture())

        // /add_marker as a button sends it: a marker at the playhead.
        oscsend(port, "/add_marker", "f", "1.0")
        oscsend(port, "/add_marker", "f", "0.0")
        let shown = screen.waitFor("the marker added") { $0.contains("marker M") || $0.contains("M1") }
        XCTAssertFalse(shown.contains("refused") || shown.contains("must be a string"), shown)
        XCTAssertTrue(screen.isRunning)
    }

    /// Datagrams sent back to back from one socket (as fast as a surface's burst).
    func burst(_ port: Int, _ messages: [OSCMessage]) {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        defer { close(fd) }
        var to = sockaddr_in()
        to.sin_family = sa_family_t(AF_INET)
        to.sin_port = in_port_t(UInt16(port).bigEndian)
        to.sin_addr.s_addr = inet_addr("127.0.0.1")
        for m in messages {
            let bytes = OSCPacket.encode(m)!
            _ = bytes.withUnsafeBytes { data in
                withUnsafePointer(to: &to) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(fd, data.baseAddress, data.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                } }
            }
        }
    }

    /// The values `path` (strip `id`, when given) was sent, in order.
    func values(_ s: Surface, _ path: String, id: Int? = nil) -> [String] {
        s.messages.filter { $0.path == path && (id == nil || $0.values.first == "\(id!)") }.map { $0.values.last ?? "" }
    }

    func testFeedbackHasArdoursTypesAndValuesAndTheSessionsState() throws {
        XCTAssertEqual(try Tapedeck.run(["marker", session, "add", "0:02", "Verse"]).status, 0)
        XCTAssertEqual(try Tapedeck.run(["track", session, "2", "--gain", "-inf"]).status, 0)
        XCTAssertEqual(try Tapedeck.run(["track", session, "3", "--arm"]).status, 0)
        // Everything Tapedeck answers: buttons, values, heartbeat, master, bbt, smpte, meters,
        // samples, time (1+2+8+16+32+64+128+1024+2048); gain in dB.
        let (screen, surface, port) = try open(feedback: 3323, faderMode: 0)
        let rate = try SessionFolder(path: session).load().sampleRate
        wait("the state sent") { surface.last("/session_name") != nil && surface.last("/strip/name", id: 4) != nil }

        // Ardour's types: buttons and states are floats, strings are strings.
        XCTAssertEqual(surface.last("/strip/name", id: 1), Dumped(path: "/strip/name", types: "is", values: ["1", "\"Drums\""]))
        XCTAssertEqual(surface.last("/strip/mute", id: 1), Dumped(path: "/strip/mute", types: "if", values: ["1", "0.000000"]))
        XCTAssertEqual(surface.last("/strip/solo", id: 1), Dumped(path: "/strip/solo", types: "if", values: ["1", "0.000000"]))
        XCTAssertEqual(surface.last("/strip/recenable", id: 3), Dumped(path: "/strip/recenable", types: "if", values: ["3", "1.000000"]))
        XCTAssertEqual(surface.last("/strip/gain", id: 1), Dumped(path: "/strip/gain", types: "if", values: ["1", "-5.000000"]))
        // Silence is −200 dB, as Ardour sends it (not −193).
        XCTAssertEqual(surface.last("/strip/gain", id: 2), Dumped(path: "/strip/gain", types: "if", values: ["2", "-200.000000"]))
        XCTAssertEqual(surface.last("/transport_play"), Dumped(path: "/transport_play", types: "f", values: ["0.000000"]))
        XCTAssertEqual(surface.last("/transport_stop"), Dumped(path: "/transport_stop", types: "f", values: ["1.000000"]))
        XCTAssertEqual(surface.last("/loop_toggle"), Dumped(path: "/loop_toggle", types: "f", values: ["0.000000"]))
        XCTAssertEqual(surface.last("/rec_enable_toggle"), Dumped(path: "/rec_enable_toggle", types: "f", values: ["0.000000"]))
        // A track is armed: the record tally is lit.
        XCTAssertEqual(surface.last("/record_tally"), Dumped(path: "/record_tally", types: "f", values: ["1.000000"]))
        XCTAssertEqual(surface.last("/session_name"), Dumped(path: "/session_name", types: "s", values: ["\"demo\""]))
        XCTAssertEqual(surface.last("/master/name"), Dumped(path: "/master/name", types: "s", values: ["\"Master\""]))
        XCTAssertEqual(surface.last("/master/gain")?.types, "f")
        XCTAssertEqual(surface.last("/position/bbt"), Dumped(path: "/position/bbt", types: "s", values: ["\"001|01|0000\""]))
        XCTAssertEqual(surface.last("/position/smpte"), Dumped(path: "/position/smpte", types: "s", values: ["\"00:00:00:00\""]))
        XCTAssertEqual(surface.last("/position/time"), Dumped(path: "/position/time", types: "s", values: ["\"00:00:00.000\""]))
        // The demo's marker "intro" stands at the start.
        XCTAssertEqual(surface.last("/marker"), Dumped(path: "/marker", types: "s", values: ["\"intro\""]))
        // The heartbeat beats: 1 and 0, a second each.
        wait("a heartbeat of 1 and of 0", timeout: 5) { Set(values(surface, "/heartbeat")).isSuperset(of: ["1.000000", "0.000000"]) }
        XCTAssertEqual(surface.last("/heartbeat")?.types, "f")

        // On the marker at 2 s (at 120 BPM in 4/4: bar 2): bbt, smpte, the marker's name.
        oscsend(port, "/locate", "ii", "\(2 * rate)", "0")
        wait("the playhead at 2 s") { surface.last("/position/samples")?.values == ["\"\(2 * rate)\""] }
        wait("the bbt and the marker") {
            surface.last("/position/bbt")?.values == ["\"002|01|0000\""] && surface.last("/marker")?.values == ["\"Verse\""]
        }
        XCTAssertEqual(surface.last("/position/smpte")?.values, ["\"00:00:02:00\""])

        // Mute on, off, on, and play, stop, play, in one burst: the surface is told the last
        // of each and nothing flickers in between.
        let before = surface.messages.count
        burst(port, [OSCMessage("/strip/mute", [.int(1), .float(1)]), OSCMessage("/strip/mute", [.int(1), .float(0)]),
                     OSCMessage("/strip/mute", [.int(1), .float(1)]),
                     OSCMessage("/transport_play", [.float(1)]), OSCMessage("/transport_stop", [.float(1)]),
                     OSCMessage("/transport_play", [.float(1)])])
        wait("playing and muted fed back") {
            surface.last("/transport_play")?.values == ["1.000000"] && surface.last("/strip/mute", id: 1)?.values == ["1", "1.000000"]
        }
        screen.waitFor("PLAYING")
        usleep(500_000)
        let after = Array(surface.messages[before...])
        XCTAssertEqual(after.filter { $0.path == "/transport_play" }.map(\.values), [["1.000000"]], "\(after)")
        XCTAssertEqual(after.filter { $0.path == "/transport_stop" }.map(\.values), [["0.000000"]], "\(after)")
        XCTAssertEqual(after.filter { $0.path == "/strip/mute" }.map(\.values), [["1", "1.000000"]], "\(after)")
        oscsend(port, "/transport_stop", "f", "1.0")
        wait("stopped fed back") { surface.last("/transport_stop")?.values == ["1.000000"] }

        // Issue 45: the session set to 25 fps while the screen holds it (a handed command):
        // /position/smpte counts at 25, so 2.5 s is frame 12 (at 30 it would be 15).
        let set = try Tapedeck.run(["session", session, "--timecode", "25"])
        XCTAssertEqual(set.status, 0, set.stderr)
        oscsend(port, "/locate", "ii", "\(5 * rate / 2)", "0")
        wait("the playhead at 2.5 s") { surface.last("/position/samples")?.values == ["\"\(5 * rate / 2)\""] }
        wait("the timecode at 25 fps") { surface.last("/position/smpte")?.values == ["\"00:00:02:12\""] }
        XCTAssertTrue(screen.isRunning)
    }

    /// A TouchOSC Mk1 layout for Ardour: banks of two strips with the strip number in the
    /// address (feedback bit 4), fader positions, the master, the select page, `/strip/list`.
    func testATouchOSCLayoutPagesBanksDrivesStripsByAddressTheMasterAndTheSelectPage() throws {
        // Buttons, values, ids in the address, master, select page, /reply (1+2+4+16+8192+16384).
        let (screen, surface, port) = try open(feedback: 24599, bankSize: 2, faderMode: 1)
        wait("the first bank named") { surface.last("/strip/name/2") != nil }
        XCTAssertEqual(surface.last("/strip/name/1"), Dumped(path: "/strip/name/1", types: "s", values: ["\"Drums\""]))
        XCTAssertEqual(surface.last("/strip/name/2"), Dumped(path: "/strip/name/2", types: "s", values: ["\"Bass\""]))
        XCTAssertNil(surface.last("/strip/name/3"), "a bank of two shows two strips")
        XCTAssertNil(surface.last("/strip/name"), "no strip id as an argument with bit 4")
        XCTAssertEqual(surface.last("/strip/mute/1"), Dumped(path: "/strip/mute/1", types: "f", values: ["0.000000"]))
        XCTAssertEqual(surface.last("/bank_up"), Dumped(path: "/bank_up", types: "i", values: ["1"]))
        XCTAssertEqual(surface.last("/bank_down"), Dumped(path: "/bank_down", types: "i", values: ["0"]))
        XCTAssertNil(surface.last("/strip/gain/1"), "fader mode 1: positions only")

        // The fader of strip 2 by address: Ardour's law, 0.5 is -10.469 dB.
        oscsend(port, "/strip/fader/2", "f", "0.5")
        screen.waitFor("Bass at -10.5 dB") { $0.contains("Bass fader -10.5 dB — asked by osc") }
        wait("the fader fed back") { surface.last("/strip/fader/2")?.values == ["0.500000"] }

        // Bank up, pressed and released: strips 3 and 4 under the same two slots.
        oscsend(port, "/bank_up", "f", "1.0")
        oscsend(port, "/bank_up", "f", "0.0")
        wait("the second bank named") { surface.last("/strip/name/1")?.values == ["\"Keys\""] }
        XCTAssertEqual(surface.last("/strip/name/2")?.values, ["\"Vocal\""])
        XCTAssertEqual(surface.last("/bank_up")?.values, ["0"])
        XCTAssertEqual(surface.last("/bank_down")?.values, ["1"])
        // Slot 1 is Keys now.
        oscsend(port, "/strip/mute/1", "f", "1.0")
        screen.waitFor("Keys muted") { $0.contains("Keys mute on — asked by osc") }
        wait("the mute fed back on slot 1") { surface.last("/strip/mute/1")?.values == ["1.000000"] }
        oscsend(port, "/bank_down", "f", "1.0")
        oscsend(port, "/bank_down", "f", "0.0")
        wait("the first bank again") { surface.last("/strip/name/1")?.values == ["\"Drums\""] }
        XCTAssertEqual(surface.last("/strip/mute/1")?.values, ["0.000000"], "Drums is not muted")

        // The master fader.
        oscsend(port, "/master/fader", "f", "0.5")
        screen.waitFor("the master at -10.5 dB") { $0.contains("master fader -10.5 dB — asked by osc") }
        wait("the master fed back") { surface.last("/master/fader")?.values == ["0.500000"] }
        XCTAssertEqual(surface.last("/master/name")?.values, ["\"Master\""])
        oscsend(port, "/master/mute", "f", "1.0")
        screen.waitFor("the master mute refused") { $0.contains("/master/mute: Tapedeck's master has a fader only") }

        // Select strip 2 (Bass): the select page follows it, and drives it.
        oscsend(port, "/strip/select/2", "f", "1.0")
        oscsend(port, "/strip/select/2", "f", "0.0")
        wait("Bass selected") { surface.last("/select/name")?.values == ["\"Bass\""] }
        XCTAssertEqual(surface.last("/strip/select/2"), Dumped(path: "/strip/select/2", types: "f", values: ["1.000000"]))
        XCTAssertEqual(surface.last("/strip/select/1")?.values, ["0.000000"])
        XCTAssertEqual(surface.last("/select/fader"), Dumped(path: "/select/fader", types: "f", values: ["0.500000"]))
        oscsend(port, "/select/mute", "f", "1.0")
        wait("Bass muted from the select page") {
            surface.last("/select/mute")?.values == ["1.000000"] && surface.last("/strip/mute/2")?.values == ["1.000000"]
        }
        oscsend(port, "/select/fader", "f", "0.0")
        wait("Bass silent from the select page") { surface.last("/strip/fader/2")?.values == ["0.000000"] }

        // Input monitoring by address (an int, as Ardour's strip page sends it); no trim.
        oscsend(port, "/strip/monitor_input/1", "f", "1.0")
        wait("Drums monitoring its input") { surface.last("/strip/monitor_input/1") == Dumped(path: "/strip/monitor_input/1", types: "i", values: ["1"]) }
        oscsend(port, "/strip/trimdB/1", "f", "3.0")
        screen.waitFor("the trim refused") { $0.contains("/strip/trimdB: Tapedeck's strips have no trim") }

        // /strip/list: a /reply row per strip from the bank on, then the end of the list.
        oscsend(port, "/strip/list", "f", "1.0")
        wait("the list's end") { surface.last("/reply")?.values.first == "\"end_route_list\"" }
        let rows = surface.messages.filter { $0.path == "/reply" }
        XCTAssertEqual(rows.count, 5, "\(rows)")
        XCTAssertEqual(rows.first?.types, "ssiiiiii")
        XCTAssertEqual(rows.first?.values.prefix(2), ["\"AT\"", "\"Drums\""])
        XCTAssertEqual(rows.first?.values.suffix(4), ["0", "0", "1", "0"], "mute, solo, ssid, record-enable")
        XCTAssertEqual(rows[1].values.suffix(4), ["1", "0", "2", "0"], "Bass is muted")
        XCTAssertEqual(rows.last?.types, "shhi")

        // Every message the layout was sent: an address Ardour sends, with Ardour's types
        // (the strip number in the address, as asked, never as an argument).
        let floats = ["/strip/mute", "/strip/solo", "/strip/recenable", "/strip/select", "/strip/fader", "/strip/trimdB",
                      "/strip/pan_stereo_position", "/master/fader", "/master/mute", "/master/trimdB", "/transport_play",
                      "/transport_stop", "/toggle_roll", "/loop_toggle", "/rewind", "/ffwd", "/rec_enable_toggle", "/record_tally",
                      "/cancel_all_solos", "/select/mute", "/select/solo", "/select/recenable", "/select/monitor_input",
                      "/select/trimdB", "/select/n_inputs", "/select/n_outputs", "/select/fader", "/select/pan_stereo_position",
                      "/select/send_fader", "/select/plugin/activate", "/select/plugin/parameter"]
        var expected = Dictionary(uniqueKeysWithValues: floats.map { ($0, "f") })
        for path in ["/strip/name", "/master/name", "/session_name", "/marker", "/select/name", "/select/send_name",
                     "/select/plugin/name", "/select/plugin/parameter/name"] {
            expected[path] = "s"
        }
        expected["/strip/monitor_input"] = "i"
        expected["/bank_up"] = "i"
        expected["/bank_down"] = "i"
        for m in surface.messages where m.path != "/reply" {
            var base = m.path
            if let slash = base.lastIndex(of: "/"), Int(base[base.index(after: slash)...]) != nil { base = String(base[..<slash]) }
            XCTAssertEqual(expected[base], m.types, "\(m): not an address Ardour sends with these types")
        }
        XCTAssertTrue(screen.isRunning)
    }

    /// `/ffwd` rolls faster at each press (varispeed) and play brings the user's speed back;
    /// `/rewind` winds the playhead backwards (Tapedeck does not play backwards) until stopped.
    func testFastForwardAndRewindWindRatherThanJump() throws {
        // Master section (the transport's states) and the playhead in samples.
        let (screen, surface, port) = try open(feedback: 16 + 1024)
        let rate = try SessionFolder(path: session).load().sampleRate
        wait("stopped at 0") { position(surface) == 0 && surface.last("/ffwd") != nil }
        XCTAssertEqual(surface.last("/ffwd"), Dumped(path: "/ffwd", types: "f", values: ["0.000000"]))

        oscsend(port, "/ffwd", "f", "1.0")
        oscsend(port, "/ffwd", "f", "0.0")
        screen.waitFor("rolling at twice the speed") { $0.contains("PLAYING") && $0.contains("2.00x") }
        wait("the wind fed back") { surface.last("/ffwd")?.values == ["1.000000"] && surface.last("/transport_play")?.values == ["0.000000"] }
        oscsend(port, "/ffwd", "f", "1.0")
        screen.waitFor("faster at the second press") { $0.contains("3.00x") }
        XCTAssertTrue((position(surface) ?? 0) < 8 * rate, "it winds, it does not jump to the end")
        oscsend(port, "/transport_play", "f", "1.0")
        screen.waitFor("back at the user's speed") { $0.contains("PLAYING") && $0.contains("1.00x") }
        wait("play fed back") { surface.last("/ffwd")?.values == ["0.000000"] && surface.last("/transport_play")?.values == ["1.000000"] }
        oscsend(port, "/transport_stop", "f", "1.0")
        screen.waitFor("STOPPED")

        // Rewind from 6 s: the playhead goes back bit by bit, not to 0 at once.
        oscsend(port, "/locate", "ii", "\(6 * rate)", "0")
        wait("at 6 s") { position(surface) == 6 * rate }
        oscsend(port, "/rewind", "f", "1.0")
        oscsend(port, "/rewind", "f", "0.0")
        wait("the rewind fed back") { surface.last("/rewind")?.values == ["1.000000"] }
        wait("the playhead moving back") { (position(surface) ?? 0) < 6 * rate && (position(surface) ?? 0) > 0 }
        let seen = Set(surface.messages.filter { $0.path == "/position/samples" }.map(\.values))
        XCTAssertGreaterThan(seen.count, 2, "several steps back, not one jump: \(seen)")
        oscsend(port, "/transport_stop", "f", "1.0")
        wait("the wind ended") { surface.last("/rewind")?.values == ["0.000000"] }
        let stoppedAt = position(surface)
        usleep(400_000)
        XCTAssertEqual(position(surface), stoppedAt, "stop ends the wind")

        // A wind forwards that runs into the session's end is over when the transport stops.
        oscsend(port, "/locate", "ii", "\(15 * rate / 2)", "0")
        wait("at 7.5 s") { position(surface) == 15 * rate / 2 }
        oscsend(port, "/ffwd", "f", "1.0")
        wait("winding to the end") { surface.last("/ffwd")?.values == ["1.000000"] }
        screen.waitFor("stopped at the end, back at the user's speed", timeout: 20) { $0.contains("STOPPED") && $0.contains("1.00x") }
        wait("the wind's end fed back") { surface.last("/ffwd")?.values == ["0.000000"] && surface.last("/transport_stop")?.values == ["1.000000"] }
        XCTAssertTrue(screen.isRunning)
    }

    /// The select page's plugin page: the selected strip's chain, node by node, each
    /// parameter as 0…1 of its range, and set that way.
    func testTheSelectPagesPluginParametersAreTheSelectedStripsChain() throws {
        XCTAssertEqual(try Tapedeck.run(["chain", session, "1", "hpf:cutoff=80,comp:threshold=-18:ratio=4"]).status, 0)
        // Buttons and the select page (1 + 8192).
        let (screen, surface, port) = try open(feedback: 8193)
        oscsend(port, "/strip/select", "if", "1", "1.0")
        wait("the first node shown") { surface.last("/select/plugin/name")?.values == ["\"hpf\""] }
        XCTAssertEqual(surface.last("/select/plugin/activate"), Dumped(path: "/select/plugin/activate", types: "f", values: ["1.000000"]))
        XCTAssertEqual(surface.last("/select/plugin/parameter/name", id: 1), Dumped(path: "/select/plugin/parameter/name", types: "is", values: ["1", "\"Cutoff\""]))
        // 80 Hz of 10…20000.
        let cutoff = try XCTUnwrap(surface.last("/select/plugin/parameter", id: 1)?.values.last.flatMap(Double.init))
        XCTAssertEqual(cutoff, (80.0 - 10) / (20_000 - 10), accuracy: 1e-5)

        // The next node: the compressor; its threshold (-18 of -60…0) set to the middle.
        oscsend(port, "/select/plugin", "f", "1.0")
        wait("the compressor shown") { surface.last("/select/plugin/name")?.values == ["\"comp\""] }
        let threshold = try XCTUnwrap(surface.last("/select/plugin/parameter", id: 1)?.values.last.flatMap(Double.init))
        XCTAssertEqual(threshold, 0.7, accuracy: 1e-5)
        oscsend(port, "/select/plugin/parameter", "if", "1", "0.5")
        screen.waitFor("the threshold at -30 dB") { $0.contains("Drums node 2 threshold -30 — asked by osc") }
        wait("the threshold fed back") { surface.last("/select/plugin/parameter", id: 1)?.values == ["1", "0.500000"] }
        XCTAssertTrue(screen.isRunning)
    }
}
