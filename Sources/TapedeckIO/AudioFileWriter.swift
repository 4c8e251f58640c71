import CSndfile
#if canImport(Glibc)
import Glibc
#endif

/// Writes WAV (16/24-bit integer, 32-bit float) and FLAC (16/24-bit) from 32-bit float,
/// non-interleaved blocks, and optionally the file's peaks alongside.
///
/// WAV of unknown length (a take) is opened as RF64 with libsndfile's auto-downgrade: a take
/// that grows past 4 GB keeps going as RF64, a short one is closed as a RIFF WAV (with the
/// extensible format header). WAV whose length is known to fit (exports, imports, renders:
/// pass `expectedFrameCount`) is written as classic WAVE_FORMAT_PCM / IEEE_FLOAT, which every
/// tool reads — ecasound, for one, refuses the extensible header.
///
/// Integer samples are converted here, not by libsndfile: its normalised float→int path scales
/// by 0x7FFF while reading scales by 1/0x8000, which would change every loud sample by one step
/// on a round trip. Here a file read as float and written back at the same depth is bit-identical.
///
/// Files are never shared and never written through a link: a new file is created with
/// `O_CREAT|O_EXCL|O_NOFOLLOW` (see ``Creation``) and handed to libsndfile as a descriptor.
///
/// A take (a file of unknown length) stops cleanly before the disk is full: each write first
/// checks the free space, and refuses once less than ``finishingReserveBytes`` would be left,
/// so there is always room to finish the file (the final FLAC frames and header), write its
/// peaks and crash marker and save the session that places it.
///
/// Not thread-safe; a writer belongs to one thread (the disk thread, or a CLI command).
/// ``write(_:frameCount:)`` does not allocate.
public final class AudioFileWriter {
    /// How the file comes to be.
    public enum Creation: Sendable {
        /// A new file; fails when anything (a file, a link) is already at the path.
        case new
        /// A temporary or scratch name of this writer's own (`x.wav.partial`): whatever an
        /// earlier, interrupted run left there is removed first, then the file is created anew.
        case replacingLeftover
        /// A file the caller has just created empty and exclusively (a reserved name): it is
        /// opened without following links and truncated.
        case reserved
    }

    /// Free space a take leaves on its disk for finishing itself and the session save.
    public static let finishingReserveBytes: Int64 = 2 << 20
    /// The file being written.
    public let path: String
    /// What is being written.
    public let format: AudioFileFormat
    /// Where the peak file goes, if one is kept.
    public let peakPath: String?
    /// Frames written so far.
    public private(set) var framesWritten: Int64 = 0
    /// Largest absolute sample handed to ``write(_:frameCount:)`` so far, linear, before an
    /// integer encoding clips it: above 1 the material went over 0 dBFS.
    public private(set) var peakAmplitude: Float = 0
    /// Samples handed over beyond full scale (|x| > 1), counted per channel: clipped in an
    /// integer file, kept as they are in a float one. Clipping is never silent.
    public private(set) var overCount: Int64 = 0
    /// Why the last peak file write failed, if it did. A failed peak file never stops the
    /// audio: peaks can be rebuilt from the audio, the audio cannot be rebuilt.
    public private(set) var peakError: AudioFileError?

