import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Changes to a take's file once it is closed, for what is known only then: the wall-clock
/// time of its first frame (`record --timestamp clock`) and where input was lost (xruns,
/// dropped frames) as cue points.
///
/// The file keeps its layout: the `bext` chunk's fixed fields are rewritten in place, a
/// placeholder time reference (``TakeFilePatch/placeholderTimeReference``, as long as any
/// real one can be) is replaced digit for digit in the other chunks (iXML, LIST/INFO, a
/// FLAC's Vorbis comment), and cue points go into new chunks after the last one.
public enum TakeFilePatch {
    /// The time reference a take stamped with the wall clock carries until it is closed:
    /// 11 digits, its iXML high word one digit and low word ten — at least as long as any
    /// day's reference at up to 192 kHz, so the real one always fits in its place.
    public static let placeholderTimeReference: Int64 = 3 << 32 | 4_000_000_000

    /// Why a patch failed, in words.
    public struct Failure: Error, CustomStringConvertible {
        /// The line.
        public var description: String
    }

    /// Stamps the closed take at `path` with `timeReference` (frames since midnight) and the
    /// BWF origination `date` (`yyyy-mm-dd`) and `time` (`hh:mm:ss`); `metadata` is what the
    /// file says about itself, with the new reference (its text goes into the `bext`
    /// description). WAV/RF64 and FLAC.
    public static func stampTime(path: String, metadata: TakeMetadata, date: String, time: String) throws(Failure) {
        let file = try PatchFile(path: path)
        defer { file.close() }
        let reference = max(0, metadata.timeReference ?? metadata.timelineFrame)
        var replacements: [([UInt8], [UInt8])] = [
            (Array("time_reference=\(placeholderTimeReference)".utf8), Array("time_reference=\(padded(reference, digits: 11))".utf8)),
        ]
        let hiOld = "<TIMESTAMP_SAMPLES_SINCE_MIDNIGHT_HI>\(placeholderTimeReference >> 32)</TIMESTAMP_SAMPLES_SINCE_MIDNIGHT_HI>"
        let hiNew = "<TIMESTAMP_SAMPLES_SINCE_MIDNIGHT_HI>\(reference >> 32)</TIMESTAMP_SAMPLES_SINCE_MIDNIGHT_HI>"
        let loOld = "<TIMESTAMP_SAMPLES_SINCE_MIDNIGHT_LO>\(placeholderTimeReference & 0xFFFF_FFFF)</TIMESTAMP_SAMPLES_SINCE_MIDNIGHT_LO>"
        let loNew = "<TIMESTAMP_SAMPLES_SINCE_MIDNIGHT_LO>\(reference & 0xFFFF_FFFF)</TIMESTAMP_SAMPLES_SINCE_MIDNIGHT_LO>"
        // Whitespace between elements is nothing to an XML reader: the numbers stay plain.
        replacements.append((Array(hiOld.utf8), Array(hiNew.utf8) + Array(repeating: 0x20, count: hiOld.utf8.count - hiNew.utf8.count)))
        replacements.append((Array(loOld.utf8), Array(loNew.utf8) + Array(repeating: 0x20, count: loOld.utf8.count - loNew.utf8.count)))
        if file.isFLAC {
            // The Vorbis comment lies in the metadata blocks before the first audio frame.
            try file.replace(replacements, in: 0..<min(file.size, 1 << 20))
            return
        }
        let chunks = try file.chunks()
        for chunk in chunks where chunk.id != "data" {
            if chunk.id == "bext" {
                guard chunk.size >= 346 else { throw Failure(description: "\(path): its bext chunk is too short to stamp") }
                var fields = [UInt8](repeating: 0, count: 346)
                func put(_ text: String, at offset: Int, capacity: Int) {
                    let bytes = FileCues.cut(text, capacity: capacity)
                    for i in 0..<capacity { fields[offset + i] = i < bytes.count ? bytes[i] : 0 }
                }
                let old = try file.read(at: chunk.dataOffset, count: 346)
                fields = old
                put(metadata.text, at: 0, capacity: 255)
                put(date, at: 320, capacity: 10)
                put(time, at: 330, capacity: 8)
                let r = UInt64(reference)
                for i in 0..<4 { fields[338 + i] = UInt8(truncatingIfNeeded: r >> (8 * UInt64(i))) }
                for i in 0..<4 { fields[342 + i] = UInt8(truncatingIfNeeded: r >> (32 + 8 * UInt64(i))) }
                try file.write(fields, at: chunk.dataOffset)
            } else if chunk.size < 1 << 20 {
                try file.replace(replacements, in: chunk.dataOffset..<(chunk.dataOffset + chunk.size))
            }
        }
    }

