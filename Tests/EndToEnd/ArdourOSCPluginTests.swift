import Foundation
import XCTest
import TapedeckIO

/// The select page's plugin page as Ardour's surface code drives it (`osc.cc`: `sel_plugin`,
/// `sel_plug_page`, `sel_plugin_activate`, `select_plugin_parameter`; the feedback of
/// `osc_select_observer.cc`'s `plugin_init`), replayed as ``ArdourOSCTests`` does.
extension ArdourOSCTests {
    /// The plugin page's parameter slot `id` (name, value), as last sent.
    func slot(_ s: Surface, _ id: Int) -> (name: String?, value: Double?) {
        (s.last("/select/plugin/parameter/name", id: id)?.values.last,
         s.last("/select/plugin/parameter", id: id)?.values.last.flatMap(Double.init))
    }

    func testThePluginPagePagesNodesAndParametersAndBypassesANode() throws {
        XCTAssertEqual(try Tapedeck.run(["chain", session, "1", "hpf:cutoff=80,comp:threshold=-18:ratio=4,gain:-6"]).status, 0)
        // Buttons and the select page (1 + 8192), four parameters a page.
        let (screen, surface, port) = try open(feedback: 8193, pluginPageSize: 4)
        oscsend(port, "/strip/select", "if", "1", "1.0")
        wait("the first node shown") { surface.last("/select/plugin/name")?.values == ["\"hpf\""] }

        // Ardour's (int) f: 0.5 is no step, 2.0 two nodes on, -5.0 back to the first.
        oscsend(port, "/select/plugin", "f", "0.5")
        oscsend(port, "/select/plugin", "f", "2.0")
        wait("the third node") { surface.last("/select/plugin/name")?.values == ["\"gain\""] }
        oscsend(port, "/select/plugin", "f", "-5.0")
        wait("back at the first") { surface.last("/select/plugin/name")?.values == ["\"hpf\""] }
        oscsend(port, "/select/plugin", "f", "1.0")
        wait("the compressor") { surface.last("/select/plugin/name")?.values == ["\"comp\""] }

        // A page of four: Threshold, Ratio, Attack, Release; the next page Knee, Makeup and
        // two cleared slots (a name " ", a value 0, as Ardour clears one).
        wait("the first page") { slot(surface, 4).name == "\"Release\"" }
        XCTAssertEqual(slot(surface, 1).name, "\"Threshold\"")
        XCTAssertEqual(surface.last("/select/plugin/parameter", id: 2)?.types, "if")
        XCTAssertEqual(try XCTUnwrap(slot(surface, 2).value), (4.0 - 1) / 19, accuracy: 1e-5, "ratio 4 of 1…20")
        oscsend(port, "/select/plug_page", "f", "1.0")
        wait("the second page") { slot(surface, 1).name == "\"Knee width\"" }
        XCTAssertEqual(slot(surface, 2).name, "\"Makeup gain\"")
        XCTAssertEqual(surface.last("/select/plugin/parameter/name", id: 3), Dumped(path: "/select/plugin/parameter/name", types: "is", values: ["3", "\" \""]))
        XCTAssertEqual(surface.last("/select/plugin/parameter", id: 3), Dumped(path: "/select/plugin/parameter", types: "if", values: ["3", "0.000000"]))
        // No page past the last parameter.
        oscsend(port, "/select/plug_page", "f", "1.0")
        usleep(300_000)
        XCTAssertEqual(slot(surface, 1).name, "\"Knee width\"")
        // A slot on this page is the page's parameter: slot 2 is the makeup gain.
        oscsend(port, "/select/plugin/parameter", "if", "2", "0.5")
        screen.waitFor("the makeup at 12 dB") { $0.contains("Drums node 2 makeup 12 — asked by osc") }
        wait("the makeup fed back") { slot(surface, 2).value == 0.5 }
        oscsend(port, "/select/plug_page", "f", "-1.0")
        wait("the first page again") { slot(surface, 1).name == "\"Threshold\"" }

        // Activate: 0 bypasses the node, 1 brings it back, as Ardour's plugin activate.
        XCTAssertEqual(surface.last("/select/plugin/activate"), Dumped(path: "/select/plugin/activate", types: "f", values: ["1.000000"]))
        oscsend(port, "/select/plugin/activate", "f", "0.0")
        screen.waitFor("the compressor bypassed") { $0.contains("Drums node 2 bypassed — asked by osc") }
        wait("the bypass fed back") { surface.last("/select/plugin/activate")?.values == ["0.000000"] }
        screen.send("C-s")
        screen.waitFor("saved ")
        XCTAssertEqual(try SessionFolder(path: session).load().tracks[0].playbackChain, "hpf:cutoff=80,!comp:threshold=-18:ratio=4:makeup=12,gain:gain=-6")
        oscsend(port, "/select/plugin/activate", "f", "1.0")
        wait("back in") { surface.last("/select/plugin/activate")?.values == ["1.000000"] }
        // By strip and plugin id: /strip/plugin/deactivate ssid piid, and activate.
        oscsend(port, "/strip/plugin/deactivate", "ii", "1", "3")
        screen.waitFor("the gain bypassed") { $0.contains("Drums node 3 bypassed — asked by osc") }
        oscsend(port, "/strip/plugin/activate", "ii", "1", "3")
        screen.waitFor("the gain back in") { $0.contains("Drums node 3 back in — asked by osc") }

        // Each a step of its own: three undos bring the bypass of the compressor back.
        for _ in 0..<3 { screen.send("u") }
        wait("the compressor bypassed again") { surface.last("/select/plugin/activate")?.values == ["0.000000"] }
        screen.send("C-s")
        screen.waitFor("saved ")
        XCTAssertEqual(try SessionFolder(path: session).load().tracks[0].playbackChain, "hpf:cutoff=80,!comp:threshold=-18:ratio=4:makeup=12,gain:gain=-6")
        XCTAssertTrue(screen.isRunning)
    }
}

