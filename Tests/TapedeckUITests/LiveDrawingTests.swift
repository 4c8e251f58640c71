import XCTest
import TapedeckCore
import TapedeckIO
@testable import TapedeckUI
import TapedeckTransport

/// What is happening drawn as it happens: a take's waveform growing on its row while it
/// records (plain, a loop's passes), and a lane's values while a pass writes them.
final class LiveDrawingTests: XCTestCase {
    /// Peaks of `seconds` of a sine at `amplitude` (as the take writer appends them).
    static func peaks(seconds: Double, amplitude: Float = 0.2) -> LivePeaks {
        let peaks = LivePeaks()
        append(seconds: seconds, amplitude: amplitude, to: peaks)
        return peaks
    }

    /// Appends `seconds` of the sine to `peaks`, going on from what they hold.
    static func append(seconds: Double, amplitude: Float = 0.2, to peaks: LivePeaks) {
        let frames = Int(seconds * 48000)
        let block = 4096
        let buffer = UnsafeMutablePointer<Float>.allocate(capacity: block)
        defer { buffer.deallocate() }
        var done = 0
        while done < frames {
            let n = min(block, frames - done)
            for i in 0..<n { buffer[i] = amplitude * sin(Float(done + i) * 2 * .pi * 440 / 48000) }
            var channels = [buffer]
            channels.withUnsafeBufferPointer { peaks.append($0.baseAddress!, channelCount: 1, frameCount: n) }
            done += n
        }
    }

    /// Columns of `row`'s timeline part holding a waveform glyph, and their roles.
    private func cells(_ canvas: Canvas, row: Int, from x: Int) -> [(column: Int, role: Role)] {
        (x..<canvas.width).compactMap { c in
            let cell = canvas.cell(row, c)
            return "▁▂▃▄▅▆▇█".contains(cell.character) ? (c - x, cell.role) : nil
        }
    }

    func testATakeBeingRecordedGrowsOnItsRowAsItIsWritten() {
        let link = FakeLink()
        link.canRecord = true
        let model = ScreenModelTests.makeModel(link: link)
        model.handle(.char("r"))
        let layout = Layout(height: 30, width: 100)
        let vocal = layout.tracksTop + 2 * 2
        // One take, its writer going on between frames: what was drawn is kept, the rest added.
        let peaks = LivePeaks()
        link.live = [LiveTake(track: 2, trackName: "Vocal", startFrame: 48_000, timelineFramesPerFrame: 1, loop: nil, passFrames: 0,
                              peaks: peaks)]
        var written = 0.0
        for seconds in [0.5, 0.6, 2.0] {
            LiveDrawingTests.append(seconds: seconds - written, to: peaks)
            written = seconds
            model.tick(nowSeconds: 0)
            let canvas = ScreenRenderer.render(model, height: 30, width: 100, glyphs: .unicode)
            let drawn = cells(canvas, row: vocal + 1, from: layout.timelineLeft)
            // 125 ms a column: from 1 s (column 8) on, a column per 125 ms begun.
            XCTAssertEqual(drawn.map(\.column), Array(8..<(8 + Int((seconds * 8).rounded(.up)))), "\(seconds) s:\n\(canvas.text)")
            XCTAssertTrue(drawn.allSatisfy { $0.role == .recording }, "in the recording colour")
            XCTAssertTrue(cells(canvas, row: layout.tracksTop + 1, from: layout.timelineLeft).isEmpty, "other tracks untouched")
        }
        link.state = .stopped
        model.tick(nowSeconds: 0)
        XCTAssertTrue(model.liveTakes.isEmpty, "stopped: the take is placed as a region, drawn from its peak file")
    }

