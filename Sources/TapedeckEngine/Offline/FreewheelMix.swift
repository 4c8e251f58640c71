import Dispatch
import TapedeckCore
import TapedeckDSP
import TapedeckIO

/// The export's mix, and its stems, rendered by the live engine itself (``FreewheelRender``):
/// at 1× and at any other speed or pitch, through the one timeline→device point playback has.
struct FreewheelMix {
    /// What the render measured beside the file's own peak and overs.
    struct Result {
        /// Frames written to the mix.
        var frameCount: Int64
        /// NaN and infinite samples stopped on the bus or in chains.
        var nonFiniteSampleCount: Int64
        /// Chains' problems (a plugin not installed, passed through), one line each.
        var warnings: [String]
    }

    let request: Mixdown.Request

    /// Frames the export holds: the range at the export's speed.
    var outputFrameCount: Int64 {
        let speed = request.timePitch.speed
        guard speed != 1 else { return request.range.frameCount }
        return Int64((Double(request.range.frameCount) / speed).rounded(.up))
    }

    /// The session's graph with the request's master chain, no track listening.
    private func spec() throws -> GraphSpec {
        var spec = try GraphSpec(session: request.session, folder: request.folder, listening: [])
        do { spec.masterChain = try Chain(parsing: request.masterChain) } catch {
            throw ChainContextError(place: "master chain", error: error)
        }
        return spec
    }

    /// Renders the request's range into `writer` (already open, stereo at the session's rate),
    /// and each of `stems`' strips — its output as it reaches the master, after its chain,
    /// fader and pan, before the master section — into its writer. At 1× the stems are tapped
    /// in the mix's own pass; at another speed each stem is a pass of its own through the
    /// stretcher with only its strip reaching the master. `progress` gets the fraction done.
    /// Export thread.
    func render(into writer: AudioFileWriter, stems: [(track: Int, writer: AudioFileWriter)] = [],
                progress: (Double) -> Void) throws -> Result {
        // Stretched (Rubber Band): rendered at 1×, then through the offline stretcher. Varispeed
        // stays on the live path (libsamplerate on the mix, as playback: the same samples).
        if !request.timePitch.isIdentity && request.timePitch.mode == .stretch && !request.usesLiveStretcher {
            return try StretchedExport(request: request).render(into: writer, stems: stems, progress: progress)
        }
        let spec = try spec()
        let atSpeed = !request.timePitch.isIdentity
        let passes = Double(1 + (atSpeed ? stems.count : 0))
        let tapped = atSpeed ? [] : stems
        var taps: StemTaps?
        let run = try FreewheelRender(spec: spec, range: request.range, timePitch: request.timePitch, quality: request.quality,
                                      workerCount: request.workerCount) { engine in
            guard !tapped.isEmpty else { return nil }
            // Every stem lines up with the master's input: held back by what its strip's path
            // lacks of the master's arrival.
            let arrival = engine.delayCompensation?.masterArrivalFrames ?? 0
            let delays = (engine.delayCompensation?.outputDelayFrames ?? []).map { arrival - $0 }
            taps = StemTaps(tracks: tapped.map(\.track), trackCount: spec.tracks.count, frames: FreewheelRender.longPeriodFrames,
                            delayFrames: delays)
            return taps
        }
        defer { run.close() }
        let audible = request.session.audibleStrips()
        let warnings = run.engine.chainProblems(trackNames: request.session.tracks.map(\.name)) { audible[$0] }
        let stemLead = Int64(run.engine.delayCompensation?.masterArrivalFrames ?? 0)
        try pass(run, into: writer, stems: tapped, taps: taps, stemLead: stemLead) { progress($0 / passes) }
        var nonFinite = run.nonFiniteSampleCount
        if atSpeed {
            for (k, stem) in stems.enumerated() {
                let solo = try FreewheelRender(spec: spec, range: request.range, timePitch: request.timePitch, quality: request.quality)
                defer { solo.close() }
                solo.engine.core.isolatedStrip = stem.track
                solo.engine.core.bypassesMaster = true
                try pass(solo, into: stem.writer, stems: [], taps: nil, stemLead: 0, mastered: false) {
                    progress((Double(k + 1) + $0) / passes)
                }
                nonFinite += solo.nonFiniteSampleCount
            }
        }
        return Result(frameCount: outputFrameCount, nonFiniteSampleCount: nonFinite, warnings: warnings)
    }

