import Dispatch
import TapedeckCore
import TapedeckDSP
import TapedeckIO

/// The export's mix rendered by the live engine itself: the session's graph (the one playback
/// builds, with its strips, chains, fader glides, pan law and master section) runs on a
/// ``FreewheelDevice`` as fast as the disk allows, and what the device is handed is what the
/// file gets — so what is exported is what plays, by construction (Ardour exports the same
/// way, by freewheeling its engine).
///
/// The exporting thread drives the device: for each period it is the engine's audio thread
/// while the period renders, then writes the period to the file (no real-time thread ever
/// touches the file). The engine waits for the disk rather than playing silence; should the
/// disk still not keep up, the export fails rather than write a mix with holes in it.
struct FreewheelMix {
    /// Frames per period: long enough that a period's fixed costs (waking the workers, the
    /// disk reads between periods) vanish. (Nothing moves a fader during an export, so the
    /// one-period glide a live change makes does not arise; automation, issue 26, is a
    /// per-frame curve.)
    static let periodFrames = 16384

    /// What the render measured beside the file's own peak and overs.
    struct Result {
        /// NaN and infinite samples stopped on the bus or in chains.
        var nonFiniteSampleCount: Int64
        /// Chains' problems (a plugin not installed, passed through), one line each.
        var warnings: [String]
    }

    let request: Mixdown.Request

    /// Renders the request's range into `writer` (already open, stereo at the session's rate),
    /// and each of `stems`' tracks, after its chain, fader and pan (before the master), into
    /// its writer. `progress` gets the fraction done. Export thread.
    func render(into writer: AudioFileWriter, stems: [(track: Int, writer: AudioFileWriter)] = [],
                progress: (Double) -> Void) throws -> Result {
        let session = request.session
        var spec = try GraphSpec(session: session, folder: request.folder, listening: [])
        do { spec.masterChain = try Chain(parsing: request.masterChain) } catch {
            throw ChainContextError(place: "master chain", error: error)
        }
        var options = EngineOptions()
        options.realtimePriority = false
        options.waitsForDisk = true
        options.rendersOffline = true
        options.freewheelWorkerCount = request.workerCount
        // Every ring is filled before each period: it needs a period and a disk block, not
        // the second a real device keeps against a slow disk (1,024 tracks held 790 MB).
        options.playbackRingSeconds = 0
        let device = FreewheelDevice(sampleRate: session.sampleRate, playbackChannels: 2, periodFrames: FreewheelMix.periodFrames)
        let engine = Engine(device: device, options: options, clickOutputs: [])
        defer {
            device.stop()
            _ = engine.close()
        }
        let range = request.range
        try engine.prepare(spec, position: range.startFrame)
        // Every stem lines up with the mix: held back by what its strip's path lacks of the
        // output's latency.
        let latency = engine.outputLatencyFrames
        let stemDelays = (engine.graphs.last?.routes.outputDelayFrames ?? []).map { latency - $0 }
        let taps = stems.isEmpty ? nil : StemTaps(tracks: stems.map(\.track), trackCount: session.tracks.count,
                                                   frames: FreewheelMix.periodFrames, delayFrames: stemDelays)
        engine.core.stemTaps = taps
        try engine.start()
        let audible = session.audibleStrips()
        let warnings = engine.chainProblems(trackNames: session.tracks.map(\.name)) { audible[$0] }
        // The master chain and the slowest path delay the mix: that many frames more are
        // rendered and as many dropped from the front, as the playback strips do for their own
        // chains.
        let masterLatency = Int64(latency)
        let (renderEnd, overflow) = range.endFrame.addingReportingOverflow(masterLatency + Int64(FreewheelMix.periodFrames))
        engine.setEndFrame(overflow ? nil : renderEnd)
        engine.play()
        let out = OverlappedWriter(writer, frames: FreewheelMix.periodFrames)
        let stemOuts = stems.map { OverlappedWriter($0.writer, frames: FreewheelMix.periodFrames) }
        defer {
            out.drain()
            for s in stemOuts { s.drain() }
        }
        var toDrop = masterLatency
        var left = range.frameCount
        var stemToDrop = masterLatency
        var stemLeft = stems.isEmpty ? 0 : range.frameCount
        var idle = 0
        var position = engine.status().positionFrame
        while left > 0 || stemLeft > 0 {
            engine.fillRingsInline()
            guard device.cycle() else {
                // The play command is applied in the first cycle; an engine that goes idle
                // before the range is done stopped (at an end frame, or the device failed).
                idle += 1
                if idle > 2 { throw FreewheelMixError.stopped(at: position, range: range) }
                continue
            }
            let status = engine.status()
            // A file that stopped reading mid-way (a damaged block, a disk gone): the old
            // renderer failed the export there too.
            if let problem = engine.errorText() { throw FreewheelMixError.failed(problem) }
            if status.underrunFrames > 0 { throw FreewheelMixError.diskTooSlow(frames: status.underrunFrames) }
            // At 1× a rolling period moves the playhead by its length: those frames are the
            // range's, in order; a period still waiting to roll moves it by nothing.
            let rolled = Int(status.positionFrame - position)
            position = status.positionFrame
            guard rolled > 0 else { continue }
            if stemLeft > 0, let taps {
                let skip = Int(min(stemToDrop, Int64(rolled)))
                stemToDrop -= Int64(skip)
                let k = Int(min(Int64(rolled - skip), stemLeft))
                if k > 0 {
                    for (s, stem) in zip(stemOuts, stems) {
                        guard let pair = taps.pair(track: stem.track) else { continue }
                        try s.write(pair[0] + skip, pair[1] + skip, frameCount: k)
                    }
                    stemLeft -= Int64(k)
                }
            }
            let skip = Int(min(toDrop, Int64(rolled)))
            toDrop -= Int64(skip)
            let k = Int(min(Int64(rolled - skip), left))
            if k > 0 {
                try out.write(device.output[0] + skip, device.output[1] + skip, frameCount: k)
                left -= Int64(k)
            }
            progress(Double(range.frameCount - left) / Double(max(range.frameCount, 1)))
        }
        try out.finish()
        for s in stemOuts { try s.finish() }
        withExtendedLifetime(taps) {}
        return Result(nonFiniteSampleCount: engine.status().nonFiniteSamples, warnings: warnings)
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
        if let workers = core.freewheelWorkers { reader.fillNow(on: workers) } else { reader.fillNow() }
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