    func testALoopRecordingDrawsThePassUnderWayOverThePassBefore() {
        let link = FakeLink()
        link.canRecord = true
        let model = ScreenModelTests.makeModel(link: link)
        model.handle(.char("r"))
        // A one-second loop from 1 s, 1.5 s written: the second pass half way.
        link.live = [LiveTake(track: 2, trackName: "Vocal", startFrame: 48_000, timelineFramesPerFrame: 1,
                              loop: FrameRange(startFrame: 48_000, endFrame: 96_000), passFrames: 48_000,
                              peaks: LiveDrawingTests.peaks(seconds: 1.5))]
        model.tick(nowSeconds: 0)
        let layout = Layout(height: 30, width: 100)
        let canvas = ScreenRenderer.render(model, height: 30, width: 100, glyphs: .unicode)
        let drawn = cells(canvas, row: layout.tracksTop + 5, from: layout.timelineLeft)
        XCTAssertEqual(drawn.map(\.column), Array(8..<16), "the loop's columns, no further:\n\(canvas.text)")
        XCTAssertEqual(drawn.filter { $0.role == .recording }.map(\.column), Array(8..<12), "the pass under way")
        XCTAssertEqual(drawn.filter { $0.role == .waveformMuted }.map(\.column), Array(12..<16), "the pass before, dimmed")
    }

    func testLivePeaksReadTheLoudestSampleAtEveryLevel() {
        let peaks = LiveDrawingTests.peaks(seconds: 3, amplitude: 0.5)
        peaks.appendSilence(frameCount: 48_000)
        peaks.read { r in
            XCTAssertEqual(r.frameCount, 4 * 48_000)
            XCTAssertEqual(r.amplitude(fromFrame: 0, toFrame: 300), 0.5, accuracy: 0.01, "level 0")
            XCTAssertEqual(r.amplitude(fromFrame: 0, toFrame: 48_000 * 3), 0.5, accuracy: 0.01, "a coarse level")
            XCTAssertEqual(r.amplitude(fromFrame: 3 * 48_000 + 256, toFrame: 4 * 48_000), 0, "the silence")
            XCTAssertEqual(r.amplitude(fromFrame: 4 * 48_000, toFrame: 5 * 48_000), 0, "nothing past what was written")
            // A range past the coarsest level's last finished bucket reads the finer ones.
            XCTAssertEqual(r.amplitude(fromFrame: 2 * 48_000, toFrame: 3 * 48_000 + 1000), 0.5, accuracy: 0.01)
        }
    }

    func testALaneBeingWrittenShowsItsNewValuesBeforeThePassEnds() {
        let link = FakeLink()
        let model = ScreenModelTests.makeModel(link: link)
        var session = model.session
        session.tracks[0].automation = [AutomationLane(parameter: .gain, mode: .latch, points: [AutomationPoint(frame: 0, value: 0)])]
        model.owner.edit("lane") { $0 = session }
        model.handle(.char("V"))
        model.handle(.named(.space))
        link.position = 96_000
        // What the transport's writer holds after a hand took the fader to +1.5 at 0.5 s.
        var writer = AutomationWriter(glideFrames: 480)
        _ = writer.move(track: "Drums", lane: model.session.tracks[0].automation[0], value: 1.5, at: 24_000, nanoseconds: 0)
        link.writing = writer.inProgress(at: 96_000)
        model.tick(nowSeconds: 0)
        let canvas = ScreenRenderer.render(model, height: 30, width: 100, glyphs: .unicode)
        let lane = (0..<30).first { canvas.text(row: $0).contains(" gain ") }
        XCTAssertNotNil(lane, canvas.text)
        guard let lane else { return }
        let row = canvas.text(row: lane)
        XCTAssertTrue(row.contains("+1.5"), "the value being written at the playhead: \(row)")
        XCTAssertTrue(row.contains("4 pt"), "the points written so far: \(row)")
        let x = Layout(height: 30, width: 100).timelineLeft
        XCTAssertEqual(canvas.cell(lane, x + 4).role, .armed, "the written stretch in the armed colour")
        XCTAssertEqual(model.session.tracks[0].automation[0].points.count, 1, "nothing is an edit before the pass ends")
        // The pass ends: the screen has the edit, and draws the lane from the session again.
        link.writing = []
        link.midiChanges.automationWrites = writer.stop(at: 96_000)
        link.state = .stopped
        model.tick(nowSeconds: 0)
        XCTAssertEqual(model.session.tracks[0].automation[0].points.map(\.value), [0, 0, 1.5, 1.5], "the result stays")
        XCTAssertTrue(model.automationInProgress.isEmpty)
    }
}
