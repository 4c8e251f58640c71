import TapedeckCore
import TapedeckDSP
import TapedeckIO
import TapedeckTakes
#if canImport(Glibc)
import Glibc
#endif

/// Freezing: one track rendered offline — its audio regions, its MIDI through its instrument,
/// its whole playback chain, before the fader — to a 32-bit float WAV in the session's
/// `audio/`, through the live engine freewheeled as an export is (``FreewheelRender``, the
/// track tapped before its fader), so a frozen track sounds exactly as it played. The render runs on past the last region until the
/// instrument's release and the effects' tails have died away (below −90 dBFS), up to 30 s.
public enum TrackFreeze {
    /// What a freeze wrote.
    public struct Result: Sendable {
        /// The render, ready for ``Track/frozen``.
        public var frozen: FrozenAudio
        /// Frames rendered past the last region (the tail).
        public var tailFrames: Int64
        /// Nodes of the chain that did not work and passed audio through.
        public var warnings: [String]
    }

    /// The longest tail rendered after the last region.
    public static let maximumTailSeconds = 30
    /// A block quieter than this (linear) ends the tail.
    static let silence: Float = 3.2e-5

    /// Renders track `index` of `session` into a new file in `folder`'s `audio/` (and its
    /// peak file); `progress` gets the fraction done. The session is not changed: the caller
    /// sets ``Track/frozen`` from the result and saves. Throws when the track has nothing to
    /// render or a file cannot be read or written (nothing is left behind then).
    public static func render(session: Session, folder: SessionFolder, track index: Int,
                              progress: (Double) -> Void = { _ in }) throws -> Result {
        guard session.tracks.indices.contains(index) else {
            throw TakeError(path: folder.path, reason: "track \(index + 1) does not exist")
        }
        var track = session.tracks[index]
        guard !track.isBus else { throw TakeError(path: folder.path, reason: "\(track.name.terminalSafe) is a bus: it has no regions to freeze") }
        track.frozen = nil
        let end = track.activeRegions.map(\.timelineEndFrame).max() ?? 0
        guard end > 0 else { throw TakeError(path: folder.path, reason: "\(track.name.terminalSafe) has no regions: nothing to freeze") }
        // The track alone, heard as it is before its fader: its sends and output play no part.
        track.sends = []
        track.output = .master
        track.mute = false
        track.solo = false
        track.armed = false
        var plain = session
        plain.tracks = [track]
        plain.midiBindings = []
        plain.masterChain = ""
        let spec = try GraphSpec(session: plain, folder: folder, listening: [])
        let channelCount = spec.tracks[0].channelCount
        let tailLimit = end + Int64(maximumTailSeconds * session.sampleRate)
        var taps: StemTaps?
        let run = try FreewheelRender(spec: spec, range: FrameRange(startFrame: 0, endFrame: tailLimit)) { _ in
            taps = StemTaps(tracks: [0], trackCount: 1, frames: FreewheelRender.longPeriodFrames, preFader: true)
            return taps
        }
        defer { run.close() }
        let relative = try reserveName(for: track.name, in: folder)
        let path = folder.absolutePath(of: relative)
        let format = AudioFileFormat(container: .wav, encoding: .float32, sampleRate: session.sampleRate, channelCount: channelCount)
        let writer: AudioFileWriter
        do {
            writer = try AudioFileWriter(path: path, format: format, blockFrames: run.periodFrames,
                                         peakPath: folder.peakPath(forAudio: relative), creation: .reserved)
        } catch {
            unlink(path)
            throw error
        }
        var position: Int64 = 0
        do {
            while position < tailLimit {
                let rolled = try run.next()
                guard rolled > 0, let pair = taps?.pair(track: 0) else { continue }
                let n = Int(min(rolled, tailLimit - position))
                var peak: Float = 0
                for c in 0..<channelCount {
                    _ = NonFiniteSamples.replace(pair[c], count: n)
                    peak = max(peak, MixKernels.peak(pair[c], frameCount: n))
                }
                // Past the last region, a silent period is where the tail has ended.
                if position >= end && peak < silence { break }
                try writer.write((0..<channelCount).map { UnsafePointer(pair[$0]) }, frameCount: n)
                position += Int64(n)
                progress(min(1, Double(position) / Double(end)))
            }
            try writer.close()
        } catch {
            try? writer.close()
            unlink(path)
            unlink(folder.peakPath(forAudio: relative))
            throw error
        }
        return Result(frozen: FrozenAudio(file: relative, lengthFrames: writer.framesWritten), tailFrames: max(0, writer.framesWritten - end),
                      warnings: run.engine.chainProblems(trackNames: [track.name]) { _ in true }.map {
                          $0.replacingOccurrences(of: "track 1 (", with: "track \(index + 1) (")
                      })
    }

    /// A new, empty file `audio/freeze-NAME.wav` (`-2`, `-3`… when taken), created
    /// exclusively. Returns its name relative to the session.
    static func reserveName(for trackName: String, in folder: SessionFolder) throws(TakeError) -> String {
        let base = "freeze-" + MIDIRegionFile.safeBase(trackName)
        for n in 1...10_000 {
            let name = "audio/" + (n == 1 ? "\(base).wav" : "\(base)-\(n).wav")
            // Through the one write guard: a new name in this session's own audio/.
            if let why = WriteGuard.refusal(folder.absolutePath(of: name), kind: .newInSession(folder)) {
                var st = stat()
                if lstat(folder.absolutePath(of: name), &st) == 0 { continue }
                throw TakeError(path: folder.absolutePath(of: name), reason: "cannot create: \(why)")
            }
            let fd = open(folder.absolutePath(of: name), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
            if fd >= 0 {
                close(fd)
                return name
            }
            if errno != EEXIST { throw TakeError(path: folder.absolutePath(of: name), reason: "cannot create: \(String(cString: strerror(errno)))") }
        }
        throw TakeError(path: folder.audioFolder, reason: "no free name for \(base).wav")
    }
}
