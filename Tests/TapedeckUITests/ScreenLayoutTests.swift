import XCTest
import TapedeckCore
@testable import TapedeckUI
import TapedeckTransport

/// The screen's layout at 80×24, 100×30 and 200×60 (issue 44): every view drawn, and every
/// field of every track read back against the session — pans R30, L45 and C, a fader at
/// −12.5 dB, a long name — whole, in the track list (never under the separator or in the
/// timeline), in the mixer's strips and in the chain panel.
final class ScreenLayoutTests: XCTestCase {
    static let longName = "Lead vocal, second verse double"
    static let sizes = [(24, 80), (30, 100), (60, 200)]

    /// Drums R30 at −12.5 dB with a chain, Bass L45, the long name centred and armed with
    /// three takes, Keys silent at R100; a gain lane on the Drums.
    static func model() -> ScreenModel {
        var s = Session(sampleRate: 48000, tempoBPM: 120)
        var drums = Track(name: "Drums", inputChannels: [1, 2])
        drums.pan = 0.30
        drums.gainDecibels = -12.5
        drums.playbackChain = "hpf:cutoff=80,comp:threshold=-18:ratio=4"
        drums.automation = [AutomationLane(parameter: .gain, points: [AutomationPoint(frame: 0, value: -12.5),
                                                                      AutomationPoint(frame: 96_000, value: -6)])]
        var bass = Track(name: "Bass")
        bass.pan = -0.45
        var lead = Track(name: longName, armed: true)
        lead.monitoring = .input
        var keys = Track(name: "Keys")
        keys.pan = 1
        keys.gainDecibels = Fader.silentDecibels
        s.tracks = [drums, bass, lead, keys]
        for i in 1...3 {
            try? s.addTake(track: 2, region: Region(file: "audio/v\(i).wav", timelineStartFrame: 0, lengthFrames: 96_000), group: 1)
        }
        return ScreenModel(document: SessionDocument(session: s), folder: nil, link: FakeLink())
    }

    /// What each track's row must show, from the session.
    private func expected(_ model: ScreenModel, _ t: Int) -> (name: String, fader: String, pan: String, input: String) {
        let track = model.session.tracks[t]
        return (track.name, Fader.text(track.gainDecibels) + "dB", Pan.text(track.pan), TrackListView.inputText(track))
    }

    /// `text` holds `name` whole, or shortened with "…" after at least five of its characters.
    private func holdsName(_ text: String, _ name: String) -> Bool {
        if text.contains(name) { return true }
        for n in stride(from: name.count - 1, through: 5, by: -1) where text.contains(String(name.prefix(n)) + "…") { return true }
        return false
    }

    private func tokens(_ text: String) -> [String] { text.split(separator: " ").map(String.init) }

    /// The track list beside the timeline: each track's number, name, flags, input, fader and
    /// pan whole inside the list, the separator intact on every row, none of it in the timeline.
    private func checkTrackList(_ model: ScreenModel, height: Int, width: Int, file: StaticString = #filePath, line: UInt = #line) {
        let canvas = ScreenRenderer.render(model, height: height, width: width, glyphs: .unicode)
        let layout = Layout(height: height, width: width)
        let listWidth = layout.trackListWidth
        let rows = layout.trackRows(chainPanel: model.focus == .chain)
        let where_ = "\(width)x\(height)"
        for r in layout.rulerRow..<(layout.tracksTop + rows) {
            XCTAssertEqual(canvas.cell(r, listWidth).character, "│", "\(where_) row \(r): the separator is whole:\n\(canvas.text)", file: file, line: line)
        }
        let bands = TrackBands.layout(model, top: layout.tracksTop, rows: rows)
        XCTAssertEqual(Set(bands.filter { $0.kind == .track }.map(\.track)), [0, 1, 2, 3], "\(where_): every track shown", file: file, line: line)
        for band in bands where band.kind == .track {
            let text = canvas.text(row: band.y)
            let list = String(text.prefix(listWidth)), timeline = String(text.dropFirst(listWidth + 1))
            let meterRow = String(canvas.text(row: band.y + 1).prefix(listWidth))
            let e = expected(model, band.track)
            let say = "\(where_) track \(band.track + 1): '\(list)' / '\(meterRow)'"
            XCTAssertEqual(tokens(list).first, "\(band.track + 1)", say, file: file, line: line)
            XCTAssertTrue(holdsName(list, e.name), "the name whole or shortened with …: \(say)", file: file, line: line)
            XCTAssertTrue(tokens(list).contains(e.fader), "the fader whole (\(e.fader)): \(say)", file: file, line: line)
            XCTAssertTrue(tokens(list).contains(e.pan), "the pan whole (\(e.pan)): \(say)", file: file, line: line)
            XCTAssertTrue(list.contains(e.input), "the input (\(e.input)): \(say)", file: file, line: line)
            let track = model.session.tracks[band.track]
            let flags = "\(track.armed ? "R" : "-") \(track.mute ? "M" : "-") \(track.solo ? "S" : "-") \(TrackListView.monitoringLetter(track.monitoring))"
            XCTAssertTrue(list.contains(" \(flags) "), "the flags (\(flags)): \(say)", file: file, line: line)
            // The pan is the row's last field but the chain: nothing of it past the list.
            XCTAssertFalse(timeline.contains(e.pan + " ") && e.pan != "C", "no pan in the timeline: \(text)", file: file, line: line)
            XCTAssertFalse(timeline.contains("dB"), "no fader in the timeline: \(text)", file: file, line: line)
            // The take heard (t3/3 on the long name's track): beside the name or on the meter row.
            if band.track == 2 {
                XCTAssertTrue(tokens(list).contains("t3/3") || tokens(meterRow).contains("t3/3"), "the take heard: \(say)", file: file, line: line)
            }
            // The loudest peak the fake link reports, whole at the meter row's end.
            XCTAssertTrue(tokens(meterRow).contains("-12.0"), "the peak: \(say)", file: file, line: line)
            if let chain = tokens(list).first(where: { $0.contains(">") || $0.hasPrefix("hpf") }) {
                XCTAssertTrue(["hpf>comp", "hpf+1"].contains(chain), "the chain by whole nodes: \(say)", file: file, line: line)
            }
        }
    }

