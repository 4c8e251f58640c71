import Foundation
import TapedeckCore
import TapedeckEngine
import TapedeckIO
import TapedeckTransport
import TapedeckUI
import TapedeckDevices

/// The screen while it records (issue 44): every track of the `tracks`-track session armed
/// and recording on the offline clock paced in real time, each through an input chain making
/// a -14 dBFS tone (the offline device's input is silence, which would draw only the rule),
/// so every track's take grows on its row as the screen draws it 30 times a second — the
/// loop ``BenchScreen`` times, with the live waveforms in it. Beside it, in the same frames,
/// the live waveform rows and the meter rows are each drawn again alone on a scratch canvas
/// and timed with the thread's CPU clock: the goal is that the waveforms cost no more than
/// the meters (medians per frame, their ratio).
public enum BenchScreenRecording {
    public static func run(folder: String, tracks: Int, seconds: Double) throws -> [BenchResult] {
        let height = BenchScreen.height, width = BenchScreen.width
        let size = BenchEngine.Size(tracks: tracks, chain: "", periodFrames: 256, seconds: max(seconds + 2, 8), stereo: false)
        let sessionFolder = try BenchEngine.prepare(folder: folder, size: size)
        var session = try sessionFolder.load()
        for t in session.tracks.indices {
            session.tracks[t].armed = true
            session.tracks[t].inputChain = "tone:level=-14"
        }
        let device = OfflineClockDevice(sampleRate: session.sampleRate, captureChannels: 1, playbackChannels: 2, periodFrames: 256,
                                        capacityPeriods: 0, paced: true)
        let link = try Transport(session: session, folder: sessionFolder, device: device, deviceName: OfflineClockDevice.displayName,
                                 isOffline: true)
        var taken: [FinishedTake] = []
        defer {
            link.close()
            // The takes are the benchmark's, not the session's: gone with it.
            for take in taken + link.collectFinishedTakes() {
                unlink(sessionFolder.absolutePath(of: take.region.file))
                unlink(sessionFolder.peakPath(forAudio: take.region.file))
                if let marker = take.markerPath { unlink(marker) }
            }
        }
        let model = ScreenModel(document: SessionDocument(session: session), folder: sessionFolder, link: link,
                                hooks: ScreenHooks(), peaks: PeakCache(folder: sessionFolder))
        guard let curses = Curses(testHeight: height, width: width) else {
            throw BenchError("the screen benchmark needs ncurses' xterm-256color terminfo")
        }
        defer { curses.end() }
        curses.apply(theme: Theme.builtInDefault, allowColor: true)
        if let refused = link.record(fromFrame: 0) { throw BenchError("the screen benchmark could not record: \(refused)") }
        let layout = Layout(height: height, width: width)
        let rows = layout.trackRows(chainPanel: false)
        var costs: [Double] = [], live: [Double] = [], meters: [Double] = []
        var liveCells = 0
        let start = monotonicSeconds()
        var next = start
        while monotonicSeconds() - start < seconds {
            let c0 = BenchScreen.threadCPUSeconds()
            model.tick(nowSeconds: monotonicSeconds())
            let canvas = ScreenRenderer.render(model, height: height, width: width, glyphs: .unicode)
            curses.draw(canvas)
            let c1 = BenchScreen.threadCPUSeconds()
            costs.append(c1 - c0)
            // The two parts apart, on a scratch canvas, outside the frame's own cost. Every row
            // written once first: a fresh canvas's rows share one buffer, and whichever part
            // wrote a row first would pay for its copy.
            var scratch = Canvas(height: height, width: width)
            scratch.fill(0, 0, height: height, width: width, " ", .normal)
            let l0 = BenchScreen.threadCPUSeconds()
            TimelineView.drawLiveTakes(model, into: &scratch, y: layout.tracksTop, x: layout.timelineLeft, rows: rows,
                                       width: layout.timelineWidth, glyphs: .unicode)
            let l1 = BenchScreen.threadCPUSeconds()
            TrackListView.drawMeterRows(model, into: &scratch, y: layout.tracksTop, rows: rows, width: layout.trackListWidth, glyphs: .unicode)
            let l2 = BenchScreen.threadCPUSeconds()
            if !model.liveTakes.isEmpty {
                live.append(l1 - l0)
                meters.append(l2 - l1)
                liveCells = (0..<height).reduce(0) { n, y in
                    n + (layout.timelineLeft..<width).filter { scratch.cell(y, $0).role == .recording }.count
                }
            }
            next += 1 / BenchScreen.framesPerSecond
            let wait = next - monotonicSeconds()
            if wait > 0 { usleep(UInt32(wait * 1e6)) }
        }
        let wall = monotonicSeconds() - start
        let recorded = link.recordedFrames
        link.stop()
        _ = link.snapshot()
        taken = link.collectFinishedTakes()
        let share = costs.reduce(0, +) / wall
        let liveMedian = BenchSupport.quantile(live, 0.5) * 1e6, meterMedian = BenchSupport.quantile(meters, 0.5) * 1e6
        let ratio = meterMedian > 0 ? liveMedian / meterMedian : .infinity
        let shown = (rows / Layout.rowsPerTrack)
        return [
            BenchResult(
                name: "screen drawing while recording (\(tracks) tracks armed, live waveforms, \(height)×\(width) cells, \(Int(BenchScreen.framesPerSecond)) frames/s)",
                measured: "\(BenchSupport.fixed(share * 100, 2)) % of a core",
                peer: "no peer; \(costs.count) frames, p99 frame \(BenchSupport.fixed(BenchSupport.quantile(costs, 0.99) * 1000, 2)) ms; "
                    + "recorded \(BenchSupport.fixed(Double(recorded) / Double(session.sampleRate), 1)) s a track",
                ratio: "—", goal: "≤ \(BenchSupport.fixed(BenchScreen.goal * 100, 0)) %", met: share <= BenchScreen.goal && recorded > 0),
            BenchResult(
                name: "live waveform rows against meter rows (\(min(shown, tracks)) tracks shown, same frames, median per frame)",
                measured: "waveforms \(BenchSupport.fixed(liveMedian, 1)) µs (\(liveCells) cells)",
                peer: "meters \(BenchSupport.fixed(meterMedian, 1)) µs; \(live.count) frames",
                ratio: "\(BenchSupport.fixed(ratio, 2))×", goal: "≤ 1.00× (no more than the meters)", met: !live.isEmpty && ratio <= 1),
        ]
    }
}