extension ArdourOSCTests {
    /// An LV2 plugin's control ports on the plugin page, mapped as Ardour maps them: swh's
    /// Glame low-pass filter, its cutoff logarithmic (over fractions of the rate: 4.8 Hz …
    /// 21.6 kHz at 48 kHz), its stages whole steps 1…10.
    func testAnLV2PluginsControlPortsAreOnThePluginPageWithArdoursMapping() throws {
        guard access("/usr/lib/lv2/lowpass_iir-swh.lv2/plugin.ttl", R_OK) == 0 else { throw XCTSkip("swh-lv2 is not installed: make test-deps") }
        let rate = try SessionFolder(path: session).load().sampleRate
        try Signals.write([Signals.sine(hertz: 1000, amplitude: 0.25, frames: 20 * rate, sampleRate: rate)], to: folder + "/sine.wav")
        XCTAssertEqual(try Tapedeck.run(["import", session, folder + "/sine.wav"]).status, 0)
        let uri = "http://plugin.org.uk/swh-plugins/lowpass_iir"
        let set = try Tapedeck.run(["chain", session, "5", "lv2:\(uri):cutoff=21600"])
        XCTAssertEqual(set.status, 0, set.stderr)
        // Buttons, select page, meters in dB (1 + 8192 + 128), gain mode 0.
        let (screen, surface, port) = try open(feedback: 8321, faderMode: 0)
        oscsend(port, "/strip/select", "if", "5", "1.0")
        // The plugin's own name, its ports' names (stages not set: its default, 1).
        wait("the plugin shown") { surface.last("/select/plugin/name")?.values == ["\"Glame Lowpass Filter\""] }
        wait("its parameters") { slot(surface, 2).name == "\"Stages(2 poles per stage)\"" }
        XCTAssertEqual(slot(surface, 1).name, "\"Cutoff Frequency\"")
        XCTAssertEqual(try XCTUnwrap(slot(surface, 1).value), 1, accuracy: 1e-5)
        // Ardour's integer law: (1 + 0.5 - 1) / (1 + 10 - 1).
        XCTAssertEqual(try XCTUnwrap(slot(surface, 2).value), 0.05, accuracy: 1e-5)
        XCTAssertNil(surface.last("/select/plugin/parameter", id: 3), "two control inputs")

        // Playing the 1 kHz sine (-12 dBFS) through the open filter.
        oscsend(port, "/transport_play", "f", "1.0")
        screen.waitFor("PLAYING")
        func level() -> Double? { surface.last("/select/meter")?.values.first.flatMap(Double.init) }
        wait("the sine heard") { (level() ?? -200) > -16 }

        // The cutoff half-way along Ardour's logarithmic law: 4.8 × 4500^0.5 = 322 Hz, and
        // three stages (floor(1 + 0.25 × 10) = 3): the running plugin cuts the 1 kHz sine.
        oscsend(port, "/select/plugin/parameter", "if", "1", "0.5")
        screen.waitFor("the cutoff at 322 Hz") { $0.contains("node 1 cutoff 321.99") }
        oscsend(port, "/select/plugin/parameter/2", "f", "0.25")
        screen.waitFor("three stages") { $0.contains("node 1 stages 3 — asked by osc") }
        wait("the stages fed back") { slot(surface, 2).value == 0.25 }
        XCTAssertEqual(try XCTUnwrap(slot(surface, 1).value), 0.5, accuracy: 1e-4)
        wait("the sine cut by the running plugin") { (level() ?? 0) < -40 }

        // Saved as any chain edit; the stages one undo step.
        screen.send("C-s")
        screen.waitFor("saved ")
        let chain = try SessionFolder(path: session).load().tracks[4].playbackChain
        XCTAssertTrue(chain.hasPrefix("lv2:\(uri):cutoff=321.99") && chain.hasSuffix(":stages=3"), chain)
        screen.send("u")
        wait("the stages undone") { slot(surface, 2).value == 0.05 }
        screen.send("C-s")
        screen.waitFor("saved ")
        XCTAssertFalse(try SessionFolder(path: session).load().tracks[4].playbackChain.contains("stages"))
        // Back to the open filter: the sine is heard again.
        oscsend(port, "/select/plugin/parameter", "if", "1", "1.0")
        wait("the sine heard again") { (level() ?? -200) > -16 }
        XCTAssertTrue(screen.isRunning)
    }
}