    func testTheTrackListsFieldsAreWholeAndBesideTheTimelineAtEverySize() {
        for (h, w) in ScreenLayoutTests.sizes {
            let model = ScreenLayoutTests.model()
            model.tick(nowSeconds: 0)
            checkTrackList(model, height: h, width: w)
            // With the Drums' lane and the long name's takes shown under them.
            model.handle(.char("V"))
            model.handle(.named(.down)); model.handle(.named(.down)); model.handle(.named(.down))
            model.handle(.char("L"))
            checkTrackList(model, height: h, width: w)
        }
    }

    func testAt80ColumnsTheNameIsShortenedFirstAndTheTakeMovesToTheMeterRow() {
        let model = ScreenLayoutTests.model()
        model.tick(nowSeconds: 0)
        let canvas = ScreenRenderer.render(model, height: 24, width: 80, glyphs: .unicode)
        let layout = Layout(height: 24, width: 80)
        let lead = (0..<24).first { canvas.text(row: $0).hasPrefix(" 3 ") }
        XCTAssertNotNil(lead, canvas.text)
        guard let lead else { return }
        let row = String(canvas.text(row: lead).prefix(layout.trackListWidth))
        XCTAssertTrue(row.contains("Lead vo…"), "shortened, and says so: \(row)")
        XCTAssertTrue(row.hasSuffix("C   "), "pan is the last field, whole, inside the list: '\(row)'")
        XCTAssertTrue(canvas.text(row: lead + 1).hasPrefix("   t3/3 "), "the take heard on the meter row: \(canvas.text(row: lead + 1))")
        let drums = String(canvas.text(row: layout.tracksTop).prefix(layout.trackListWidth))
        XCTAssertTrue(drums.hasSuffix("-12.5dB R30 "), "'\(drums)'")
        // The old layout put pan at columns 40-42, under the separator and into the timeline.
        XCTAssertEqual(canvas.cell(layout.tracksTop, 40).character, "│")
    }

    func testTheMixersStripsShowWholeFieldsAtEverySize() {
        for (h, w) in ScreenLayoutTests.sizes {
            let model = ScreenLayoutTests.model()
            model.tick(nowSeconds: 0)
            model.handle(.char("v"))
            let canvas = ScreenRenderer.render(model, height: h, width: w, glyphs: .unicode)
            let top = Layout(height: h, width: w).rulerRow + 1
            for t in 0..<4 {
                let x = MixerView.scaleWidth + t * MixerView.stripWidth
                func strip(_ y: Int) -> String {
                    String(canvas.text(row: y).dropFirst(x).prefix(MixerView.stripWidth - 1)).trimmingCharacters(in: .whitespaces)
                }
                let e = expected(model, t)
                let say = "\(w)x\(h) strip \(t + 1):\n\(canvas.text)"
                XCTAssertTrue(holdsName(strip(top), e.name) || (e.name.count > 9 && strip(top) == String(e.name.prefix(8)) + "…"),
                              "name '\(strip(top))': \(say)")
                XCTAssertEqual(strip(top + 4), "pan " + e.pan, say)
                let values = (top..<h).map(strip)
                XCTAssertTrue(values.contains(e.fader), "the fader value \(e.fader) under the strip: \(values) \(say)")
            }
        }
    }

    func testTheChainPanelShowsWholeParametersAtEverySize() throws {
        for (h, w) in ScreenLayoutTests.sizes {
            let model = ScreenLayoutTests.model()
            model.tick(nowSeconds: 0)
            model.handle(.named(.tab)); model.handle(.named(.tab))
            XCTAssertEqual(model.focus, .chain)
            let canvas = ScreenRenderer.render(model, height: h, width: w, glyphs: .unicode)
            let chain = try model.parsedChain(0)
            // Each parameter as the panel writes it whole: `cutoff=80 Hz`.
            var whole: [(id: String, text: String)] = []
            for n in chain.entries.indices { for p in chain.parameters(of: n) { whole.append((p.definition.id, "\(p.definition.id)=\(p.displayText)")) } }
            let layout = Layout(height: h, width: w)
            let top = layout.tracksTop + layout.trackRows(chainPanel: true)
            var seen = 0
            for r in top..<(top + layout.chainPanelRows) {
                let text = canvas.text(row: r) + " "
                for p in whole where text.contains(" \(p.id)=") {
                    XCTAssertTrue(text.contains(" \(p.text) "), "\(w)x\(h): \(p.text) whole or not at all: \(text)")
                    seen += 1
                }
            }
            XCTAssertGreaterThanOrEqual(seen, 2, "\(w)x\(h): parameters shown:\n\(canvas.text)")
            checkTrackList(model, height: h, width: w)
        }
    }
}
