import TapedeckCore
import TapedeckDSP
import TapedeckIO
#if canImport(Glibc)
import Glibc
#endif

/// Freezing: one track rendered offline — its audio regions, its MIDI through its instrument,
/// its whole playback chain, before the fader — to a 32-bit float WAV in the session's
/// `audio/`, through the renderer export uses (``Mixdown``'s per-track renderer), so a frozen
/// track sounds exactly as it exported. The render runs on past the last region until the
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
        track.frozen = nil
        let end = track.activeRegions.map(\.timelineEndFrame).max() ?? 0
        guard end > 0 else { throw TakeError(path: folder.path, reason: "\(track.name.terminalSafe) has no regions: nothing to freeze") }
        var plain = session
        plain.tracks[index] = track
        let block = Mixdown.blockFrames
        let renderer = try Mixdown.renderer(track: index, session: plain, folder: folder, range: FrameRange(startFrame: 0, endFrame: end),
                                            quality: .best, blockFrames: block)
        let relative = try reserveName(for: track.name, in: folder)
        let path = folder.absolutePath(of: relative)
        let format = AudioFileFormat(container: .wav, encoding: .float32, sampleRate: session.sampleRate, channelCount: renderer.channelCount)
        let writer: AudioFileWriter
        do {
            writer = try AudioFileWriter(path: path, format: format, blockFrames: block, peakPath: folder.peakPath(forAudio: relative),
                                         creation: .reserved)
        } catch {
            unlink(path)
            throw error
        }
        let map = session.tempoMap
        func transport(at frame: Int64) -> TransportInfo {
            TransportInfo(tempoBPM: session.tempoBPM, beatPosition: Double(frame) / map.framesPerBeat,
                          beatsPerBar: session.timeSignature.beatsPerBar, beatUnit: session.timeSignature.beatUnit,
                          sampleRate: Double(session.sampleRate), timelineFrame: frame, isPlaying: true)
        }
        let tailLimit = end + Int64(maximumTailSeconds * session.sampleRate)
        var position: Int64 = 0
        do {
            try renderer.prime(startFrame: 0, transport: transport(at: 0))
            while position < tailLimit {
                let n = Int(min(Int64(block), tailLimit - position))
                try renderer.renderPreFader(blockStart: position, frameCount: n, transport: transport(at: position))
                let channels = renderer.preFader
                var peak: Float = 0
                for c in 0..<renderer.channelCount {
                    _ = NonFiniteSamples.replace(channels[c], count: n)
                    for i in 0..<n { peak = max(peak, abs(channels[c][i])) }
                }
                // Past the last region, a silent block is where the tail has ended.
                if position >= end && peak < silence { break }
                try writer.write((0..<renderer.channelCount).map { UnsafePointer(channels[$0]) }, frameCount: n)
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
                      warnings: renderer.problems.map { "track \(index + 1) (\(track.name)) chain: \($0)" })
    }

    /// A new, empty file `audio/freeze-NAME.wav` (`-2`, `-3`… when taken), created
    /// exclusively. Returns its name relative to the session.
    static func reserveName(for trackName: String, in folder: SessionFolder) throws(TakeError) -> String {
        let base = "freeze-" + MIDIRegionFile.safeBase(trackName)
        for n in 1...10_000 {
            let name = "audio/" + (n == 1 ? "\(base).wav" : "\(base)-\(n).wav")
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