    /// One pass: the device's output from the range's first frame on (its lead dropped) into
    /// `writer`, `outputFrameCount` frames; at 1× each tapped stem alongside. A pass that is
    /// not `mastered` skips the master section, so its lead is the master's arrival alone.
    private func pass(_ run: FreewheelRender, into writer: AudioFileWriter, stems: [(track: Int, writer: AudioFileWriter)],
                      taps: StemTaps?, stemLead: Int64, mastered: Bool = true, progress: (Double) -> Void) throws {
        let speed = request.timePitch.speed
        let total = outputFrameCount
        let out = OverlappedWriter(writer, frames: run.periodFrames)
        let stemOuts = stems.map { OverlappedWriter($0.writer, frames: run.periodFrames) }
        defer {
            out.drain()
            for s in stemOuts { s.drain() }
        }
        var toDrop = mastered ? run.leadFrames(speed: speed)
            : Int64((Double(run.engine.delayCompensation?.masterArrivalFrames ?? 0) / speed).rounded())
        var left = total
        var stemToDrop = stemLead
        var stemLeft = stems.isEmpty ? 0 : total
        var rolling = false
        while left > 0 || stemLeft > 0 {
            let rolled = try run.next()
            if rolled > 0 { rolling = true }
            guard rolling else { continue }
            // At 1× a period holds exactly the frames it rolled through (the last may stop
            // short at the end frame); at another speed every rolling period is a whole
            // period of the device's output.
            let produced = speed == 1 ? Int(rolled) : run.periodFrames
            if stemLeft > 0, let taps {
                let skip = Int(min(stemToDrop, Int64(produced)))
                stemToDrop -= Int64(skip)
                let k = Int(min(Int64(produced - skip), stemLeft))
                if k > 0 {
                    for (s, stem) in zip(stemOuts, stems) {
                        guard let pair = taps.pair(track: stem.track) else { continue }
                        try s.write(pair[0] + skip, pair[1] + skip, frameCount: k)
                    }
                    stemLeft -= Int64(k)
                }
            }
            let skip = Int(min(toDrop, Int64(produced)))
            toDrop -= Int64(skip)
            let k = Int(min(Int64(produced - skip), left))
            if k > 0 {
                try out.write(run.device.output[0] + skip, run.device.output[1] + skip, frameCount: k)
                left -= Int64(k)
            }
            progress(Double(total - left) / Double(max(total, 1)))
        }
        try out.finish()
        for s in stemOuts { try s.finish() }
        withExtendedLifetime(taps) {}
    }
}

/// Writes each period on a thread of its own while the next one renders: converting and
/// writing is the one serial part of an export (measured: W8 took 0.25 s writing in line,
/// 0.20 s with the old renderer, which overlapped them too).
final class OverlappedWriter: @unchecked Sendable {
    private let writer: AudioFileWriter
    private let buffer: StereoBuffer
    private let queue = DispatchQueue(label: "tapedeck export writer")
    private let group = DispatchGroup()
    // Written by the queue, read after `group.wait()`.
    private var failure: Error?

    init(_ writer: AudioFileWriter, frames: Int) {
        self.writer = writer
        buffer = StereoBuffer(frameCount: frames)
    }

    /// Hands `frameCount` frames over (after the last write is done: one is in flight at a
    /// time); throws what an earlier write met.
    func write(_ left: UnsafePointer<Float>, _ right: UnsafePointer<Float>, frameCount: Int) throws {
        try finish()
        buffer.left.update(from: left, count: frameCount)
        buffer.right.update(from: right, count: frameCount)
        queue.async(group: group) { [self] in
            do { try writer.write([UnsafePointer(buffer.left), UnsafePointer(buffer.right)], frameCount: frameCount) } catch {
                failure = error
            }
        }
    }

    /// Waits for the write in flight; throws what it met.
    func finish() throws {
        group.wait()
        if let failure { throw failure }
    }

    /// Waits for the write in flight, whatever it met (before the file is removed).
    func drain() { group.wait() }
}

/// Why a freewheeled mix could not be finished.
enum FreewheelMixError: Error, CustomStringConvertible {
    case stopped(at: Int64, range: FrameRange)
    case diskTooSlow(frames: Int64)
    case failed(String)

    var description: String {
        switch self {
        case .stopped(let at, let range):
            return "the export's engine stopped at frame \(at) before the end of \(range.startFrame)-\(range.endFrame)"
        case .diskTooSlow(let frames):
            return "the disk could not keep up with the export (\(frames) frames were not read in time); nothing was written"
        case .failed(let problem):
            return problem
        }
    }
}

extension Engine {
    /// Fills every playback ring on the calling thread, as a disk thread would: the
    /// freewheeling export's, between periods (no disk thread runs then). Control thread.
    func fillRingsInline() {
        if core.threads != nil { reader.fillNow(on: core) } else { reader.fillNow() }
    }

    /// The newest graph's chain problems, as an export reports them: `track 2 (Bass) chain:
    /// node 1 …` for each track `reported` accepts, then `master chain: …`. Control thread.
    func chainProblems(trackNames: [String], reported: (Int) -> Bool) -> [String] {
        guard let g = graphs.last else { return [] }
        var lines: [String] = []
        for (i, strip) in g.strips.enumerated() where i < trackNames.count && reported(i) {
            lines += (strip.chain?.problems ?? []).map { "track \(i + 1) (\(trackNames[i])) chain: \($0)" }
        }
        return lines + (g.masterChain?.problems ?? []).map { "master chain: \($0)" }
    }
}