    private var handle: OpaquePointer?
    /// The file's descriptor (owned by libsndfile), for free-space checks.
    private var descriptor: Int32 = -1
    /// Whether writes stop short of a full disk (takes: see ``finishingReserveBytes``).
    private let guardsDiskSpace: Bool
    private let blockFrames: Int
    private let intBuffer: UnsafeMutablePointer<Int32>
    /// 16-bit files: the same integers narrowed, handed to libsndfile as shorts, which it
    /// writes in one call per block (from ints it converts and writes 8 KB at a time: 1400
    /// write calls for a W8 mixdown, on the serial writing thread).
    private let shortBuffer: UnsafeMutablePointer<Int16>?
    /// Interleaved floats as stored: what libsndfile writes for float files, and the
    /// quantised values (exactly what a reader will see) for integer files, for the peaks.
    private let floatBuffer: UnsafeMutablePointer<Float>
    private let peaks: PeakBuilder?
    private var peakFramesSaved: Int64 = -1
    /// The bytes of chunks handed to libsndfile (iXML, the cue labels): it keeps the pointers
    /// until the file is closed.
    var chunkBuffers: [UnsafeMutableRawPointer] = []
    /// FLAC, MP3, Opus: the chapters to add once libsndfile has finished the file (see
    /// ``FLACChapters``, ``ID3Tag``, ``OpusChapters``).
    private var pendingChapters: [CuePoint] = []
    /// Title, artist and album (exports).
    let tags: FileTags
    /// WAV exports with more cue points than libsndfile writes: added after the data on close.
    var appendedCues: [CuePoint] = []
    /// The `bext` loudness fields to fill on close (``setLoudness(_:)``), WAV only.
    var pendingLoudness: BextLoudness?
    /// Opus at a rate it does not code: the frames go through libsamplerate to 48 kHz.
    private var resampler: StreamResampler?
    /// Whether samples go to libsndfile as floats (32-bit float files, and the encoders).
    private var writesFloats: Bool { format.encoding == .float32 || format.container.isLossy }
    /// The take metadata stored in the header, if any.
    public let metadata: TakeMetadata?
    /// Why part of the metadata could not be stored, if so. Never fatal: a take without its
    /// description is still a take.
    public internal(set) var metadataProblem: String?
    /// Whether the header states the channel positions asked for (WAV only, and only in an
    /// order WAVE_FORMAT_EXTENSIBLE can say: front left, right, centre, LFE, rear, …, side).
    public private(set) var storesChannelLayout = false

