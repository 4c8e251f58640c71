import XCTest
import TapedeckCore
@testable import TapedeckUI
import TapedeckTransport
import TapedeckRemote

/// Buses, sends and outputs from the keyboard, on a fake link: each edit one undo step, the
/// engine told at once, routing problems refused with the session's line, a bus refusing what
/// only a track has, and the views showing it all at 80×24.
final class RoutingKeyTests: XCTestCase {
    private func type(_ text: String, into model: ScreenModel) { model.typeKeys(text) }

    private func clearText(_ model: ScreenModel) { model.clearTyped() }

    /// Adds a bus called `name` with the keys (`B`, the name, `s` or `m`).
    private func addBus(_ name: String, mono: Bool = false, to model: ScreenModel) {
        model.handle(.char("B"))
        clearText(model)
        type(name, into: model)
        model.handle(.named(.enter))
        model.handle(.char(mono ? "m" : "s"))
    }

    private func pick(_ item: String, in model: ScreenModel, file: StaticString = #filePath, line: UInt = #line) {
        model.pickChoice(item, file: file, line: line)
    }

    func testABusAndASendAreMadeWithKeysTheLevelSteppedAndTypedAndEveryStepUndoes() {
        let link = FakeLink()
        let model = ScreenModelTests.makeModel(link: link)
        let before = model.session
        addBus("Reverb", mono: true, to: model)
        XCTAssertEqual(model.session.tracks.count, 4)
        XCTAssertTrue(model.session.tracks[3].isBus)
        XCTAssertEqual(model.session.tracks[3].busChannelCount, 1)
        XCTAssertEqual(model.selectedTrack, 3, "the new bus is selected")
        model.handle(.named(.up)); model.handle(.named(.up)); model.handle(.named(.up))
        model.handle(.char("b"))
        pick("Reverb", in: model)
        XCTAssertEqual(model.session.tracks[0].sends, [Send(bus: "Reverb")], "post-fader at 0 dB")
        model.handle(.char("!"))
        XCTAssertEqual(model.session.tracks[0].sends[0].levelDecibels, -0.5)
        model.handle(.char("$"))
        XCTAssertEqual(model.session.tracks[0].sends[0].levelDecibels, -3, "a coarse step lands on the 3 dB grid")
        model.handle(.char("@")); model.handle(.char("%"))
        XCTAssertEqual(model.session.tracks[0].sends[0].levelDecibels, 0)
        model.handle(.char("h"))
        clearText(model)
        type("-12.5", into: model)
        model.handle(.named(.enter))
        XCTAssertNil(model.overlay)
        XCTAssertEqual(model.session.tracks[0].sends[0].levelDecibels, -12.5)
        model.handle(.char("h"))
        clearText(model)
        type("loud", into: model)
        model.handle(.named(.enter))
        guard case .text(let refused) = model.overlay else { return XCTFail("a bad level keeps the dialog open") }
        XCTAssertEqual(refused.problem, "'loud' is not a level: -6, +1.5, 0 or -inf")
        model.handle(.named(.esc))
        model.handle(.char("H"))
        XCTAssertTrue(model.session.tracks[0].sends[0].preFader)
        XCTAssertEqual(model.message?.text.hasPrefix("send Drums → Reverb -12.5 dB pre-fader"), true, model.message?.text ?? "")
        XCTAssertEqual(link.session, model.session, "the engine follows every routing edit")
        model.handle(.char("u"))
        XCTAssertFalse(model.session.tracks[0].sends[0].preFader, "one undo, one step")
        model.handle(.char("u"))
        XCTAssertEqual(model.session.tracks[0].sends[0].levelDecibels, 0)
        XCTAssertEqual(model.message?.text, "undid: send level Drums to Reverb")
        while model.document.undoName != nil { model.handle(.char("u")) }
        XCTAssertEqual(model.session, before, "every routing edit undoes exactly")
        XCTAssertEqual(link.session, before)
    }

