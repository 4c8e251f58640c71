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
        /// What `--tail` rendered: `, tail 3.250 s` (nil without one).
        var tailLine: String?
    }

    let request: Mixdown.Request

    /// Frames of the range at the export's speed.
    var rangeOutputFrames: Int64 {
        let speed = request.timePitch.speed
        guard speed != 1 else { return request.range.frameCount }
        return Int64((Double(request.range.frameCount) / speed).rounded(.up))
    }

    /// Frames the export may hold: the range at the export's speed, and the most `--tail`
    /// adds (an automatic tail usually ends sooner).
    var outputFrameCount: Int64 { rangeOutputFrames + tailFrames }

    /// The most frames the tail adds, in output frames.
    var tailFrames: Int64 {
        let rate = Double(request.session.sampleRate)
        switch request.tail {
        case .none: return 0
        case .frames(let n): return max(0, n)
        case .auto: return Int64(ExportTail.maximumSeconds * rate)
        }
    }

    /// The timeline the engine renders: the range, and past it as far as the tail may go.
    private var renderRange: FrameRange {
        guard tailFrames > 0 else { return request.range }
        let timeline = Int64((Double(tailFrames) * request.timePitch.speed).rounded(.up))
        return FrameRange(startFrame: request.range.startFrame, endFrame: request.range.endFrame + timeline)
    }

    /// The session's graph with the request's master chain, no track listening.
    private func spec() throws -> GraphSpec {
        var spec = try GraphSpec(session: request.session, folder: request.folder, listening: [], chains: request.chains)
        do { spec.masterChain = try request.playedMasterChain() } catch {
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
        // stays on the live path (libsamplerate on the mix, as playback: the same samples). So
        // does an export with --tail: where an automatic tail ends is decided while rendering,
        // which the 1× pass cannot know at the export's speed.
        if !request.timePitch.isIdentity && request.timePitch.mode == .stretch && !request.usesLiveStretcher && request.tail == .none {
            return try StretchedExport(request: request).render(into: writer, stems: stems, progress: progress)
        }
        let spec = try spec()
        let atSpeed = !request.timePitch.isIdentity
        let passes = Double(1 + (atSpeed ? stems.count : 0))
        let tapped = atSpeed ? [] : stems
        var taps: StemTaps?
        let run = try FreewheelRender(spec: spec, range: renderRange, timePitch: request.timePitch, quality: request.quality,
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
        let written = try pass(run, into: writer, stems: tapped, taps: taps, stemLead: stemLead, total: outputFrameCount,
                               auto: request.tail == .auto) { progress($0 / passes) }
        var nonFinite = run.nonFiniteSampleCount
        if atSpeed {
            for (k, stem) in stems.enumerated() {
                let solo = try FreewheelRender(spec: spec, range: renderRange, timePitch: request.timePitch, quality: request.quality)
                defer { solo.close() }
                solo.engine.core.isolatedStrip = stem.track
                solo.engine.core.bypassesMaster = true
                // As long as the mix: its tail was decided there.
                _ = try pass(solo, into: stem.writer, stems: [], taps: nil, stemLead: 0, mastered: false, total: written, auto: false) {
                    progress((Double(k + 1) + $0) / passes)
                }
                nonFinite += solo.nonFiniteSampleCount
            }
        }
        let tail = written - rangeOutputFrames
        let tailLine = request.tail == .none ? nil
            : ", tail \(String(format: "%.3f", Double(tail) / Double(request.session.sampleRate))) s"
            + (request.tail == .auto && tail >= tailFrames ? " (the most --tail auto renders; still above -90 dBFS)" : "")
        return Result(frameCount: written, nonFiniteSampleCount: nonFinite, warnings: warnings, tailLine: tailLine)
    }

    /// One pass: the device's output from the range's first frame on (its lead dropped) into
    /// `writer`, `outputFrameCount` frames; at 1× each tapped stem alongside. A pass that is
    /// not `mastered` skips the master section, so its lead is the master's arrival alone.
    /// With `auto`, what comes after the range is held back (``TailHold``) and written only
    /// up to the last frame any of them has above −90 dBFS, once all have stayed under it for
    /// ``ExportTail/holdSeconds``. Returns the frames written.
    private func pass(_ run: FreewheelRender, into writer: AudioFileWriter, stems: [(track: Int, writer: AudioFileWriter)],
                      taps: StemTaps?, stemLead: Int64, mastered: Bool = true, total: Int64, auto: Bool,
                      progress: (Double) -> Void) throws -> Int64 {
        let speed = request.timePitch.speed
        let hold = auto ? TailHold(rangeFrames: rangeOutputFrames, stems: stems.count,
                                   holdFrames: Int64(ExportTail.holdSeconds * Double(request.session.sampleRate))) : nil
        let out = OverlappedWriter(writer, frames: run.periodFrames, hold: hold, index: 0)
        let stemOuts = stems.enumerated().map { OverlappedWriter($0.element.writer, frames: run.periodFrames, hold: hold, index: $0.offset + 1) }
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
            // Every strip has stayed silent long enough: the tail is over.
            if let hold, hold.isOver(mixFrames: total - left, stemFrames: stems.isEmpty ? nil : total - stemLeft) { break }
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
        guard let hold else { return total - left }
        // A hair past the last loud frame, so the file ends under −90 dBFS.
        let length = min(hold.length + Int64(request.session.sampleRate / 100), hold.heldFrames)
        try out.flushHeld(frames: length)
        for s in stemOuts { try s.flushHeld(frames: length) }
        return hold.rangeFrames + length
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
    /// An automatic tail's hold, and this writer's place in it (0: the mix).
    private let hold: TailHold?
    private let index: Int
    private var framesHandedOver: Int64 = 0

    init(_ writer: AudioFileWriter, frames: Int, hold: TailHold? = nil, index: Int = 0) {
        self.writer = writer
        buffer = StereoBuffer(frameCount: frames)
        self.hold = hold
        self.index = index
    }

    /// Hands `frameCount` frames over (after the last write is done: one is in flight at a
    /// time); throws what an earlier write met. Past the range of an automatic tail they are
    /// held back instead, until the tail's length is known.
    func write(_ left: UnsafePointer<Float>, _ right: UnsafePointer<Float>, frameCount: Int) throws {
        if let hold {
            let inRange = Int(max(0, min(Int64(frameCount), hold.rangeFrames - framesHandedOver)))
            framesHandedOver += Int64(frameCount)
            if inRange < frameCount { hold.keep(index, left + inRange, right + inRange, frameCount: frameCount - inRange) }
            guard inRange > 0 else { return }
            try writeNow(left, right, frameCount: inRange)
            return
        }
        try writeNow(left, right, frameCount: frameCount)
    }

    /// Writes the first `frames` of the held tail.
    func flushHeld(frames: Int64) throws {
        guard let hold, frames > 0 else { return }
        let (l, r) = hold.held(index)
        var done = 0
        let n = Int(min(frames, Int64(l.count)))
        while done < n {
            let k = min(buffer.capacity, n - done)
            try l.withUnsafeBufferPointer { lp in
                try r.withUnsafeBufferPointer { rp in try writeNow(lp.baseAddress! + done, rp.baseAddress! + done, frameCount: k) }
            }
            done += k
        }
        try finish()
    }

    private func writeNow(_ left: UnsafePointer<Float>, _ right: UnsafePointer<Float>, frameCount: Int) throws {
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

/// An automatic tail (`export --tail auto`): every output's frames after the range, kept in
/// memory (at most ``ExportTail/maximumSeconds`` each), and the last frame any of them held
/// above −90 dBFS. Export thread.
final class TailHold: @unchecked Sendable {
    let rangeFrames: Int64
    private let holdFrames: Int64
    private let silence = Float(Decibels.toLinear(ExportTail.silenceDecibels))
    private var left: [[Float]]
    private var right: [[Float]]
    /// Frames after the range up to and including the last loud one, over every output.
    private(set) var length: Int64 = 0

    init(rangeFrames: Int64, stems: Int, holdFrames: Int64) {
        self.rangeFrames = rangeFrames
        self.holdFrames = holdFrames
        left = Array(repeating: [], count: stems + 1)
        right = left
    }

    func keep(_ index: Int, _ l: UnsafePointer<Float>, _ r: UnsafePointer<Float>, frameCount: Int) {
        let start = left[index].count
        left[index].append(contentsOf: UnsafeBufferPointer(start: l, count: frameCount))
        right[index].append(contentsOf: UnsafeBufferPointer(start: r, count: frameCount))
        var i = frameCount - 1
        while i >= 0 && abs(l[i]) <= silence && abs(r[i]) <= silence { i -= 1 }
        if i >= 0 { length = max(length, Int64(start + i + 1)) }
    }

    func held(_ index: Int) -> ([Float], [Float]) { (left[index], right[index]) }

    /// Frames every output holds after the range.
    var heldFrames: Int64 { Int64(left.map(\.count).min() ?? 0) }

    /// Whether every output has rendered `holdFrames` past the last loud frame (the mix's
    /// and stems' counts of frames handed over so far).
    func isOver(mixFrames: Int64, stemFrames: Int64?) -> Bool {
        let done = min(mixFrames, stemFrames ?? mixFrames) - rangeFrames
        return done >= length + holdFrames
    }
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
