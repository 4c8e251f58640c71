#if canImport(Glibc)
import Glibc
#endif

/// An audio file brought into a session's folder by ``AudioImporter``.
public struct ImportedFile: Equatable, Sendable {
    /// The new file's name inside the destination folder, e.g. `drums-2.wav`.
    public var fileName: String
    /// Frames in the new file, at the session rate.
    public var frameCount: Int64
    /// Channels in the new file.
    public var channelCount: Int
    /// Frames per second of the new file (the session rate).
    public var sampleRate: Int
    /// How the new file stores samples.
    public var encoding: SampleEncoding
    /// Whether the sample rate was converted.
    public var wasResampled: Bool
    /// NaN and infinite samples in the source, each replaced by silence in the copy.
    public var nonFiniteSampleCount: Int64 = 0
    /// For one channel split out of a wider source (``AudioImporter/importTracks(source:destinationFolder:peaksFolder:sessionSampleRate:quality:progress:)``):
    /// its name in the source's layout ("L", "LFE", "3"); nil for a file copied whole.
    public var channelName: String?
    /// For one channel split out of a wider source: where its position sits (−1 left … +1
    /// right), nil when the source names no position for it.
    public var channelPan: Double?
}

/// What ``AudioImporter/importTracks(source:destinationFolder:peaksFolder:sessionSampleRate:quality:progress:)``
/// made of one source file: the files that each become a track.
public struct ImportedTracks: Equatable, Sendable {
    /// One file for a mono or stereo source (copied whole); one mono file per channel, in the
    /// source's order, for a wider one.
    public var files: [ImportedFile]
    /// The source's channels, with their names.
    public var layout: ChannelLayout

    /// Whether the source was split into a file per channel.
    public var isSplit: Bool { files.contains { $0.channelName != nil } }
    /// Frames of each file (they are all as long).
    public var frameCount: Int64 { files.first?.frameCount ?? 0 }
    /// Whether the sample rate was converted.
    public var wasResampled: Bool { files.first?.wasResampled ?? false }
    /// NaN and infinite samples in the source, each replaced by silence.
    public var nonFiniteSampleCount: Int64 { files.reduce(0) { $0 + $1.nonFiniteSampleCount } }
}

/// Copies any file libsndfile reads into a session folder as WAV at the session rate.
///
/// Same rate: the source's depth is kept when it is 16 or 24-bit integer, anything else
/// becomes 32-bit float, so the copy is lossless. Other rate: libsamplerate converts to the
/// session rate and the result is 32-bit float; its length is round(frames × ratio) exactly.
/// The audio streams through in blocks; the file appears under its final name only when it
/// is complete (written as `NAME.tmp`, then linked to its name, which never replaces a
/// file), so a failed import leaves nothing. A file with no audio is refused, and NaN or
/// infinite samples (float sources) are replaced by silence and counted, so one bad sample
/// never poisons a mix.
public enum AudioImporter {
    /// Frames per block read from the source.
    static let blockFrames = 16384

    /// Imports `source` into `destinationFolder` under a name that clashes with nothing there
    /// (`take.flac` → `take.wav`, else `take-2.wav`, …), writing its peak file into
    /// `peaksFolder` (named by ``PeakFile/fileName(forAudioFileName:)``) when one is given.
    /// Every channel is copied into the one file, however many there are: a track plays one
    /// or two, so for material to place on tracks use ``importTracks(source:destinationFolder:peaksFolder:sessionSampleRate:quality:progress:)``.
    /// `progress` gets the fraction done, 0…1, after every block.
    /// Throws ``AudioFileError`` naming the file and the reason.
    public static func importFile(source: String, destinationFolder: String, peaksFolder: String? = nil,
                                  sessionSampleRate: Int, quality: ResampleQuality = .best,
                                  progress: (Double) -> Void = { _ in }) throws(AudioFileError) -> ImportedFile {
        try importing(source: source, destinationFolder: destinationFolder, peaksFolder: peaksFolder,
                      sessionSampleRate: sessionSampleRate, quality: quality, split: false, progress: progress).files[0]
    }

    /// Imports `source` as ``importFile(source:destinationFolder:peaksFolder:sessionSampleRate:quality:progress:)``
    /// does when it is mono or stereo (one file: one track). A wider source is split: one mono
    /// file per channel, named after the source and the channel's name in its layout
    /// (`surround-L.wav`, `surround-LFE.wav`; `surround-ch3.wav` when the file names no
    /// positions), each with its peak file, all written before any is given its name, so a
    /// failure leaves none of them. Every channel is kept: none is mixed or dropped.
    /// `cancelled` is asked after every block: once it says yes the import stops, removes
    /// what it wrote and throws ``cancelledReason`` (an import on the screen's worker, which
    /// the user may cancel).
    public static func importTracks(source: String, destinationFolder: String, peaksFolder: String? = nil,
                                    sessionSampleRate: Int, quality: ResampleQuality = .best,
                                    progress: (Double) -> Void = { _ in },
                                    cancelled: () -> Bool = { false }) throws(AudioFileError) -> ImportedTracks {
        try importing(source: source, destinationFolder: destinationFolder, peaksFolder: peaksFolder,
                      sessionSampleRate: sessionSampleRate, quality: quality, split: true, progress: progress,
                      cancelled: cancelled)
    }

