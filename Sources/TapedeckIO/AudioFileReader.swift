import CSndfile
import Foundation
import TapedeckCore
#if canImport(Glibc)
import Glibc
#endif

/// Streams any file libsndfile reads (WAV, RF64, W64, AIFF, FLAC, Ogg, MP3, …) as 32-bit
/// float, non-interleaved, one block at a time: never the whole file in memory.
///
/// Not thread-safe; one reader belongs to one thread (the disk thread, or a CLI command).
public final class AudioFileReader {
    /// The file being read.
    public let path: String
    /// Frames in the file (as its header and libsndfile report).
    public let frameCount: Int64
    /// Channels in the file.
    public let channelCount: Int
    /// What each channel is, as far as the file says (positions are looked for only in files
    /// wider than stereo).
    public let channelLayout: ChannelLayout
    /// Frames per second.
    public let sampleRate: Int
    /// Human-readable format, e.g. `WAV (Microsoft) 24-bit PCM`.
    public let formatDescription: String
    /// Raw libsndfile format word.
    public let sndfileFormat: Int32
    /// The largest block ``read(into:frameCount:)`` returns.
    public let blockFrames: Int

    private var handle: OpaquePointer?
    /// MP3 (decoded by libmpg123, which writes to stderr).
    private let isMPEG: Bool
    private let interleaved: UnsafeMutablePointer<Float>
    /// For 16-bit stereo WAV/AIFF: the frames as stored, converted here (see ``readStereo16(into:frameCount:)``).
    private let stereo16: UnsafeMutablePointer<Int16>?

    /// Opens `path` for reading, in blocks of at most `blockFrames` frames.
    /// Throws ``AudioFileError`` naming the file and the reason (missing, folder, empty, not
    /// audio, corrupt, truncated).
    public init(path: String, blockFrames: Int = 4096) throws(AudioFileError) {
        self.path = path
        // libsndfile happily opens a folder and then fails oddly; say what it is up front.
        if let why = RegularFile.refusal(path: path) { throw AudioFileError(path: path, reason: why) }
        if FileSystem.isFolder(path) { throw AudioFileError(path: path, reason: "is a folder, not an audio file") }
        var info = SF_INFO()
        guard var h = AudioFileReader.quietOnMainThread({ sf_open(path, Int32(SFM_READ), &info) }) else {
            throw AudioFileError(path: path, reason: AudioFileReader.openFailureReason(path: path))
        }
        guard info.channels > 0, info.channels <= 1024, info.samplerate > 0, info.frames >= 0 else {
            sf_close(h)
            throw AudioFileError(path: path, reason: "the header is corrupt (channels \(info.channels), rate \(info.samplerate))")
        }
        if let problem = AudioFileReader.truncation(handle: h) {
            sf_close(h)
            throw AudioFileError(path: path, reason: problem)
        }
        var frames = Int64(info.frames)
        if frames >= AudioFileReader.implausibleFrameCount {
            // A cut-off Ogg (and other streams without a length) reports SF_COUNT_MAX: count
            // what really decodes, so every later conversion of the count is of a real length.
            let counted = AudioFileReader.countDecodableFrames(handle: h, channelCount: Int(info.channels))
            if !counted.rewound {
                // A decoder that met a cut-off frame at the end (a FLAC take still being
                // written, read for its metadata) may not seek back: open the file again.
                sf_close(h)
                var again = SF_INFO()
                guard let reopened = AudioFileReader.quietOnMainThread({ sf_open(path, Int32(SFM_READ), &again) }),
                      again.channels == info.channels else {
                    throw AudioFileError(path: path, reason: "damaged: its length is unknown and it cannot be read back to the start")
                }
                h = reopened
            }
            frames = counted.frames
        }
        handle = h
        frameCount = frames
        channelCount = Int(info.channels)
        channelLayout = ChannelLayout(channelCount: Int(info.channels),
                                      positions: AudioFileReader.channelPositions(handle: h, channelCount: Int(info.channels)))
        sampleRate = Int(info.samplerate)
        sndfileFormat = info.format
        formatDescription = AudioFileReader.describe(format: info.format)
        self.blockFrames = max(1, blockFrames)
        interleaved = .allocate(capacity: self.blockFrames * Int(info.channels))
        let major = info.format & Int32(SF_FORMAT_TYPEMASK)
        isMPEG = major == Int32(SF_FORMAT_MPEG)
        let plain = [SF_FORMAT_WAV, SF_FORMAT_WAVEX, SF_FORMAT_W64, SF_FORMAT_RF64, SF_FORMAT_AIFF].map { Int32($0) }.contains(major)
        stereo16 = info.channels == 2 && plain && info.format & Int32(SF_FORMAT_SUBMASK) == Int32(SF_FORMAT_PCM_16)
            ? .allocate(capacity: 2 * self.blockFrames) : nil
        // Float reads of integer files come back scaled by 1/2^(bits-1): exact, and the
        // writer scales back by the same power of two.
        sf_command(h, Int32(SFC_SET_NORM_FLOAT), nil, Int32(SF_TRUE))
    }