    /// Creates (or truncates) `path`. With a `peakPath`, the file's peaks are built as it is
    /// written and saved there on ``close()`` and ``updateHeader()``. Throws
    /// ``AudioFileError`` naming the file and the reason (folder missing, permission denied,
    /// unsupported format). With `metadata`, the file describes itself (``TakeMetadata``):
    /// it is stored here because libsndfile fixes chunks and strings at the first write.
    /// With `channelLayout` (one position per channel), a WAV states where each channel goes
    /// (WAVE_FORMAT_EXTENSIBLE's channel mask; see ``storesChannelLayout``), so a file wider
    /// than stereo keeps its layout; without one, a WAV of known length stays classic.
    /// With `cues`, the file carries named points (``FileCues``): WAV cue points and labels,
    /// FLAC chapter comments; what cannot be stored is said in ``metadataProblem``.
    public init(path: String, format: AudioFileFormat, blockFrames: Int = 4096, peakPath: String? = nil,
                expectedFrameCount: Int64? = nil, metadata: TakeMetadata? = nil, cues: [CuePoint] = [],
                channelLayout: [ChannelPosition]? = nil, tags: FileTags = FileTags(), creation: Creation = .new) throws(AudioFileError) {
        self.path = path
        self.format = format
        self.peakPath = peakPath
        self.metadata = metadata
        self.tags = tags
        if let problem = format.problem() { throw AudioFileError(path: path, reason: problem) }
        var info = SF_INFO()
        info.samplerate = Int32(format.storedSampleRate)
        info.channels = Int32(format.channelCount)
        // Classic WAV only when the data surely stays below the 4 GB RIFF limit (2 GB margin).
        let bytesPerFrame = Int64(format.channelCount * format.encoding.bits / 8)
        let classic = format.container == .wav && (expectedFrameCount.map { $0 * bytesPerFrame < Int64(1) << 31 } ?? false)
        let positions = channelLayout.flatMap { $0.count == format.channelCount && format.container == .wav ? $0 : nil }
        // Classic WAV has no place for positions; the extensible header has (and RF64 writes it).
        info.format = classic ? (positions == nil ? format.classicWAVFormat : format.extensibleWAVFormat) : format.sndfileFormat
        guard sf_format_check(&info) == SF_TRUE else {
            let what = format.container.isLossy ? format.container.rawValue.uppercased() : "\(format.container.rawValue) \(format.encoding.rawValue)-bit"
            throw AudioFileError(path: path, reason: "libsndfile cannot write \(what) with \(format.channelCount) channels (its build may lack the encoder)")
        }
        if FileSystem.isFolder(path) { throw AudioFileError(path: path, reason: "cannot create: it is a folder") }
        let fd = try AudioFileWriter.openFile(path, creation)
        guard let h = sf_open_fd(fd, Int32(SFM_WRITE), &info, Int32(SF_TRUE)) else {
            let code = errno
            let message = String(cString: sf_strerror(nil))
            Glibc.close(fd)
            if creation != .reserved { unlink(path) }
            // libsndfile writes the header at once; on a full disk say so in plain words.
            let full = code == ENOSPC || code == EDQUOT || message.contains("No space left")
            throw AudioFileError(path: path, reason: "cannot create: \(full ? DurableFile.writeProblem(ENOSPC) : message)")
        }
        handle = h
        descriptor = fd
        guardsDiskSpace = expectedFrameCount == nil
        if format.container == .wav && !classic {
            // Must come before the first write: libsndfile decides the header then.
            sf_command(h, Int32(SFC_RF64_AUTO_DOWNGRADE), nil, Int32(SF_TRUE))
        }
        self.blockFrames = max(1, blockFrames)
        intBuffer = .allocate(capacity: self.blockFrames * format.channelCount)
        shortBuffer = format.encoding == .int16 ? .allocate(capacity: self.blockFrames * format.channelCount) : nil
        floatBuffer = .allocate(capacity: self.blockFrames * format.channelCount)
        peaks = peakPath == nil ? nil : PeakBuilder(channelCount: format.channelCount)
        // Still before the first write, which is when libsndfile writes the header.
        if format.container.isLossy {
            if let problem = configureEncoder(h) {
                sf_close(h)
                handle = nil
                if creation != .reserved { unlink(path) }
                throw AudioFileError(path: path, reason: problem)
            }
            if format.storedSampleRate != format.sampleRate {
                resampler = try StreamResampler(channelCount: format.channelCount,
                                                ratio: Double(format.storedSampleRate) / Double(format.sampleRate),
                                                quality: .medium, blockFrames: self.blockFrames, path: path)
            }
        }
        if let metadata { store(metadata, handle: h) } else if format.container.isLossy { storeTags(nil, handle: h) }
        if !cues.isEmpty {
            var problem: String?
            if format.container == .wav {
                problem = storeWAVCues(cues, handle: h, expectedFrameCount: expectedFrameCount)
            } else {
                let limit = format.container == .mp3 ? ID3Tag.maximumChapters : FileCues.maximumFLACChapters
                let (kept, dropped) = FileCues.usable(cues, frameCount: expectedFrameCount, limit: limit, maximumFrame: Int64.max)
                pendingChapters = kept
                if dropped > 0 {
                    let name = format.container == .mp3 ? "an MP3" : format.container == .opus ? "an Opus file" : "a FLAC"
                    problem = "\(dropped) marker\(dropped == 1 ? "" : "s") (\(name) holds \(limit) chapters)"
                }
            }
            if let problem { metadataProblem = (metadataProblem.map { $0 + ", " } ?? "could not store ") + problem }
        }
        if let positions {
            var map = positions.map(\.rawValue)
            storesChannelLayout = map.withUnsafeMutableBytes { bytes in
                sf_command(h, Int32(SFC_SET_CHANNEL_MAP_INFO), bytes.baseAddress, Int32(bytes.count))
            } == SF_TRUE
        }
    }

    deinit {
        if let h = handle { sf_close(h) }
        intBuffer.deallocate()
        shortBuffer?.deallocate()
        floatBuffer.deallocate()
        chunkBuffers.forEach { $0.deallocate() }
    }

    /// Appends `frameCount` frames from one buffer per channel. A short write (disk full,
    /// file-size limit) throws; the frames written before it stay valid once closed.
    public func write(_ channels: [UnsafePointer<Float>], frameCount: Int) throws(AudioFileError) {
        guard channels.count == format.channelCount else {
            throw AudioFileError(path: path, reason: "got \(channels.count) channel buffers for a \(format.channelCount)-channel file")
        }
        var done = 0
        while done < frameCount {
            let n = min(blockFrames, frameCount - done)
            for ch in 0..<format.channelCount {
                convert(channel: ch, from: channels[ch] + done, stride: 1, count: n)
            }
            try writeConverted(frameCount: n)
            done += n
        }
    }

