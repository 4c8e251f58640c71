import Foundation
import Synchronization
import TapedeckCore
import TapedeckDSP
import TapedeckIO
#if canImport(Glibc)
import Glibc
#endif

/// An export stretched at another speed or pitch (Rubber Band): the mix and its stems
/// rendered at 1× through the one graph (every thread) into float files beside the output,
/// then each through Rubber Band's offline stretcher (R3 or R2 as asked, the whole file
/// studied before it is processed) straight into the file asked for, the mix on the calling
/// thread and the stems on threads of their own. (Varispeed exports keep the live path:
/// libsamplerate on the mix as playback runs it, the same samples.)
///
/// As in playback, the tracks and buses are rendered before the time-pitch and the master
/// section after it (``MasterSection``: the master chain at device rate, then the master
/// fader), so the export is what playback at that speed plays, through a better stretcher
/// than the live one (real-time mode, a block at a time). Stems are what reaches the master.
struct StretchedExport {
    let request: Mixdown.Request

    /// Renders the request into `writer` and each stem into its writer (all open, stereo at the
    /// session's rate, not closed here). `progress` gets the fraction done. Export thread.
    func render(into writer: AudioFileWriter, stems: [(track: Int, writer: AudioFileWriter)],
                progress: (Double) -> Void) throws -> FreewheelMix.Result {
        // The 1× pass stops before the master section.
        var plain = request
        plain.timePitch = .normal
        plain.masterChain = Chain()
        plain.session.masterGainDecibels = 0
        let master = try MasterSection(request, writer: writer)
        let format = AudioFileFormat(container: .wav, encoding: .float32, sampleRate: request.session.sampleRate, channelCount: 2)
        func temporary(_ final: AudioFileWriter) throws -> AudioFileWriter {
            try AudioFileWriter(path: final.path + ".1x.wav", format: format, blockFrames: FreewheelRender.longPeriodFrames,
                                expectedFrameCount: request.range.frameCount, creation: .replacingLeftover)
        }
        let mixAt1 = try temporary(writer)
        var paths = [mixAt1.path]
        defer { for p in paths { unlink(p) } }
        var stemsAt1: [(track: Int, writer: AudioFileWriter)] = []
        for stem in stems {
            let w = try temporary(stem.writer)
            paths.append(w.path)
            stemsAt1.append((stem.track, w))
        }
        // The 1× pass: a fifth of the work, about (the stretch is the rest).
        let rendered = try FreewheelMix(request: plain).render(into: mixAt1, stems: stemsAt1) { progress(0.2 * $0) }
        try mixAt1.close()
        for s in stemsAt1 { try s.writer.close() }
        let work = StretchJobs(jobs: [(mixAt1.path, writer)] + zip(stemsAt1, stems).map { ($0.0.writer.path, $0.1.writer) })
        // The stems on helpers (the mix is job 0, on this thread, with the progress); this
        // thread then takes what the helpers have not.
        let helperCount = max(0, min(request.workerCount, work.jobs.count) - 1)
        let finished = Atomic<Int>(0)
        for _ in 0..<helperCount {
            let t = Thread { [self] in
                ThreadName.setCurrent("tapedeck-strch")
                work.drain { try stretch($0, into: $1) { _ in } }
                finished.add(1, ordering: .releasing)
            }
            t.start()
        }
        work.run(0) { path, _ in
            try stretch(path, emit: { try master.write($0, frameCount: $1) }) { progress(0.2 + 0.8 * $0) }
            try master.finish()
        }
        work.drain { try stretch($0, into: $1) { _ in } }
        while finished.load(ordering: .acquiring) < helperCount { usleep(1000) }
        if let first = work.firstFailure { throw first }
        return FreewheelMix.Result(frameCount: writer.framesWritten, nonFiniteSampleCount: rendered.nonFiniteSampleCount,
                                   warnings: rendered.warnings + master.problems)
    }

    /// One 1× file through the request's time-pitch into `writer`.
    private func stretch(_ path: String, into writer: AudioFileWriter, progress: (Double) -> Void) throws {
        try stretch(path, emit: { try writer.write($0, frameCount: $1) }, progress: progress)
    }

    /// One 1× file through the request's time-pitch, block by block into `emit`.
    private func stretch(_ path: String, emit: ([UnsafePointer<Float>], Int) throws -> Void, progress: (Double) -> Void) throws {
        let settings = request.timePitch
        try TimePitchRender.stretch(sourcePath: path, startFrame: 0, frameCount: request.range.frameCount, timeRatio: 1 / settings.speed,
                                    pitchScale: settings.pitchScale, quality: request.quality, sampleRate: request.session.sampleRate,
                                    channelCount: 2, progress: progress, emit: emit)
    }
}

/// The files of a stretched export and who takes which: job 0 the mix, then the stems, each
/// taken once (an atomic counter); the first error of each is kept.
private final class StretchJobs: @unchecked Sendable {
    let jobs: [(path: String, writer: AudioFileWriter)]
    let failures = Mutex<[Int: Error]>([:])
    private let next = Atomic<Int>(1)

    init(jobs: [(path: String, writer: AudioFileWriter)]) { self.jobs = jobs }

    /// The error of the first job that failed (the mix before the stems).
    var firstFailure: Error? { failures.withLock { $0.sorted { $0.key < $1.key }.first?.value } }

    /// Job `k` through `body`, its error kept.
    func run(_ k: Int, _ body: (String, AudioFileWriter) throws -> Void) {
        do { try body(jobs[k].path, jobs[k].writer) } catch { failures.withLock { $0[k] = error } }
    }

    /// Jobs not taken yet, one after another, until none is left.
    func drain(_ body: (String, AudioFileWriter) throws -> Void) {
        while true {
            let k = next.wrappingAdd(1, ordering: .relaxed).oldValue
            guard k < jobs.count else { return }
            run(k, body)
        }
    }
}
