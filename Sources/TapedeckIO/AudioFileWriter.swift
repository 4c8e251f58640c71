import CSndfile
#if canImport(Glibc)
import Glibc
#endif

/// Writes WAV (16/24-bit integer, 32-bit float) and FLAC (16/24-bit) from 32-bit float,
/// non-interleaved blocks.
///
/// WAV is opened as RF64 with libsndfile's auto-downgrade: a take that grows past 4 GB keeps
/// going as RF64, a short one is closed as plain WAV.
///
/// Integer samples are converted here, not by libsndfile: its normalised float→int path scales
/// by 0x7FFF while reading scales by 1/0x8000, which would change every loud sample by one step
/// on a round trip. Here a file read as float and written back at the same depth is bit-identical.
///
/// Not thread-safe; a writer belongs to one thread (the disk thread, or a CLI command).
public final class AudioFileWriter {
    /// The file being written.
    public let path: String
    /// What is being written.
    public let format: AudioFileFormat
    /// Frames written so far.
    public private(set) var framesWritten: Int64 = 0

    private var handle: OpaquePointer?
    private let blockFrames: Int
    private let intBuffer: UnsafeMutablePointer<Int32>
    private let floatBuffer: UnsafeMutablePointer<Float>

    /// Creates (or truncates) `path`. Throws ``AudioFileError`` naming the file and the reason
    /// (folder missing, permission denied, unsupported format).
    public init(path: String, format: AudioFileFormat, blockFrames: Int = 4096) throws(AudioFileError) {
        self.path = path
        self.format = format
        if let problem = format.problem() { throw AudioFileError(path: path, reason: problem) }
        var info = SF_INFO()
        info.samplerate = Int32(format.sampleRate)
        info.channels = Int32(format.channelCount)
        info.format = format.sndfileFormat
        guard sf_format_check(&info) == SF_TRUE else {
            throw AudioFileError(path: path, reason: "libsndfile cannot write \(format.container.rawValue) \(format.encoding.rawValue)-bit with \(format.channelCount) channels")
        }
        guard let h = sf_open(path, Int32(SFM_WRITE), &info) else {
            throw AudioFileError(path: path, reason: AudioFileWriter.createFailureReason(path: path))
        }
        handle = h
        if format.container == .wav {
            sf_command(h, Int32(SFC_RF64_AUTO_DOWNGRADE), nil, Int32(SF_TRUE))
        }
        self.blockFrames = max(1, blockFrames)
        intBuffer = .allocate(capacity: self.blockFrames * format.channelCount)
        floatBuffer = .allocate(capacity: self.blockFrames * format.channelCount)
    }

    deinit {
        if let h = handle { sf_close(h) }
        intBuffer.deallocate()
        floatBuffer.deallocate()
    }

    /// Appends `frameCount` frames from one buffer per channel. A short write (disk full,
    /// file-size limit) throws; the frames written before it stay valid once closed.
    public func write(_ channels: [UnsafePointer<Float>], frameCount: Int) throws(AudioFileError) {
        guard let h = handle else { throw AudioFileError(path: path, reason: "the file is already closed") }
        precondition(channels.count == format.channelCount, "one buffer per channel")
        var done = 0
        while done < frameCount {
            let n = min(blockFrames, frameCount - done)
            let written: Int
            if format.encoding == .float32 {
                interleave(channels, from: done, count: n) { $0 }
                written = Int(sf_writef_float(h, floatBuffer, sf_count_t(n)))
            } else {
                interleaveInts(channels, from: done, count: n)
                written = Int(sf_writef_int(h, intBuffer, sf_count_t(n)))
            }
            framesWritten += Int64(max(written, 0))
            if written != n {
                throw AudioFileError(path: path, reason: AudioFileWriter.writeFailureReason(handle: h))
            }
            done += n
        }
    }

    /// Rewrites the header so the file is valid up to the frames written so far (for crash
    /// safety: a reader after a crash sees at most the audio since the last call missing).
    public func updateHeader() {
        guard let h = handle else { return }
        sf_write_sync(h)
        sf_command(h, Int32(SFC_UPDATE_HEADER_NOW), nil, 0)
    }

    /// Finishes the file (final header, FLAC flush). Throws when the last write fails.
    public func close() throws(AudioFileError) {
        guard let h = handle else { return }
        handle = nil
        let code = sf_close(h)
        if code != 0 {
            throw AudioFileError(path: path, reason: "could not finish the file: \(String(cString: sf_error_number(code)))")
        }
    }

    private func interleave(_ channels: [UnsafePointer<Float>], from offset: Int, count: Int, _ f: (Float) -> Float) {
        let c = format.channelCount
        for ch in 0..<c {
            let src = channels[ch] + offset
            for i in 0..<count { floatBuffer[i * c + ch] = src[i] }
        }
    }

    /// Float → left-justified 32-bit integer at the file's depth, rounded and clipped.
    private func interleaveInts(_ channels: [UnsafePointer<Float>], from offset: Int, count: Int) {
        let c = format.channelCount
        let bits = format.encoding.bits
        let scale = Double(1 << (bits - 1))
        let maxValue = scale - 1
        let shift = Int32(32 - bits)
        for ch in 0..<c {
            let src = channels[ch] + offset
            for i in 0..<count {
                var v = (Double(src[i]) * scale).rounded()
                if v > maxValue { v = maxValue } else if v < -scale { v = -scale } else if v.isNaN { v = 0 }
                intBuffer[i * c + ch] = Int32(v) << shift
            }
        }
    }

    static func createFailureReason(path: String) -> String {
        let dir = parentFolder(of: path)
        var st = stat()
        if stat(dir, &st) != 0 { return "cannot create: folder \(dir) does not exist" }
        if access(dir, W_OK) != 0 { return "cannot create: permission denied in \(dir)" }
        if stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR { return "cannot create: it is a folder" }
        return "cannot create: \(String(cString: sf_strerror(nil)))"
    }

    static func writeFailureReason(handle: OpaquePointer) -> String {
        let err = errno
        if err == ENOSPC { return "disk full: the take was closed at the last frame that fit" }
        if err == EFBIG { return "file size limit reached: the take was closed at the last frame that fit" }
        let message = String(cString: sf_strerror(handle))
        if err != 0 { return "write failed: \(String(cString: strerror(err))) (\(message))" }
        return "write failed: \(message)"
    }
}

/// The folder holding `path` (`.` for a bare name).
func parentFolder(of path: String) -> String {
    guard let slash = path.lastIndex(of: "/") else { return "." }
    let dir = String(path[..<slash])
    return dir.isEmpty ? "/" : dir
}