    /// Adds `cues` to the closed WAV (or RF64) take at `path`: a `cue ` chunk and a `LIST`
    /// `adtl` chunk with their labels after its last chunk, and the RIFF size grown to hold
    /// them. Points outside the file, past 2^32 frames or beyond `limit` are left out.
    /// Returns how many were written.
    @discardableResult
    public static func appendCues(path: String, cues: [CuePoint], frameCount: Int64,
                                  limit: Int = FileCues.maximumWAVCues) throws(Failure) -> Int {
        let (kept, _) = FileCues.usable(cues, frameCount: frameCount, limit: limit, maximumFrame: Int64(UInt32.max))
        guard !kept.isEmpty else { return 0 }
        let file = try PatchFile(path: path)
        defer { file.close() }
        guard !file.isFLAC else { throw Failure(description: "\(path): cue points go into WAV files") }
        let chunks = try file.chunks()
        if chunks.contains(where: { $0.id == "cue " }) { throw Failure(description: "\(path) has cue points already") }
        var out: [UInt8] = []
        if file.size % 2 == 1 { out.append(0) }
        var cue = Array("cue ".utf8) + le32(UInt32(4 + 24 * kept.count)) + le32(UInt32(kept.count))
        for (i, p) in kept.enumerated() {
            cue += le32(UInt32(i + 1)) + le32(UInt32(p.frame)) + Array("data".utf8) + le32(0) + le32(0) + le32(UInt32(p.frame))
        }
        out += cue
        let adtl = FileCues.adtlPayload(kept)
        out += Array("LIST".utf8) + le32(UInt32(adtl.count)) + adtl
        if adtl.count % 2 == 1 { out.append(0) }
        try file.write(out, at: file.size)
        let newSize = file.size + Int64(out.count)
        if file.isRF64 {
            guard let ds64 = chunks.first(where: { $0.id == "ds64" }) else { throw Failure(description: "\(path): an RF64 file without ds64") }
            try file.write(le64(UInt64(newSize - 8)), at: ds64.dataOffset)
        } else {
            guard newSize - 8 <= Int64(UInt32.max) else { throw Failure(description: "\(path): no room for cue points in a 4 GB WAV") }
            try file.write(le32(UInt32(newSize - 8)), at: 4)
        }
        return kept.count
    }

    /// A wall-clock moment (seconds since 1970) as frames since local midnight at
    /// `sampleRate` and the BWF origination `date` (`yyyy-mm-dd`) and `time` (`hh:mm:ss`).
    public static func timeOfDay(wallClock: Double, sampleRate: Int) -> (reference: Int64, date: String, time: String) {
        let date = Date(timeIntervalSince1970: wallClock)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone.current
        let midnight = calendar.startOfDay(for: date).timeIntervalSince1970
        let reference = Int64(((wallClock - midnight) * Double(sampleRate)).rounded())
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        func two(_ v: Int?) -> String { let n = v ?? 0; return n < 10 ? "0\(n)" : "\(n)" }
        return (reference, "\(c.year ?? 0)-\(two(c.month))-\(two(c.day))", "\(two(c.hour)):\(two(c.minute)):\(two(c.second))")
    }

    /// Stamps a take a crash left with its placeholder time reference (it was recorded with
    /// `--timestamp clock`, and its crash marker kept `wallClock`, the time its first frame
    /// arrived): what its clean close would have written. False when the file carries no
    /// placeholder (stamped already, or never asked for).
    @discardableResult
    public static func restamp(path: String, wallClock: Double, sampleRate: Int) throws(Failure) -> Bool {
        guard var metadata = try? TakeMetadata.read(path: path), metadata.timeReference == placeholderTimeReference else { return false }
        let when = timeOfDay(wallClock: wallClock, sampleRate: sampleRate)
        metadata.timeReference = when.reference
        try stampTime(path: path, metadata: metadata, date: when.date, time: when.time)
        return true
    }

    /// `value` in decimal with leading zeros to `digits` (a reader of the number sees it whole).
    static func padded(_ value: Int64, digits: Int) -> String {
        let s = String(value)
        return s.count >= digits ? s : String(repeating: "0", count: digits - s.count) + s
    }