    /// Appends whole channels held in arrays (one per channel, all as long as the first):
    /// for tools and tests that build a file in memory.
    public func write(arrays channels: [[Float]]) throws(AudioFileError) {
        let pointers = channels.map { ch -> UnsafeMutablePointer<Float> in
            let p = UnsafeMutablePointer<Float>.allocate(capacity: max(ch.count, 1))
            p.initialize(from: ch, count: ch.count)
            return p
        }
        defer { pointers.forEach { $0.deallocate() } }
        try write(pointers.map { UnsafePointer($0) }, frameCount: channels.first?.count ?? 0)
    }

    /// Appends `frameCount` interleaved frames (for the importer, whose frames come
    /// interleaved from libsndfile or libsamplerate).
    func write(interleaved: UnsafePointer<Float>, frameCount: Int) throws(AudioFileError) {
        let c = format.channelCount
        var done = 0
        while done < frameCount {
            let n = min(blockFrames, frameCount - done)
            for ch in 0..<c {
                convert(channel: ch, from: interleaved + done * c + ch, stride: c, count: n)
            }
            try writeConverted(frameCount: n)
            done += n
        }
    }

    /// Appends `frameCount` frames to a mono file from every `stride`-th float of `samples`:
    /// one channel of interleaved frames (for the importer, splitting a wide file).
    func write(channel samples: UnsafePointer<Float>, stride: Int, frameCount: Int) throws(AudioFileError) {
        guard format.channelCount == 1 else {
            throw AudioFileError(path: path, reason: "got one channel for a \(format.channelCount)-channel file")
        }
        var done = 0
        while done < frameCount {
            let n = min(blockFrames, frameCount - done)
            convert(channel: 0, from: samples + done * stride, stride: stride, count: n)
            try writeConverted(frameCount: n)
            done += n
        }
    }

    /// Rewrites the header so the file is valid up to the frames written so far (for crash
    /// safety: a reader after a crash sees at most the audio since the last call missing),
    /// and saves the peaks so far.
    ///
    /// The peak file is rewritten whole, so on a long take it is only rewritten once the take
    /// has grown by an eighth since the last save: the cost stays a few tens of kB/s however
    /// long the take, and a crash loses at most the newest eighth of the peaks (which
    /// ``PeakFile/ensure(for:peakPath:)`` rebuilds anyway, as the audio is newer).
    public func updateHeader() {
        guard let h = handle else { return }
        sf_write_sync(h)
        sf_command(h, Int32(SFC_UPDATE_HEADER_NOW), nil, 0)
        if peakFramesSaved < 0 || framesWritten - peakFramesSaved >= max(1, peakFramesSaved / 8) {
            savePeaks()
        }
    }

    /// Finishes the file (final header, FLAC flush) and saves its peaks. Throws when the last
    /// write fails or the peak file cannot be written.
    public func close() throws(AudioFileError) {
        guard let h = handle else { return }
        if let resampler {
            // The converter's tail: the last few milliseconds it still holds.
            try resampler.process(floatBuffer, frameCount: 0, endOfInput: true, path: path) { out, m throws(AudioFileError) in
                if Int(sf_writef_float(h, out, sf_count_t(m))) != m {
                    throw AudioFileError(path: path, reason: AudioFileWriter.writeFailureReason(handle: h))
                }
            }
        }
        handle = nil
        descriptor = -1
        let code = sf_close(h)
        if code != 0 {
            throw AudioFileError(path: path, reason: "could not finish the file: \(String(cString: sf_error_number(code)))")
        }
        try finishMetadata()
        switch format.container {
        case .flac where !pendingChapters.isEmpty || (metadata != nil && !guardsDiskSpace):
            // An export's time reference as the `time_reference` comment: the key ffmpeg gives
            // a BWF's bext time reference, and writes into a FLAC made from one. (Not a take's:
            // a take is not rewritten whole at its close for it.)
            let reference = guardsDiskSpace ? [] : metadata.map { [("time_reference", String(max(0, $0.timeReference ?? $0.timelineFrame)))] } ?? []
            try FLACChapters.add(pendingChapters, sampleRate: format.sampleRate, extra: reference, toFileAt: path)
        case .mp3:
            // Always: the tag (UTF-8 text frames, chapters) is ours, not LAME's Latin-1 one.
            try ID3Tag.rewrite(path: path, tags: storedTags, chapters: pendingChapters, sampleRate: format.sampleRate,
                               frameCount: framesWritten)
        case .opus where !pendingChapters.isEmpty:
            try OpusChapters.add(pendingChapters, sampleRate: format.sampleRate, toFileAt: path)
        default: break
        }
        savePeaks()
        if let peakError { throw peakError }
    }