    deinit {
        close()
        interleaved.deallocate()
        stereo16?.deallocate()
    }

    /// The encoding a lossless copy of this file needs: 16 or 24-bit integer when that is
    /// what the file holds, 32-bit float otherwise.
    public var losslessEncoding: SampleEncoding {
        switch sndfileFormat & Int32(SF_FORMAT_SUBMASK) {
        case Int32(SF_FORMAT_PCM_16): .int16
        case Int32(SF_FORMAT_PCM_24): .int24
        default: .float32
        }
    }

    /// Whether the file holds integer PCM (8 to 32 bits, in any container, FLAC included):
    /// its samples read as floats are always finite, so no NaN scan is needed on them.
    public var holdsIntegerSamples: Bool {
        [SF_FORMAT_PCM_S8, SF_FORMAT_PCM_U8, SF_FORMAT_PCM_16, SF_FORMAT_PCM_24, SF_FORMAT_PCM_32]
            .map { Int32($0) }.contains(sndfileFormat & Int32(SF_FORMAT_SUBMASK))
    }

    /// The open libsndfile handle (nil once closed), for metadata queries.
    var sndfileHandle: OpaquePointer? { handle }

    /// Closes the file; later reads return 0 frames.
    public func close() {
        if let h = handle { sf_close(h) }
        handle = nil
    }

    /// Moves the read position to `frame`.
    public func seek(toFrame frame: Int64) throws(AudioFileError) {
        guard let h = handle else { throw AudioFileError(path: path, reason: "the file is closed") }
        if sf_seek(h, sf_count_t(frame), SEEK_SET) < 0 {
            throw AudioFileError(path: path, reason: "cannot seek to frame \(frame): \(String(cString: sf_strerror(h)))")
        }
    }

    /// Reads up to `frameCount` frames (at most ``blockFrames``) into one buffer per channel;
    /// buffers beyond the file's channels are left alone. Returns the frames read; 0 at the
    /// end of the file. A decoding error mid-file throws.
    public func read(into channels: [UnsafeMutablePointer<Float>], frameCount wanted: Int) throws(AudioFileError) -> Int {
        if stereo16 != nil && channels.count >= 2 { return try readStereo16(into: channels, frameCount: wanted) }
        let got = try readInterleaved(frameCount: wanted)
        let c = channelCount
        // Mono and stereo are nearly every file: give them loops the compiler keeps tight.
        if c == 1, let out = channels.first {
            out.update(from: interleaved, count: got)
            return got
        }
        if c == 2 && channels.count >= 2 {
            let l = channels[0], r = channels[1]
            for i in 0..<got {
                l[i] = interleaved[2 * i]
                r[i] = interleaved[2 * i + 1]
            }
            return got
        }
        var ch = 0
        while ch < min(c, channels.count) {
            let out = channels[ch]
            var i = 0
            while i < got { out[i] = interleaved[i * c + ch]; i += 1 }
            ch += 1
        }
        return got
    }