    func testTheMixerAndTrackListShowBusesTheirSendsOutputsAndDelaysAt80By24() {
        let link = FakeLink()
        let model = ScreenModelTests.makeModel(link: link)
        addBus("Reverb A", to: model)
        addBus("Cue", to: model)
        model.selectTrack(0)
        model.handle(.char("b")); pick("Reverb A", in: model)
        model.handle(.char("b")); pick("Cue", in: model)
        model.handle(.char("H"))
        model.handle(.char("$"))
        model.selectTrack(4)
        link.outputChannelCount = 4
        model.tick(nowSeconds: 1)
        model.handle(.char("O")); pick("out:3-4", in: model)
        XCTAssertEqual(model.session.tracks[4].output, .device([3, 4]))
        link.stripOutputDelayFrames = [0, 0, 0, 240, 0]
        link.outputLatencyFrames = 240
        model.tick(nowSeconds: 2)

        let list = ScreenRenderer.render(model, height: 24, width: 80, glyphs: .unicode)
        let rows = (0..<24).map { list.text(row: $0) }
        let bus = rows.first { $0.contains("Reverb A") } ?? ""
        XCTAssertTrue(bus.contains("bus 2ch") && !bus.contains(" R ") && !bus.contains("in 1"), "a bus row: \(bus)")
        XCTAssertTrue(rows.contains { $0.contains("»2") }, "Drums' two sends beside its meters:\n\(list.text)")
        XCTAssertTrue(rows.contains { $0.contains("→out:3-4") }, list.text)
        XCTAssertTrue(list.text.contains("bus: plays what is sent to it"), "a marked, empty lane:\n\(list.text)")
        XCTAssertTrue(rows[1].contains("latency 5.0ms"), rows[1])
        XCTAssertTrue(rows.allSatisfy { $0.count <= 80 })

        model.handle(.char("v"))
        model.selectTrack(0)
        model.handle(.char("j"))
        let canvas = ScreenRenderer.render(model, height: 24, width: 80, glyphs: .unicode)
        let mixer = canvas.text
        // The current send (the first once another strip was chosen; j: the Cue) is highlighted.
        let sendRow = (0..<24).first { canvas.text(row: $0).hasPrefix("send") } ?? 0
        XCTAssertEqual(canvas.cell(sendRow, MixerView.scaleWidth).role, .value, canvas.text(row: sendRow))
        XCTAssertEqual(canvas.cell(sendRow + 1, MixerView.scaleWidth).role, .selected, canvas.text(row: sendRow + 1))
        // A name that does not fit keeps what tells it apart (Reverb A → ReveA); * marks pre-fader.
        for needle in ["Reverb A", "bus 2ch", "ReveA 0.0", "*Cue -3.0", "→out:3-4", "dly 5.0ms", "Master"] {
            XCTAssertTrue(mixer.contains(needle), "mixer lacks \(needle):\n\(mixer)")
        }
        XCTAssertTrue(mixer.contains("send") && mixer.contains("out") && mixer.contains("dly"), "the rows are named:\n\(mixer)")
        let strip = mixer.split(separator: "\n").first { $0.contains("m s r A") } ?? ""
        XCTAssertTrue(strip.contains("m s R A   m s       m s"), "buses have no arm or monitoring: \(strip)")
    }

    func testACycleOrADanglingRouteIsRefusedWithTheSessionsLineAndNothingChanges() {
        let model = ScreenModelTests.makeModel()
        addBus("Reverb", to: model)
        addBus("Delay", to: model)
        model.handle(.char("O")); pick("bus:Reverb", in: model)
        XCTAssertEqual(model.session.tracks[4].output, .bus("Reverb"))
        let before = model.session
        let undoName = model.document.undoName
        model.selectTrack(3)
        model.handle(.char("b")); pick("Delay", in: model)
        XCTAssertEqual(model.message?.text, "routing cycle: Reverb → Delay → Reverb")
        XCTAssertEqual(model.message?.isError, true)
        XCTAssertEqual(model.session, before, "nothing changed")
        XCTAssertEqual(model.document.undoName, undoName, "and nothing to undo")
        model.handle(.char("O")); pick("bus:Delay", in: model)
        XCTAssertEqual(model.message?.text, "routing cycle: Reverb → Delay → Reverb")
        XCTAssertEqual(model.session, before)
        // A bus does not appear among its own targets at all.
        model.handle(.char("b"))
        guard case .choice(let choice) = model.overlay else { return XCTFail("the send chooser") }
        XCTAssertEqual(choice.items, ["Delay"])
        model.handle(.named(.esc))
        // Device outputs are checked as the session checks them.
        model.handle(.char("O")); pick(ScreenModel.otherOutputs, in: model)
        type("3-5", into: model)
        model.handle(.named(.enter))
        guard case .text(let typed) = model.overlay else { return XCTFail("a bad output keeps the dialog open") }
        XCTAssertEqual(typed.problem, "'out:3-5': a strip is mono or stereo: out:N (one output) or out:N-M with M = N+1 (a pair)")
        clearText(model)
        type("5-6", into: model)
        model.handle(.named(.enter))
        XCTAssertEqual(model.session.tracks[3].output, .device([5, 6]))
        XCTAssertEqual(model.message?.text, "Reverb outputs to out:5-6 (the device has 2: d, Enter reopens it with 6)")
    }

