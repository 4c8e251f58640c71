import CSndfile

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
    /// Frames per second.
    public let sampleRate: Int
    /// Human-readable format, e.g. `WAV (Microsoft) 24-bit PCM`.
    public let formatDescription: String
    /// Raw libsndfile format word.
    public let sndfileFormat: Int32

    private var handle: OpaquePointer?
    private var interleaved: UnsafeMutablePointer<Float>
    private let blockFrames: Int

    /// Opens `path` for reading, in blocks of at most `blockFrames` frames.
    /// Throws ``AudioFileError`` naming the file and the reason (missing, not audio, corrupt).
    public init(path: String, blockFrames: Int = 4096) throws(AudioFileError) {
        self.path = path
        var info = SF_INFO()
        guard let h = sf_open(path, Int32(SFM_READ), &info) else {
            throw AudioFileError(path: path, reason: AudioFileReader.openFailureReason(path: path))
        }
        guard info.channels > 0, info.samplerate > 0, info.frames >= 0 else {
            sf_close(h)
            throw AudioFileError(path: path, reason: "the header is corrupt (channels \(info.channels), rate \(info.samplerate))")
        }
        handle = h
        frameCount = Int64(info.frames)
        channelCount = Int(info.channels)
        sampleRate = Int(info.samplerate)
        sndfileFormat = info.format
        formatDescription = AudioFileReader.describe(format: info.format)
        self.blockFrames = max(1, blockFrames)
        interleaved = .allocate(capacity: self.blockFrames * Int(info.channels))
        // Float reads of integer files come back scaled to [-1, 1).
        sf_command(h, Int32(SFC_SET_NORM_FLOAT), nil, Int32(SF_TRUE))
    }

    deinit {
        close()
        interleaved.deallocate()
    }

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

    /// Reads up to `frameCount` frames (at most the block size) into one buffer per channel.
    /// Returns the frames read; 0 at the end of the file. A decoding error mid-file throws.
    public func read(into channels: [UnsafeMutablePointer<Float>], frameCount wanted: Int) throws(AudioFileError) -> Int {
        guard let h = handle else { return 0 }
        let n = min(wanted, blockFrames)
        let got = Int(sf_readf_float(h, interleaved, sf_count_t(n)))
        if got < n {
            let code = sf_error(h)
            if code != 0 {
                throw AudioFileError(path: path, reason: "cannot decode: \(String(cString: sf_strerror(h)))")
            }
        }
        let c = channelCount
        for (ch, out) in channels.enumerated() where ch < c {
            var i = 0
            while i < got { out[i] = interleaved[i * c + ch]; i += 1 }
        }
        return got
    }

    /// A reason for a failed `sf_open` that a user can act on.
    static func openFailureReason(path: String) -> String {
        var st = stat()
        if stat(path, &st) != 0 { return "no such file" }
        if (st.st_mode & S_IFMT) == S_IFDIR { return "is a folder, not an audio file" }
        if access(path, R_OK) != 0 { return "permission denied" }
        if st.st_size == 0 { return "the file is empty" }
        let message = String(cString: sf_strerror(nil))
        return "not a readable audio file (\(message))"
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

#if canImport(Glibc)
import Glibc
#endif