    static func le32(_ v: UInt32) -> [UInt8] { withUnsafeBytes(of: v.littleEndian, Array.init) }
    static func le64(_ v: UInt64) -> [UInt8] { withUnsafeBytes(of: v.littleEndian, Array.init) }
}

/// A file opened for patching in place.
final class PatchFile {
    struct Chunk {
        var id: String
        var offset: Int64
        var size: Int64
        var dataOffset: Int64 { offset + 8 }
    }

    let path: String
    private var fd: Int32
    let size: Int64
    let isFLAC: Bool
    let isRF64: Bool

    init(path: String) throws(TakeFilePatch.Failure) {
        self.path = path
        let handle = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW)
        guard handle >= 0 else { throw TakeFilePatch.Failure(description: "\(path): cannot open: \(String(cString: strerror(errno)))") }
        var st = stat()
        fstat(handle, &st)
        var head = [UInt8](repeating: 0, count: 12)
        let n = head.withUnsafeMutableBytes { pread(handle, $0.baseAddress, 12, 0) }
        let magic = n == 12 ? String(decoding: head[0..<4], as: UTF8.self) : ""
        guard magic == "fLaC" || ((magic == "RIFF" || magic == "RF64") && String(decoding: head[8..<12], as: UTF8.self) == "WAVE") else {
            Glibc.close(handle)
            throw TakeFilePatch.Failure(description: "\(path): not a WAV or FLAC file")
        }
        fd = handle
        size = Int64(st.st_size)
        isFLAC = magic == "fLaC"
        isRF64 = magic == "RF64"
    }

    func close() {
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
    }

    func read(at offset: Int64, count: Int) throws(TakeFilePatch.Failure) -> [UInt8] {
        var b = [UInt8](repeating: 0, count: count)
        let n = b.withUnsafeMutableBytes { pread(fd, $0.baseAddress, count, off_t(offset)) }
        guard n == count else { throw TakeFilePatch.Failure(description: "\(path): cannot read at \(offset)") }
        return b
    }

    func write(_ bytes: [UInt8], at offset: Int64) throws(TakeFilePatch.Failure) {
        let n = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress, bytes.count, off_t(offset)) }
        guard n == bytes.count else { throw TakeFilePatch.Failure(description: "\(path): cannot write: \(String(cString: strerror(errno)))") }
    }

    /// The RIFF chunks, in file order (the data chunk's RF64 size from `ds64`).
    func chunks() throws(TakeFilePatch.Failure) -> [Chunk] {
        var out: [Chunk] = []
        var offset: Int64 = 12
        var dataSize64: Int64?
        while offset + 8 <= size {
            let h = try read(at: offset, count: 8)
            let id = String(decoding: h[0..<4], as: UTF8.self)
            var chunkSize = Int64(UInt32(h[4]) | UInt32(h[5]) << 8 | UInt32(h[6]) << 16 | UInt32(h[7]) << 24)
            if id == "ds64", chunkSize >= 24 {
                let d = try read(at: offset + 8 + 8, count: 8)
                dataSize64 = d.reversed().reduce(Int64(0)) { $0 << 8 | Int64($1) }
            }
            if id == "data", chunkSize == 0xFFFF_FFFF, let d = dataSize64 { chunkSize = d }
            out.append(Chunk(id: id, offset: offset, size: chunkSize))
            offset += 8 + chunkSize + (chunkSize & 1)
        }
        return out
    }

    /// Replaces every occurrence of each `(old, new)` (the same length) inside `range`.
    func replace(_ pairs: [([UInt8], [UInt8])], in range: Range<Int64>) throws(TakeFilePatch.Failure) {
        guard !range.isEmpty else { return }
        var bytes = try read(at: range.lowerBound, count: Int(range.count))
        var changed = false
        for (old, new) in pairs where !old.isEmpty && old.count == new.count && old.count <= bytes.count {
            var i = 0
            while i + old.count <= bytes.count {
                if bytes[i] == old[0] && Array(bytes[i..<(i + old.count)]) == old {
                    bytes.replaceSubrange(i..<(i + old.count), with: new)
                    changed = true
                    i += old.count
                } else {
                    i += 1
                }
            }
        }
        if changed { try write(bytes, at: range.lowerBound) }
    }
}