    /// 16-bit stereo, read as stored and converted eight frames a step: libsndfile converts
    /// one sample at a time (a tenth of a W8 mixdown, measured). The same values: each frame
    /// (left in the low half of 32 bits, little-endian) is split by shifts, a 16-bit value v
    /// becomes the float v exactly through the bits of 1.5 × 2^23 + v, and 1/32768 (what
    /// libsndfile's normalised float read multiplies by) is a power of two.
    private func readStereo16(into channels: [UnsafeMutablePointer<Float>], frameCount wanted: Int) throws(AudioFileError) -> Int {
        guard let h = handle, let frames = stereo16, wanted > 0 else { return 0 }
        let n = min(wanted, blockFrames)
        let got = try checked(sf_readf_short(h, frames, sf_count_t(n)), of: n, handle: h)
        let l = channels[0], r = channels[1]
        let scale: Float = 1.0 / 32768
        let magic: Float = 12_582_912
        let magicBits = SIMD8<Int32>(repeating: Int32(bitPattern: magic.bitPattern))
        let raw = UnsafeRawPointer(frames)
        var i = 0
        while i + 8 <= got {
            let both = raw.loadUnaligned(fromByteOffset: i * 4, as: SIMD8<Int32>.self)
            let left = (both &<< 16) &>> 16, right = both &>> 16
            let lf = (unsafeBitCast(left &+ magicBits, to: SIMD8<Float>.self) - magic) * scale
            let rf = (unsafeBitCast(right &+ magicBits, to: SIMD8<Float>.self) - magic) * scale
            UnsafeMutableRawPointer(l + i).storeBytes(of: lf, as: SIMD8<Float>.self)
            UnsafeMutableRawPointer(r + i).storeBytes(of: rf, as: SIMD8<Float>.self)
            i += 8
        }
        while i < got {
            l[i] = Float(frames[2 * i]) * scale
            r[i] = Float(frames[2 * i + 1]) * scale
            i += 1
        }
        return got
    }

    /// Reads up to `frameCount` frames (at most ``blockFrames``) into the reader's own
    /// interleaved buffer, valid until the next read. For the importer and peak builder,
    /// which want interleaved frames anyway.
    func readInterleaved(frameCount wanted: Int) throws(AudioFileError) -> Int {
        guard let h = handle, wanted > 0 else { return 0 }
        let n = min(wanted, blockFrames)
        // libmpg123 prints notes about damaged frames as it decodes them (see quietOnMainThread).
        let got = isMPEG ? AudioFileReader.quietOnMainThread { sf_readf_float(h, interleaved, sf_count_t(n)) }
            : sf_readf_float(h, interleaved, sf_count_t(n))
        return try checked(got, of: n, handle: h)
    }

    /// The frames a read of `wanted` returned; a short read that libsndfile calls an error
    /// (not the end of the file) throws.
    private func checked(_ result: sf_count_t, of wanted: Int, handle h: OpaquePointer) throws(AudioFileError) -> Int {
        let got = max(0, Int(result))
        if got < wanted && sf_error(h) != 0 {
            throw AudioFileError(path: path, reason: "cannot decode: \(String(cString: sf_strerror(h)))")
        }
        return got
    }

    /// Replaces NaN and infinite samples among the `frameCount` frames the last
    /// ``readInterleaved(frameCount:)`` returned with silence; returns how many there were.
    func replaceNonFinite(frameCount: Int) -> Int {
        NonFiniteSamples.replace(interleaved, count: frameCount * channelCount)
    }

    /// The buffer ``readInterleaved(frameCount:)`` fills.
    var interleavedBuffer: UnsafePointer<Float> { UnsafePointer(interleaved) }

    /// Frame counts at or over this (2^40, about 260 days at 48 kHz) are not a length a file
    /// can hold: libsndfile's "unknown" (SF_COUNT_MAX) or a damaged header.
    static let implausibleFrameCount: Int64 = 1 << 40

    /// Reads `h` to its real end (or its first frame that does not decode) and back to the
    /// start: the frames that decode, and whether it could seek back.
    static func countDecodableFrames(handle h: OpaquePointer, channelCount: Int) -> (frames: Int64, rewound: Bool) {
        let block = 4096
        let scratch = UnsafeMutablePointer<Float>.allocate(capacity: block * channelCount)
        defer { scratch.deallocate() }
        var total: Int64 = 0
        while total < implausibleFrameCount {
            let got = sf_readf_float(h, scratch, sf_count_t(block))
            if got <= 0 { break }
            total += Int64(got)
            if got < block { break }
        }
        return (total, sf_seek(h, 0, SEEK_SET) == 0)
    }