    private func savePeaks() {
        guard let peaks, let peakPath else { return }
        do {
            try peaks.finish(peakPath: peakPath, sourcePath: path)
            peakFramesSaved = framesWritten
            peakError = nil
        } catch {
            peakError = error
        }
    }

    /// Writes `n` frames already converted into the buffers, and feeds the peaks.
    private func writeConverted(frameCount n: Int) throws(AudioFileError) {
        guard let h = handle else { throw AudioFileError(path: path, reason: "the file is already closed") }
        if guardsDiskSpace {
            var fs = statvfs()
            let bytes = Int64(n * format.channelCount * format.encoding.bits / 8)
            if fstatvfs(descriptor, &fs) == 0,
               Int64(fs.f_bavail) * Int64(fs.f_frsize) < bytes + AudioFileWriter.finishingReserveBytes {
                throw AudioFileError(path: path, reason: "the disk is full (stopped with room left to finish the file)")
            }
        }
        var written: Int
        if let resampler {
            written = n
            try resampler.process(floatBuffer, frameCount: n, endOfInput: false, path: path) { out, m throws(AudioFileError) in
                if Int(sf_writef_float(h, out, sf_count_t(m))) != m { written = 0 }
            }
        } else if writesFloats {
            written = Int(sf_writef_float(h, floatBuffer, sf_count_t(n)))
        } else if let shorts = shortBuffer {
            // The top halves of the left-justified 32-bit values, eight at a time.
            let count = n * format.channelCount
            var i = 0
            while i + 8 <= count {
                let v = UnsafeRawPointer(intBuffer + i).loadUnaligned(as: SIMD8<Int32>.self) &>> 16
                for k in 0..<8 { shorts[i + k] = Int16(truncatingIfNeeded: v[k]) }
                i += 8
            }
            while i < count { shorts[i] = Int16(truncatingIfNeeded: intBuffer[i] >> 16); i += 1 }
            written = Int(sf_writef_short(h, shorts, sf_count_t(n)))
        } else {
            written = Int(sf_writef_int(h, intBuffer, sf_count_t(n)))
        }
        let kept = max(0, min(written, n))
        framesWritten += Int64(kept)
        peaks?.append(interleaved: floatBuffer, frameCount: kept)
        if written != n {
            throw AudioFileError(path: path, reason: AudioFileWriter.writeFailureReason(handle: h))
        }
    }