    /// The reason an import stopped because it was cancelled (nothing of it is left).
    public static let cancelledReason = "import cancelled; nothing imported"

    /// The one import: the source into one file, or (`split`, and wider than stereo) into a
    /// mono file per channel.
    private static func importing(source: String, destinationFolder: String, peaksFolder: String?,
                                  sessionSampleRate: Int, quality: ResampleQuality, split: Bool,
                                  progress: (Double) -> Void, cancelled: () -> Bool = { false }) throws(AudioFileError) -> ImportedTracks {
        guard FileSystem.isFolder(destinationFolder) else {
            throw AudioFileError(path: destinationFolder, reason: FileSystem.exists(destinationFolder) ? "is not a folder" : "folder does not exist")
        }
        if let peaksFolder, !FileSystem.isFolder(peaksFolder) {
            throw AudioFileError(path: peaksFolder, reason: FileSystem.exists(peaksFolder) ? "is not a folder" : "folder does not exist")
        }
        let reader = try AudioFileReader(path: source, blockFrames: blockFrames)
        if reader.frameCount == 0 { throw AudioFileError(path: source, reason: "holds no audio (0 frames); nothing imported") }
        let layout = reader.channelLayout
        let splitting = split && reader.channelCount > 2
        let resample = reader.sampleRate != sessionSampleRate
        let encoding = resample ? SampleEncoding.float32 : reader.losslessEncoding
        let format = AudioFileFormat(container: .wav, encoding: encoding, sampleRate: sessionSampleRate,
                                     channelCount: splitting ? 1 : reader.channelCount)
        let folder = destinationFolder.hasSuffix("/") ? String(destinationFolder.dropLast()) : destinationFolder
        if let problem = format.problem() { throw AudioFileError(path: source, reason: "cannot import: \(problem)") }
        let peaks = peaksFolder.map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 }

