import XCTest
import TapedeckCore
import TapedeckDSP
@testable import TapedeckUI
import TapedeckTransport

final class RenderTests: XCTestCase {
    func testWaveformColumnsFillFromTheBottomWithBlocks() {
        let g = Glyphs.unicode
        XCTAssertEqual(WaveformRender.column(amplitude: 0, rows: 2, glyphs: g), [" ", " "])
        XCTAssertEqual(WaveformRender.column(amplitude: 1, rows: 2, glyphs: g), ["█", "█"])
        // −24 dB is half way up the −48 dB scale: the bottom row full, the top empty.
        XCTAssertEqual(WaveformRender.column(amplitude: Float(Decibels.toLinear(-24)), rows: 2, glyphs: g), [" ", "█"])
        // −12 dB is three quarters: the top row half full.
        XCTAssertEqual(WaveformRender.column(amplitude: Float(Decibels.toLinear(-12)), rows: 2, glyphs: g), ["▄", "█"])
        // Very quiet but not silent still shows the lowest step.
        XCTAssertEqual(WaveformRender.column(amplitude: 1e-6, rows: 1, glyphs: g), ["▁"])
    }

    func testWaveformHeightsRiseWithLevel() {
        var last = -1.0
        for db in stride(from: -60.0, through: 0, by: 3) {
            let h = WaveformRender.height(forAmplitude: Float(Decibels.toLinear(db)))
            XCTAssertGreaterThanOrEqual(h, last)
            last = h
        }
        XCTAssertEqual(last, 1)
    }

    func testAsciiGlyphsAreAscii() {
        let column = WaveformRender.column(amplitude: 0.5, rows: 2, glyphs: .ascii)
        XCTAssertTrue(column.allSatisfy(\.isASCII))
    }

    func testMeterScaleIsLinearInDecibelsFromMinus60() {
        XCTAssertEqual(MeterRender.fraction(decibels: -.infinity), 0)
        XCTAssertEqual(MeterRender.fraction(decibels: -60), 0)
        XCTAssertEqual(MeterRender.fraction(decibels: -30), 0.5, accuracy: 1e-9)
        XCTAssertEqual(MeterRender.fraction(decibels: 0), 1)
        XCTAssertEqual(MeterRender.fraction(decibels: 6), 1)
        XCTAssertEqual(MeterRender.cells(decibels: -30, width: 20), 10)
        XCTAssertEqual(MeterRender.cells(decibels: -6, width: 20), 18)
        XCTAssertEqual(MeterRender.role(forDecibels: -30), .meterLow)
        XCTAssertEqual(MeterRender.role(forDecibels: -10), .meterMid)
        XCTAssertEqual(MeterRender.role(forDecibels: -1), .meterHigh)
    }

    func testMeterDrawsRmsPeakHoldAndClip() {
        var canvas = Canvas(height: 1, width: 11)
        var reading = MeterReading()
        MeterBallistics.update(&reading, with: ChannelLevel(peakDecibels: 0.5, rmsDecibels: -30), nowSeconds: 0)
        MeterBallistics.update(&reading, with: ChannelLevel(peakDecibels: -24, rmsDecibels: -30), nowSeconds: 0.1)
        XCTAssertTrue(reading.clipped)
        XCTAssertEqual(reading.holdDecibels, 0.5, "the hold stays within 1.5 s")
        MeterRender.draw(into: &canvas, y: 0, x: 0, width: 11, meter: reading, glyphs: .unicode)
        // 10 bar cells: RMS −30 → 5 full, peak −24 → 6th half, hold at 0 dB → last bar cell.
        XCTAssertEqual(canvas.text(row: 0), "█████▄···▌!")
        XCTAssertEqual(canvas.cell(0, 10).role, .clip)
        XCTAssertEqual(canvas.cell(0, 0).role, .meterLow)
        MeterBallistics.update(&reading, with: ChannelLevel(peakDecibels: -24, rmsDecibels: -30), nowSeconds: 2)
        XCTAssertEqual(reading.holdDecibels, -24, "the hold falls after 1.5 s")
    }

    private func session(chain: String) -> Session {
        var session = Session()
        session.tracks = [Track(name: "A", playbackChain: chain)]
        return session
    }

    func testClockAndSummaries() {
        XCTAssertEqual(TransportBarView.clockText(48000 * 3723 + 24000, sampleRate: 48000), "1:02:03.500")
        XCTAssertEqual(TransportBarView.clockText(0, sampleRate: 48000), "0:00:00.000")
        XCTAssertEqual(TransportBarView.speedText(0.75), "0.75x")
        XCTAssertEqual(TrackListView.chainSummary(SessionChains(session(chain: "hpf:cutoff=80,!comp")).slot(0)), "hpf>(comp)")
        XCTAssertEqual(TrackListView.chainSummary(SessionChains(session(chain: "")).slot(0)), "-")
        XCTAssertEqual(TrackListView.chainSummary(SessionChains(session(chain: "hpf:nope")).slot(0)), "hpf:nope",
                       "a chain the parser refused is shown as written")
    }

    func testTooSmallTerminalShowsANoticeNotGarbage() {
        let model = ScreenModelTests.makeModel()
        let canvas = ScreenRenderer.render(model, height: 8, width: 40, glyphs: .unicode)
        XCTAssertTrue(canvas.text.contains("Terminal too small"))
        XCTAssertFalse(canvas.text.contains("Drums"))
        let tiny = ScreenRenderer.render(model, height: 1, width: 5, glyphs: .unicode)
        XCTAssertEqual(tiny.height, 1)
    }

    func testLayoutKeepsTrackNamesAtEverySizeFromTheMinimumUp() {
        let model = ScreenModelTests.makeModel()
        for (h, w) in [(12, 60), (24, 80), (30, 100), (50, 200)] {
            let canvas = ScreenRenderer.render(model, height: h, width: w, glyphs: .unicode)
            XCTAssertTrue(canvas.text.contains("Drums"), "\(w)x\(h)")
            XCTAssertTrue(canvas.text(row: 0).contains("STOPPED"), "\(w)x\(h)")
        }
    }
}