    /// Converts one channel of `count` frames (every `stride`-th float from `src`) into the
    /// interleaved buffers. Integers: scaled by 2^(bits-1), rounded, clipped, left-justified
    /// in 32 bits (libsndfile's int layout), NaN as 0.
    private func convert(channel ch: Int, from src: UnsafePointer<Float>, stride: Int, count: Int) {
        let c = format.channelCount
        var peak = peakAmplitude
        var overs: Int64 = 0
        var j = 0
        if stride == 1 {
            // Eight samples a step; the tail below. Worked on the bits: with the sign cleared,
            // finite floats and infinity order as their patterns do and NaNs lie above
            // infinity's, so NaN is neither over nor a peak (as a comparison with NaN is false
            // in the tail). Swift's SIMD float comparisons compile to lane-by-lane loops here.
            let infinity: Int32 = 0x7F80_0000, oneBits: Int32 = 0x3F80_0000
            var peaks = SIMD8<Int32>(repeating: Int32(bitPattern: peak.bitPattern))
            var over = SIMD8<Int32>()
            let raw = UnsafeRawPointer(src)
            while j + 8 <= count {
                var a = raw.loadUnaligned(fromByteOffset: j * 4, as: SIMD8<Int32>.self) & 0x7FFF_FFFF
                a &= ~((infinity &- a) &>> 31)
                over &+= ((oneBits &- a) &>> 31) & 1
                let difference = peaks &- a
                peaks &-= difference & (difference &>> 31)
                j += 8
            }
            var top: Int32 = 0
            for k in 0..<8 where peaks[k] > top { top = peaks[k] }
            peak = Float(bitPattern: UInt32(top))
            overs = Int64(over.wrappedSum())
        }
        while j < count {
            let a = abs(src[j * stride])
            if a > 1 { overs += 1 }
            peak = Swift.max(peak, a)
            j += 1
        }
        peakAmplitude = peak
        overCount += overs
        if writesFloats {
            var i = 0
            while i < count { floatBuffer[i * c + ch] = src[i * stride]; i += 1 }
            return
        }
        // Float arithmetic is exact here: scaling by a power of two loses nothing for values
        // of up to 24 significant bits, and rounding to an integer is exact.
        let bits = format.encoding.bits
        let scale = Float(1 << (bits - 1))
        let maxValue = scale - 1
        let inverse = 1 / scale
        let shift = Int32(32 - bits)
        let keepFloats = peaks != nil
        var i = 0
        if stride == 1 && !keepFloats && bits <= 16 {
            // Round half away from zero as `rounded()` does, eight at a time: add just under a
            // half towards the sign, then truncate. Truncation without a rounding instruction
            // (the build targets baseline x86-64): adding 1.5 × 2^23 leaves the nearest whole
            // number in the low bits (exact below 2^22 in magnitude, and 16-bit values are),
            // and a nearest that overshot is stepped back by one. Choices from sign bits (see
            // above).
            let half = Int32(bitPattern: Float(0.5).nextDown.bitPattern)
            let low = SIMD8<Float>(repeating: -scale), high = SIMD8<Float>(repeating: maxValue)
            let magic = SIMD8<Float>(repeating: 12_582_912)
            let raw = UnsafeRawPointer(src)
            while i + 8 <= count {
                var v = raw.loadUnaligned(fromByteOffset: i * 4, as: SIMD8<Float>.self) * scale
                var bits = unsafeBitCast(v, to: SIMD8<Int32>.self)
                bits &= ~((0x7F80_0000 &- (bits & 0x7FFF_FFFF)) &>> 31)          // NaN → 0
                v = unsafeBitCast(bits, to: SIMD8<Float>.self)
                v = pick(v, low, whereNegative: v - low)
                v = pick(v, high, whereNegative: high - v)
                bits = unsafeBitCast(v, to: SIMD8<Int32>.self)
                let sign = bits & Int32(bitPattern: 0x8000_0000)
                // Just under a half towards the sign (+ for +0 and -0 alike: both round to 0).
                let isZero = ((bits & 0x7FFF_FFFF) &- 1) &>> 31
                let towards = unsafeBitCast(half | (sign & ~isZero), to: SIMD8<Float>.self)
                let w = v + towards
                let t = (w + magic) - magic
                // Nearest went past w, away from zero: step back towards zero (truncation).
                let past = pick(w - t, t - w, whereNegative: w)
                let wSign = unsafeBitCast(w, to: SIMD8<Int32>.self) & Int32(bitPattern: 0x8000_0000)
                let step = unsafeBitCast(wSign | 0x3F80_0000, to: SIMD8<Float>.self)
                let truncated = pick(t, t - step, whereNegative: past)
                let whole = (unsafeBitCast(truncated + magic, to: SIMD8<Int32>.self)
                    &- SIMD8<Int32>(repeating: Int32(bitPattern: Float(12_582_912).bitPattern))) &<< SIMD8<Int32>(repeating: shift)
                for k in 0..<8 { intBuffer[(i + k) * c + ch] = whole[k] }
                i += 8
            }
        }
        while i < count {
            var v = (src[i * stride] * scale).rounded()
            v = v.isNaN ? 0 : Swift.min(Swift.max(v, -scale), maxValue)
            intBuffer[i * c + ch] = Int32(v) << shift
            if keepFloats { floatBuffer[i * c + ch] = v * inverse }
            i += 1
        }
    }

    /// `b` in the lanes where `sign` is negative (its sign bit set), `a` elsewhere.
    @inline(__always)
    private func pick(_ a: SIMD8<Float>, _ b: SIMD8<Float>, whereNegative sign: SIMD8<Float>) -> SIMD8<Float> {
        let mask = unsafeBitCast(sign, to: SIMD8<Int32>.self) &>> 31
        return unsafeBitCast((unsafeBitCast(a, to: SIMD8<Int32>.self) & ~mask) | (unsafeBitCast(b, to: SIMD8<Int32>.self) & mask),
                             to: SIMD8<Float>.self)
    }
}
