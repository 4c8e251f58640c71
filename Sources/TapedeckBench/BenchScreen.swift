import Foundation
import TapedeckCore
import TapedeckEngine
import TapedeckIO
import TapedeckTransport
import TapedeckUI
import TapedeckDevices

/// The screen's own cost: a `tracks`-track session plays on the offline clock paced in real
/// time (so meters, the playhead and the waveforms move as they do in use) while this
/// thread does exactly what the screen's loop does 30 times a second — read the engine
/// (`tick`), lay out the frame (`ScreenRenderer`), hand it to ncurses (`Curses.draw`, the
/// real ncurses writing its escape sequences to /dev/null) — and times that with its own
/// CPU clock, apart from the audio thread's. Goal: drawing ≤ 3 % of one core.
public enum BenchScreen {
    static let goal = 0.03
    static let framesPerSecond = 30.0
    static let height = 50, width = 160

    public static func run(folder: String, tracks: Int, seconds: Double) throws -> BenchResult {
        let size = BenchEngine.Size(tracks: tracks, chain: "", periodFrames: 256, seconds: max(seconds + 2, 8), stereo: false)
        let sessionFolder = try BenchEngine.prepare(folder: folder, size: size)
        let session = try sessionFolder.load()
        let device = OfflineClockDevice(sampleRate: session.sampleRate, playbackChannels: 2, periodFrames: 256,
                                        capacityPeriods: 0, paced: true)
        let link = try Transport(session: session, folder: sessionFolder, device: device, deviceName: OfflineClockDevice.displayName,
                                 isOffline: true)
        defer { link.close() }
        let model = ScreenModel(document: SessionDocument(session: session), folder: sessionFolder, link: link,
                                hooks: ScreenHooks(), peaks: PeakCache(folder: sessionFolder))
        guard let curses = Curses(testHeight: height, width: width) else {
            throw BenchError("the screen benchmark needs ncurses' xterm-256color terminfo")
        }
        defer { curses.end() }
        curses.apply(theme: Theme.builtInDefault, allowColor: true)
        link.play(from: 0)
        var costs: [Double] = []
        var phases = [0.0, 0.0, 0.0]
        let start = monotonicSeconds()
        var next = start
        while monotonicSeconds() - start < seconds {
            let c0 = threadCPUSeconds()
            model.tick(nowSeconds: monotonicSeconds())
            let c1 = threadCPUSeconds()
            let canvas = ScreenRenderer.render(model, height: height, width: width, glyphs: .unicode)
            let c2 = threadCPUSeconds()
            curses.draw(canvas)
            let c3 = threadCPUSeconds()
            costs.append(c3 - c0)
            phases[0] += c1 - c0
            phases[1] += c2 - c1
            phases[2] += c3 - c2
            next += 1 / framesPerSecond
            let wait = next - monotonicSeconds()
            if wait > 0 { usleep(UInt32(wait * 1e6)) }
        }
        let wall = monotonicSeconds() - start
        let moved = link.snapshot().positionFrame
        link.stop()
        let share = costs.reduce(0, +) / wall
        let p99 = BenchSupport.quantile(costs, 0.99) * 1000
        return BenchResult(
            name: "screen drawing (\(tracks)-track session playing, \(height)×\(width) cells, \(Int(framesPerSecond)) frames/s)",
            measured: "\(BenchSupport.fixed(share * 100, 2)) % of a core",
            peer: "no peer; \(costs.count) frames, p99 frame \(BenchSupport.fixed(p99, 2)) ms; of a core: engine status "
                + "\(pct(phases[0] / wall)), layout \(pct(phases[1] / wall)), ncurses \(pct(phases[2] / wall)); "
                + "playhead moved \(BenchSupport.fixed(Double(moved) / Double(session.sampleRate), 1)) s",
            ratio: "—", goal: "≤ \(BenchSupport.fixed(goal * 100, 0)) %", met: share <= goal && moved > 0)
    }

    static func pct(_ v: Double) -> String { "\(BenchSupport.fixed(v * 100, 2)) %" }

    /// This thread's CPU time in seconds.
    static func threadCPUSeconds() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}