    func testABusRefusesRecordingArmingInputsMonitoringAndRegionKeys() {
        let link = FakeLink()
        link.canRecord = true
        let model = ScreenModelTests.makeModel(link: link)
        addBus("Reverb", to: model)
        let before = model.session
        let refusals: [(Key, String)] = [
            (.char("r"), "Reverb is a bus: a bus has no input to record"),
            (.char("a"), "Reverb is a bus: a bus has no input to arm"),
            (.char("w"), "Reverb is a bus: a bus has no input"),
            (.char("o"), "Reverb is a bus: a bus has no input to monitor"),
            (.named(.enter), "Reverb is a bus: a bus has no regions"),
            (.char("x"), "Reverb is a bus: a bus has no regions"),
            (.char("."), "Reverb is a bus: a bus has no regions"),
            (.char("5"), "Reverb is a bus: a bus has no regions"),
            (.char("L"), "Reverb is a bus: a bus has no regions or takes"),
            (.char("T"), "Reverb is a bus: a bus has no regions or takes"),
            (.ctrl("f"), "Reverb is a bus: a bus has no regions to freeze"),
        ]
        for (key, line) in refusals {
            model.handle(key)
            XCTAssertEqual(model.message?.text, line, "\(key.name)")
            XCTAssertEqual(model.message?.isError, true)
            XCTAssertNil(model.overlay)
        }
        XCTAssertEqual(model.session, before, "nothing changed")
        XCTAssertEqual(link.state, .stopped, "nothing recorded")
        XCTAssertFalse(model.session.tracks[3].armed)
        // The chain panel has only the bus's one chain.
        model.handle(.named(.tab)); model.handle(.named(.tab))
        model.handle(.char("/"))
        XCTAssertFalse(model.chainIsInput)
        XCTAssertEqual(model.message?.text, "Reverb is a bus: a bus has no input chain, only the chain it plays through")
        // A remote's record never looks at the selection: the armed Vocal records.
        model.handle(.named(.tab))
        if case .success(let command) = RemoteCommand.parse("record") {
            _ = model.handleRemote(command, from: "test")
        }
        XCTAssertEqual(link.state, .recording)
        model.handle(.char("r"))
        XCTAssertEqual(link.state, .stopped, "r stops a pass whatever is selected")
        // With a track selected, r records.
        model.selectTrack(2)
        model.handle(.char("r"))
        XCTAssertEqual(link.state, .recording)
    }

    func testRemovingABusRoutesWhatWentThereToTheMasterAndUndoBringsItBack() {
        let model = ScreenModelTests.makeModel()
        addBus("Reverb", to: model)
        model.selectTrack(0)
        model.handle(.char("b")); pick("Reverb", in: model)
        model.handle(.char("O")); pick("bus:Reverb", in: model)
        let routed = model.session
        model.selectTrack(3)
        model.handle(.named(.delete))
        guard case .confirm(.deleteBus(3)) = model.overlay else { return XCTFail("asks first") }
        model.handle(.char("y"))
        XCTAssertEqual(model.session.tracks.count, 3)
        XCTAssertEqual(model.session.tracks[0].output, .master)
        XCTAssertTrue(model.session.tracks[0].sends.isEmpty)
        XCTAssertEqual(model.message?.text, "removed bus Reverb: 1 output to the master, 1 send gone (u brings it back)")
        model.handle(.char("u"))
        XCTAssertEqual(model.session, routed)
    }

