import Foundation
import TapedeckCore
import TapedeckEngine
import TapedeckIO
import TapedeckTransport
import TapedeckUI
import TapedeckDevices

extension BenchBudgets {
    /// The screen's first speed change (`>` while playing): building the first stretcher takes
    /// long, and it is built beside the screen, never in its way. The screen's loop is run here
    /// as the screen runs it — the key, then the engine read (`tick`), the layout and ncurses
    /// (to /dev/null) 30 times a second, the loop that also answers `ctl` — over a session
    /// playing on the offline clock paced in real time, and timed: its longest pass (how late
    /// a `ctl status` could be answered), and the longest the clock stood still, from the key
    /// until the change is heard (the clock at 1.1×). Goals: < 0.1 s and < 0.2 s.
    public static func firstSpeedChange(folder: String, tracks: Int = 8) throws -> BenchResult {
        let size = BenchEngine.Size(tracks: tracks, chain: "", periodFrames: 256, seconds: 30, stereo: true)
        let sessionFolder = try BenchEngine.prepare(folder: folder, size: size)
        let session = try sessionFolder.load()
        let rate = Double(session.sampleRate)
        let device = OfflineClockDevice(sampleRate: session.sampleRate, playbackChannels: 2, periodFrames: 256,
                                        capacityPeriods: 0, paced: true)
        var options = TransportOptions()
        // As the screen: a speed change never waits for its stretcher.
        options.waitsForTimePitchToStart = false
        let link = try Transport(session: session, folder: sessionFolder, device: device, deviceName: OfflineClockDevice.displayName,
                                 isOffline: true, options: options)
        defer { link.close() }
        let model = ScreenModel(document: SessionDocument(session: session), folder: sessionFolder, link: link,
                                hooks: ScreenHooks(), peaks: PeakCache(folder: sessionFolder))
        guard let curses = Curses(testHeight: 40, width: 120) else {
            throw BenchError("the speed-change benchmark needs ncurses' xterm-256color terminfo")
        }
        defer { curses.end() }
        curses.apply(theme: Theme.builtInDefault, allowColor: true)
        func pass() {
            model.tick(nowSeconds: monotonicSeconds())
            curses.draw(ScreenRenderer.render(model, height: 40, width: 120, glyphs: .unicode))
        }
        link.play(from: 0)
        // A second at 1×, drawn as the screen draws.
        let warm = monotonicSeconds()
        while monotonicSeconds() - warm < 1 { pass(); usleep(33_000) }

        let key = monotonicSeconds()
        model.handle(.char(">"))
        pass()
        var slowest = monotonicSeconds() - key
        var lastPosition = link.snapshot().positionFrame, lastMove = monotonicSeconds()
        var longestStill = 0.0
        var heardAfter: Double?
        var window: (at: Double, frame: Int64)?
        while monotonicSeconds() - key < 30 && heardAfter == nil {
            let before = monotonicSeconds()
            pass()
            let now = monotonicSeconds()
            slowest = max(slowest, now - before)
            let position = link.snapshot().positionFrame
            if position != lastPosition { lastPosition = position; lastMove = now }
            longestStill = max(longestStill, now - lastMove)
            // Heard: the clock runs at 1.1× over half a second.
            if let w = window, now - w.at >= 0.5 {
                let speed = Double(position - w.frame) / (now - w.at) / rate
                if speed > 1.06 && speed < 1.14 { heardAfter = now - key }
                window = (now, position)
            } else if window == nil {
                window = (now, position)
            }
            usleep(33_000)
        }
        link.stop()
        let met = heardAfter != nil && slowest < 0.1 && longestStill < 0.2
        return BenchResult(name: "first speed change while playing (screen loop, \(tracks) stereo tracks)",
                           measured: "loop's longest pass \(BenchSupport.fixed(slowest * 1000, 1)) ms, clock still at most \(BenchSupport.fixed(longestStill * 1000, 0)) ms",
                           peer: "no peer; heard at 1.1× \(heardAfter.map { BenchSupport.fixed($0, 2) + " s" } ?? "never (30 s)") after the key",
                           ratio: "—", goal: "< 100 ms, < 200 ms", met: met)
    }
}
