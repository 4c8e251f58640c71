import Foundation
import XCTest
import TapedeckCore
import TapedeckIO

/// Mixing and editing on the real screen, driven through tmux on the demo session: faders and
/// the mixer view, region edits and their undo, the chain panel's bypass, the help overlay at
/// 80×24.
final class ScreenMixingTests: XCTestCase {
    private var folder = ""
    private var session = ""

    override func setUpWithError() throws {
        (folder, session) = try ScreenTmux.demoFolder(self)
    }

    private func open(width: Int = 100, height: Int = 30) throws -> ScreenTmux {
        try ScreenTmux(self, folder: folder, args: [session, "--device", "offline"], width: width, height: height)
    }

    private func line(_ text: String, containing name: String) -> String {
        text.split(separator: "\n").first { $0.contains(name) }.map(String.init) ?? ""
    }

    private func saved() throws -> Session { try SessionFolder(path: session).load() }

    /// Opens the screen, types `chain` as Drums' playback chain (`c`) and moves to the chain
    /// panel (Tab Tab); returns the screen and the panel as first drawn.
    private func openChainPanel(typing chain: String) throws -> (ScreenTmux, String) {
        let screen = try open()
        screen.waitFor("Drums")
        screen.send("c")
        screen.waitFor("playback chain of Drums")
        screen.send(chain, "Enter")
        screen.send("Tab", "Tab")
        return (screen, screen.waitFor("Chain (playback) of Drums"))
    }

    func testFaderAndPanKeysShowOnTheTrackAndInTheMixerAndAreSaved() throws {
        let screen = try open()
        let before = screen.waitFor("Drums")
        XCTAssertTrue(line(before, containing: "Drums").contains("-5.0dB"), line(before, containing: "Drums"))
        screen.send("9", "9", "8")
        screen.waitFor("the fader and pan moves") { self.line($0, containing: "Drums").contains("-6.0dB R5") }
        screen.send("v")
        // (Waited for whole: on a loaded machine the view can be caught half drawn.)
        let mixer = screen.waitFor("the mixer view") { $0.contains("Master") && $0.contains("[Mixer]") && $0.contains("-6.0dB") && $0.contains("+12") }
        XCTAssertTrue(mixer.contains("[Mixer]") && mixer.contains("-6.0dB") && mixer.contains("+12"), mixer)
        screen.send("Right", "Right", "Right", "Right", "PageDown")
        screen.waitFor("master fader -3.0 dB")
        screen.send("C-s")
        screen.waitFor("saved ")
        let s = try saved()
        XCTAssertEqual(s.tracks[0].gainDecibels, -6)
        XCTAssertEqual(s.tracks[0].pan, 0.05, accuracy: 1e-9)
        XCTAssertEqual(s.masterGainDecibels, -3)
    }

    func testSplittingARegionAtThePlayheadAndUndoingIt() throws {
        let original = try saved().tracks[0].regions
        let screen = try open()
        screen.waitFor("Drums")
        // Two beats on (snap beats): 1 s. Split Drums there, then save.
        screen.send("Right", "Right")
        screen.waitFor("0:00:01.000")
        screen.send("S")
        screen.waitFor("split at 00:01.000")
        screen.send("C-s")
        screen.waitFor("saved ")
        var regions = try saved().tracks[0].regions
        XCTAssertEqual(regions.map(\.timelineStartFrame), [0, 48000])
        XCTAssertEqual(regions[1].sourceOffsetFrame, original[0].sourceOffsetFrame + 48000)
        XCTAssertEqual(regions.map(\.lengthFrames).reduce(0, +), original[0].lengthFrames)
        screen.send("u")
        screen.waitFor("undid: split region")
        screen.send("C-s")
        screen.waitFor("saved ")
        regions = try saved().tracks[0].regions
        XCTAssertEqual(regions, original, "undo restores the region exactly")
    }

    func testTheChainPanelBypassesANodeTypedWithABareValue() throws {
        let (screen, panel) = try openChainPanel(typing: "hpf:100,comp:-20:ratio=3")
        XCTAssertTrue(panel.contains("cutoff=100 Hz"), panel)
        XCTAssertFalse(panel.contains("100="), "a bare value is the first parameter, not a key")
        screen.send("Down", "b")
        screen.waitFor("comp bypassed")
        screen.waitFor("the bypassed node") { self.line($0, containing: "2. comp").contains("bypassed  threshold=-20.0 dB") }
        screen.send("Right")
        screen.send("C-s")
        screen.waitFor("saved ")
        XCTAssertEqual(try saved().tracks[0].playbackChain, "hpf:cutoff=100,!comp:threshold=-19:ratio=3",
                       "canonical, bypassed, and its values step")
    }

    /// An LV2 plugin's parameters show in the chain panel as a built-in node's do, and step
    /// there (before, the panel listed only built-in nodes' parameters: an LV2 plugin showed
    /// its name and nothing to turn). Swh's amplifier, from the swh-lv2 package, named by its
    /// plugin name (its `lv2:http://…` identifier cut to the column said only "lv2:http:/…").
    func testTheChainPanelShowsAndStepsAnLV2PluginsParameter() throws {
        guard FileManager.default.fileExists(atPath: "/usr/lib/lv2/amp-swh.lv2") else { throw XCTSkip("swh-lv2 is not installed") }
        let (screen, _) = try openChainPanel(typing: "hpf:100,lv2:amp:-6")
        screen.waitFor("the plugin's gain in the panel") { self.line($0, containing: "2. Simple amp").contains("gain=-6") }
        screen.send("Down", "Right")
        screen.waitFor("the plugin's gain stepped") { self.line($0, containing: "2. Simple amp").contains("gain=-5.9") }
        screen.send("C-s")
        screen.waitFor("saved ")
        let chain = try saved().tracks[0].playbackChain
        XCTAssertTrue(chain.hasSuffix("swh-plugins/amp:gain=-5.9"), chain)
    }

    func testAt80By24TheHelpShowsActionNamesAndScrollsAndTheSessionNameStays() throws {
        let screen = try open(width: 80, height: 24)
        let main = screen.waitFor("Drums")
        XCTAssertTrue(main.split(separator: "\n")[1].contains("demo.tapedeck"), "the session name is on the bar:\n\(main)")
        screen.send("?")
        let help = screen.waitFor("speed-down")
        XCTAssertTrue(help.contains("play / stop") && help.contains("scroll"), help)
        XCTAssertTrue(help.split(separator: "\n").allSatisfy { $0.count <= 80 })
        screen.send("PageDown", "PageDown", "PageDown", "PageDown", "PageDown", "PageDown", "PageDown", "PageDown")
        // The end: the panels' last lines (their heading scrolled past).
        let end = screen.waitFor("'action = key, key' per line")
        XCTAssertTrue(end.contains("keys file"), end)
        screen.send("Escape")
        screen.waitFor("the help to close") { !$0.contains("'action = key, key' per line") }
    }
}