    func testRenamingABusCarriesItsSendsAndSoloSafeIsABusesOnly() {
        let model = ScreenModelTests.makeModel()
        addBus("Reverb", to: model)
        model.selectTrack(1)
        model.handle(.char("b")); pick("Reverb", in: model)
        model.handle(.char("A"))
        XCTAssertEqual(model.message?.text, "Bass is a track: only a bus is solo-safe (stays heard whatever is soloed)")
        model.selectTrack(3)
        model.handle(.function(2))
        clearText(model)
        type("Bass", into: model)
        model.handle(.named(.enter))
        guard case .text(let input) = model.overlay else { return XCTFail("a taken name is refused") }
        XCTAssertEqual(input.problem, "track 2 is already called Bass (names are matched ignoring case)")
        clearText(model)
        type("Hall", into: model)
        model.handle(.named(.enter))
        XCTAssertEqual(model.session.tracks[1].sends.map(\.bus), ["Hall"])
        XCTAssertNil(model.session.routingProblem())
        model.handle(.char("A"))
        XCTAssertTrue(model.session.tracks[3].isSoloSafe)
        model.handle(.char("A"))
        XCTAssertFalse(model.session.tracks[3].isSoloSafe)
    }

    func testSendKeysWithoutSendsOrBusesSayWhatToDo() {
        let model = ScreenModelTests.makeModel()
        model.handle(.char("b"))
        XCTAssertEqual(model.message?.text, "no bus to send to: B makes one")
        for key in ["!", "@", "$", "%", "h", "H", "J", "j"] {
            model.handle(.char(Character(key)))
            XCTAssertEqual(model.message?.text, "Drums has no sends: b adds one", key)
        }
        addBus("Reverb", to: model)
        addBus("Delay", to: model)
        model.selectTrack(0)
        model.handle(.char("b")); pick("Reverb", in: model)
        model.handle(.char("b")); pick("Delay", in: model)
        XCTAssertEqual(model.currentSend(of: 0), 1, "the new send is the current one")
        model.handle(.char("j"))
        XCTAssertEqual(model.message?.text, "send 1/2: Drums → Reverb 0.0 dB post-fader")
        model.handle(.char("b")); pick("Reverb", in: model)
        XCTAssertEqual(model.message?.text, "Drums already sends to Reverb: j chooses it")
        model.handle(.char("J"))
        XCTAssertEqual(model.session.tracks[0].sends.map(\.bus), ["Delay"])
    }

    func testAt80By24TheHelpShowsEveryRoutingKeyAndEveryPanelLineWhole() {
        let model = ScreenModelTests.makeModel()
        model.handle(.char("?"))
        var seen = ""
        for _ in 0..<20 {
            seen += ScreenRenderer.render(model, height: 24, width: 80, glyphs: .unicode).text + "\n"
            model.handle(.named(.pgdn))
        }
        for action in Action.allCases {
            XCTAssertTrue(seen.contains(action.summary), "\(action.rawValue)'s summary is cut or missing")
            let keys = model.keyMap.keys(for: action).map(\.name).joined(separator: " ")
            XCTAssertTrue(seen.contains(" " + keys + " "), "\(action.rawValue)'s keys \(keys) are cut")
        }
        for line in HelpOverlay.panelLines { XCTAssertTrue(seen.contains(line), "cut: \(line)") }
        XCTAssertTrue(seen.contains("other keys close"))
    }

    func testTheRoutingActionsAreRebindableInTheKeysFile() {
        let (map, problems) = KeyMap.parse("new-bus = ctrl-b\nsend-down = [\nsolo-safe = f9\n", source: "keys")
        XCTAssertEqual(problems, ["keys line 2: '[' was loop-start's only key: loop-start has no key now (give it one on its own line)"])
        XCTAssertEqual(map.action(for: .ctrl("b")), .newBus)
        XCTAssertEqual(map.action(for: .char("[")), .sendDown)
        XCTAssertEqual(map.action(for: .function(9)), .soloSafe)
        XCTAssertNil(map.action(for: .char("B")), "B is free once new-bus moved")
        let model = ScreenModel(document: SessionDocument(session: ScreenModelTests.makeSession()), folder: nil, link: FakeLink(), keyMap: map)
        model.handle(.char("b"))
        XCTAssertEqual(model.message?.text, "no bus to send to: ctrl-b makes one", "hints name the keys as bound")
    }
}
