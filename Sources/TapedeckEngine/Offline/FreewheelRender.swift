import TapedeckCore
import TapedeckDSP

/// The live engine freewheeled, as Ardour exports by freewheeling its own: the graph playback
/// builds (strips, chains, routing, delay compensation, fader glides, the speed and pitch
/// point, the master section) runs on a ``FreewheelDevice`` as fast as the disk allows, and
/// what the device is handed is what an export (mix, stems, the loudness pass) or a freeze
/// gets — so what is exported is what plays, by construction.
///
/// The calling thread drives it: for each period it is the engine's audio thread while the
/// period renders, then reads the period's output (no real-time thread ever touches a file).
/// The engine waits for the disk rather than playing silence; should the disk still not keep
/// up, the render fails rather than hand on audio with holes in it.
final class FreewheelRender {
    let engine: Engine
    let device: FreewheelDevice
    let periodFrames: Int
    private var position: Int64
    private var idle = 0
    private let range: FrameRange

    /// Frames per period at 1×: long enough that a period's fixed costs (waking the workers,
    /// the disk reads between periods) vanish.
    static let longPeriodFrames = 16384
    /// Frames per period at another speed: the mix's look-ahead and every track's ring grow
    /// with speed × period (at 32× and 16384 frames, 32 MB a track).
    static let stretchPeriodFrames = 1024

    /// The engine ready to roll `spec` from `range.startFrame` at `timePitch` (with `quality`'s
    /// stretcher), `workerCount` threads rendering tracks at 1×; `taps` (given the prepared
    /// engine) is where strips are tapped. Throws what the graph or the device meet.
    init(spec: GraphSpec, range: FrameRange, timePitch: TimePitchSettings = .normal, quality: StretchQuality = .best,
         workerCount: Int = 1, taps: (Engine) -> StemTaps? = { _ in nil }) throws {
        var options = EngineOptions()
        options.realtimePriority = false
        options.waitsForDisk = true
        options.rendersOffline = true
        options.renderThreads = timePitch.isIdentity ? workerCount : 1
        options.readsDiskInline = timePitch.isIdentity
        options.varispeedOnly = timePitch.mode == .varispeed
        options.liveStretchQuality = quality
        // Every ring is filled before each period: it needs a period and a disk block, not
        // the second a real device keeps against a slow disk (1,024 tracks held 790 MB).
        options.playbackRingSeconds = 0
        periodFrames = timePitch.isIdentity ? FreewheelRender.longPeriodFrames : FreewheelRender.stretchPeriodFrames
        self.range = range
        device = FreewheelDevice(sampleRate: spec.sampleRate, playbackChannels: 2, periodFrames: periodFrames)
        engine = Engine(device: device, options: options, clickOutputs: [])
        position = range.startFrame
        do {
            if !timePitch.isIdentity {
                engine.setTimePitch(timePitch)
                guard engine.waitForTimePitch() else { throw FreewheelMixError.failed("the stretcher could not be built") }
            }
            try engine.prepare(spec, position: range.startFrame)
            engine.core.stemTaps = taps(engine)
            try engine.start()
        } catch {
            close()
            throw error
        }
        // Rolls on past the range by the output's latency and a period (in timeline frames at
        // this speed), and stops there: the render never outlives its material by much.
        let margin = Int64((Double(engine.outputLatencyFrames + 2 * periodFrames) * max(timePitch.speed, 1)).rounded(.up))
        let (end, overflow) = range.endFrame.addingReportingOverflow(margin)
        engine.setEndFrame(overflow ? nil : end)
        engine.play()
    }

    /// Frames of the device's output (at its rate) that come before the range's first frame:
    /// what lines every path up at the master (in timeline frames, so ÷ speed) and the master
    /// chain's look-ahead.
    func leadFrames(speed: Double) -> Int64 {
        guard let dc = engine.delayCompensation else { return 0 }
        let master = dc.outputLatencyFrames - dc.masterArrivalFrames
        return Int64((Double(dc.masterArrivalFrames) / speed).rounded()) + Int64(master)
    }

    /// Renders one period. Returns the timeline frames it rolled through (0 while waiting to
    /// roll; at 1× the period's output holds exactly those frames, in order). Throws when the
    /// engine stopped before the range was done, a file stopped reading, or the disk could not
    /// keep up.
    func next() throws -> Int64 {
        if engine.options.readsDiskInline { engine.fillRingsInline() }
        guard device.cycle() else {
            // The play command is applied in the first cycle; an engine that goes idle
            // before the range is done stopped (at an end frame, or the device failed).
            idle += 1
            if idle > 2 { throw FreewheelMixError.stopped(at: position, range: range) }
            return 0
        }
        let status = engine.status()
        if let problem = engine.errorText() { throw FreewheelMixError.failed(problem) }
        if status.underrunFrames > 0 { throw FreewheelMixError.diskTooSlow(frames: status.underrunFrames) }
        let rolled = status.positionFrame - position
        position = status.positionFrame
        return max(rolled, 0)
    }

    /// NaN and infinite samples the render replaced.
    var nonFiniteSampleCount: Int64 { engine.status().nonFiniteSamples }

    /// Ends the device's "audio thread" and closes the engine. Safe to call twice.
    func close() {
        device.stop()
        _ = engine.close()
    }

    deinit { close() }
}