    /// Runs `body` with stderr sent to /dev/null when on the main (control) thread, else as is.
    /// libsndfile has no switch for the libraries under it: libmpg123 prints several lines
    /// about a damaged MP3 (or a CAF it is handed) before the open fails, and the reason we
    /// give is the one line the user needs. The swap of fd 2 is process-wide, so it is done
    /// only where nothing else is expected to write (the control thread opening a file; the
    /// audio thread never logs), never on a disk thread.
    static func quietOnMainThread<T>(_ body: () -> T) -> T {
        guard Thread.isMainThread else { return body() }
        let saved = dup(2)
        let null = open("/dev/null", O_WRONLY | O_CLOEXEC)
        guard saved >= 0, null >= 0 else {
            if saved >= 0 { Glibc.close(saved) }
            if null >= 0 { Glibc.close(null) }
            return body()
        }
        fflush(nil)
        dup2(null, 2)
        Glibc.close(null)
        defer {
            fflush(nil)
            dup2(saved, 2)
            Glibc.close(saved)
        }
        return body()
    }

    /// A reason for a failed `sf_open` that a user can act on.
    static func openFailureReason(path: String) -> String {
        var st = stat()
        if stat(path, &st) != 0 { return "no such file" }
        if (st.st_mode & S_IFMT) == S_IFDIR { return "is a folder, not an audio file" }
        if access(path, R_OK) != 0 { return "permission denied" }
        if st.st_size == 0 { return "the file is empty" }
        let message = String(cString: sf_strerror(nil))
        // libsndfile gives "File does not exist or is not a regular file" for a damaged MP3
        // that exists (checked above): the file is what is wrong, not its path.
        if message.hasPrefix("File does not exist") || message.lowercased().contains("mpeg") {
            return "damaged or not a readable audio file (its contents cannot be decoded)"
        }
        return "not a readable audio file (\(message))"
    }

    /// Whether the header promises more audio than the file holds. libsndfile quietly
    /// shortens such a file to what is there and only says so in its log, as
    /// `data : 20000 (should be 5000)` (WAV, RF64, W64) or `SSND : … (should be …)` (AIFF).
    /// A size of 0 or 0xFFFFFFFF means "unknown" (a streamed or unfinished file), not a cut.
    static func truncation(handle h: OpaquePointer) -> String? {
        var log = [CChar](repeating: 0, count: 8192)
        let n = log.withUnsafeMutableBufferPointer { buf in
            sf_command(h, Int32(SFC_GET_LOG_INFO), buf.baseAddress, Int32(buf.count - 1))
        }
        guard n > 0 else { return nil }
        let text = log.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        for line in text.split(separator: "\n") {
            let trimmed = line.drop(while: { $0 == " " })
            guard trimmed.hasPrefix("data") || trimmed.hasPrefix("SSND") else { continue }
            let words = trimmed.split(whereSeparator: { $0 == " " || $0 == "(" || $0 == ")" || $0 == ":" })
            // words: ["data", "20000", "should", "be", "5000"]
            guard words.count >= 5, words[2] == "should", words[3] == "be",
                  let claimed = Int64(words[1]), let actual = Int64(words[4]) else { continue }
            if claimed > actual && claimed != 0xFFFF_FFFF && claimed != -1 {
                return "truncated: the header promises \(claimed) bytes of audio but only \(max(actual, 0)) are there"
            }
        }
        return nil
    }

    /// Names a libsndfile format word, e.g. `FLAC 24-bit PCM`.
    public static func describe(format: Int32) -> String {
        var major = SF_FORMAT_INFO()
        major.format = format & Int32(SF_FORMAT_TYPEMASK)
        var sub = SF_FORMAT_INFO()
        sub.format = format & Int32(SF_FORMAT_SUBMASK)
        var text = "unknown"
        if sf_command(nil, Int32(SFC_GET_FORMAT_INFO), &major, Int32(MemoryLayout<SF_FORMAT_INFO>.size)) == 0, let n = major.name {
            text = String(cString: n)
        }
        if sf_command(nil, Int32(SFC_GET_FORMAT_INFO), &sub, Int32(MemoryLayout<SF_FORMAT_INFO>.size)) == 0, let n = sub.name {
            text += " " + String(cString: n)
        }
        return text
    }
}