        // Names are claimed (their `.tmp` created) before anything is written; every path this
        // import made is taken back if any step fails.
        var parts: [(name: String, tmp: String, final: String, peak: String?)] = []
        var published: [String] = []
        do throws(AudioFileError) {
            // `-L`, `-LFE`; `-ch3` for a number, so it never reads as a second import's `-3`.
            let suffixes = splitting ? layout.names.map { "-" + (layout.positions == nil ? "ch" + $0 : $0) } : [""]
            for suffix in suffixes {
                let name = try reserveName(for: source, suffix: suffix, in: folder)
                let final = folder + "/" + name
                parts.append((name, final + ".tmp", final, peaks.map { $0 + "/" + PeakFile.fileName(forAudioFileName: name) }))
            }
            let (frames, nonFinite) = try copy(reader: reader, to: parts.map { ($0.tmp, $0.peak) }, format: format,
                                               splitting: splitting, quality: quality, progress: progress, cancelled: cancelled)
            if frames == 0 { throw AudioFileError(path: source, reason: "holds no audio (0 frames could be read); nothing imported") }
            for part in parts {
                try publish(part.tmp, as: part.final)
                published.append(part.final)
            }
            progress(1)
            let files = parts.indices.map { k in
                ImportedFile(fileName: parts[k].name, frameCount: frames, channelCount: format.channelCount,
                             sampleRate: sessionSampleRate, encoding: encoding, wasResampled: resample,
                             // The count is the source's: told once, on the first file.
                             nonFiniteSampleCount: k == 0 ? nonFinite : 0,
                             channelName: splitting ? layout.names[k] : nil,
                             channelPan: splitting ? layout.positions?[k].pan : nil)
            }
            return ImportedTracks(files: files, layout: layout)
        } catch {
            for part in parts {
                unlink(part.tmp)
                if let peak = part.peak { unlink(peak) }
            }
            for path in published { unlink(path) }
            // The temporary names mean nothing to the user: name the file being imported.
            if parts.contains(where: { $0.tmp == error.path }) {
                throw AudioFileError(path: source, reason: "cannot copy it into \(folder): \(error.reason); nothing was imported")
            }
            throw error
        }
    }

    /// Gives the finished `tmp` its name `final` with `link`, which fails rather than replace
    /// a file that appeared there meanwhile, then drops the temporary name.
    private static func publish(_ tmp: String, as final: String) throws(AudioFileError) {
        if link(tmp, final) != 0 {
            let code = errno
            // Filesystems without hard links: a rename, the name having been checked free.
            guard code == EPERM || code == EOPNOTSUPP || code == EXDEV, !FileSystem.exists(final), rename(tmp, final) == 0 else {
                throw AudioFileError(path: final, reason: "cannot name the imported file: \(FileSystem.createProblem(path: final, code: code))")
            }
            return
        }
        unlink(tmp)
    }

    /// Streams the whole source into new writers, one per `(path, peakPath)`: the one file
    /// gets every channel, or (`splitting`) file k gets channel k. Returns the frames each got
    /// and how many non-finite samples became silence.
    private static func copy(reader: AudioFileReader, to files: [(path: String, peakPath: String?)], format: AudioFileFormat,
                             splitting: Bool, quality: ResampleQuality, progress: (Double) -> Void,
                             cancelled: () -> Bool) throws(AudioFileError) -> (Int64, Int64) {
        let ratio = Double(format.sampleRate) / Double(max(reader.sampleRate, 1))
        var writers: [AudioFileWriter] = []
        for file in files {
            writers.append(try AudioFileWriter(path: file.path, format: format, blockFrames: blockFrames, peakPath: file.peakPath,
                                               expectedFrameCount: Int64((Double(reader.frameCount) * ratio).rounded(.up)) + 1,
                                               creation: .reserved))
        }
        let c = reader.channelCount
        /// Hands `count` interleaved frames of the source's channels to the writers.
        func write(_ frames: UnsafePointer<Float>, _ count: Int) throws(AudioFileError) {
            if splitting {
                for (k, writer) in writers.enumerated() { try writer.write(channel: frames + k, stride: c, frameCount: count) }
            } else {
                try writers[0].write(interleaved: frames, frameCount: count)
            }
        }
        var nonFinite: Int64 = 0
        let expectedSourceFrames = max(1, reader.frameCount)
        var sourceFrames: Int64 = 0
        func report() throws(AudioFileError) {
            if cancelled() { throw AudioFileError(path: reader.path, reason: cancelledReason) }
            progress(min(0.999, Double(sourceFrames) / Double(expectedSourceFrames)))
        }

        if reader.sampleRate == format.sampleRate {
            while true {
                let got = try reader.readInterleaved(frameCount: blockFrames)
                if got == 0 { break }
                nonFinite += Int64(reader.replaceNonFinite(frameCount: got))
                try write(reader.interleavedBuffer, got)
                sourceFrames += Int64(got)
                try report()
            }
        } else {
            let resampler = try StreamResampler(channelCount: c, ratio: ratio, quality: quality,
                                                blockFrames: blockFrames, path: reader.path)
            // The length is fixed once the input's is known: libsamplerate's tail can be a frame
            // long or short, and a take that drifts by a frame per import is not acceptable.
            var targetFrames = Int64.max
            let emit = { (chunk: UnsafePointer<Float>, count: Int) throws(AudioFileError) -> Void in
                let room = targetFrames - writers[0].framesWritten
                let n = Int(min(Int64(count), max(0, room)))
                if n > 0 { try write(chunk, n) }
            }
            while true {
                let got = try reader.readInterleaved(frameCount: blockFrames)
                sourceFrames += Int64(got)
                nonFinite += Int64(reader.replaceNonFinite(frameCount: got))
                if got == 0 {
                    targetFrames = Int64((Double(sourceFrames) * ratio).rounded())
                }
                try resampler.process(reader.interleavedBuffer, frameCount: got, endOfInput: got == 0,
                                      path: reader.path, emit: emit)
                if got == 0 { break }
                try report()
            }
            for writer in writers { try padWithSilence(writer, toFrames: targetFrames) }
        }
        for writer in writers { try writer.close() }
        return (writers[0].framesWritten, nonFinite)
    }

    private static func padWithSilence(_ writer: AudioFileWriter, toFrames target: Int64) throws(AudioFileError) {
        guard writer.framesWritten < target else { return }
        let c = writer.format.channelCount
        let silence = [Float](repeating: 0, count: 1024 * c)
        try silence.withUnsafeBufferPointer { buf throws(AudioFileError) in
            while writer.framesWritten < target {
                let n = Int(min(1024, target - writer.framesWritten))
                try writer.write(interleaved: buf.baseAddress!, frameCount: n)
            }
        }
    }

    /// Picks `BASE.wav`, `BASE-2.wav`, … : the first name with neither the file nor its
    /// `.tmp` in the folder, and claims the `.tmp` (created exclusively, so two imports at
    /// once cannot pick the same name).
    /// `suffix` follows the source's base name (`-L` for a channel split out of it).
    static func reserveName(for source: String, suffix: String = "", in folder: String) throws(AudioFileError) -> String {
        var base = lastComponent(of: source)
        if let dot = base.lastIndex(of: "."), dot != base.startIndex { base = String(base[..<dot]) }
        base = String(base.map { $0 == "/" || $0.isNewline ? "_" : $0 })
        if base.isEmpty || base.hasPrefix(".") { base = "import" + base }
        base += suffix
        for n in 1...10_000 {
            let name = n == 1 ? "\(base).wav" : "\(base)-\(n).wav"
            let path = folder + "/" + name
            if FileSystem.isPresent(path) { continue }
            let fd = open(path + ".tmp", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
            if fd >= 0 {
                close(fd)
                return name
            }
            let code = errno
            if code == EEXIST { continue }
            throw AudioFileError(path: path + ".tmp", reason: "cannot create: \(FileSystem.createProblem(path: path, code: code))")
        }
        throw AudioFileError(path: folder, reason: "no free name for \(base).wav after 10000 tries")
    }
}
