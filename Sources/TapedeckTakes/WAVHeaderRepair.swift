#if canImport(Glibc)
import Glibc
#endif

/// Rewrites the size fields of a WAV/RF64 file that was cut off (a crash, a kill -9) so they
/// match the bytes actually on disk. The header the writer last updated may be up to a
/// second old; the audio after it is still in the file and this makes it readable again.
public enum WAVHeaderRepair {
    /// What the repair found.
    public struct Outcome: Equatable, Sendable {
        /// Whole frames now declared in the data chunk.
        public var frameCount: Int64
        /// Whether any byte of the header changed.
        public var changed: Bool
    }

    /// Repairs `path` in place. Throws ``TakeError`` when it is not a RIFF/RF64 WAVE file
    /// with a `fmt ` and a `data` chunk.
    public static func repair(path: String) throws(TakeError) -> Outcome {
        let fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else {
            let code = errno
            throw TakeError(path: path, reason: code == ELOOP ? "it is a link; give the file itself" : "cannot open: \(String(cString: strerror(code)))")
        }
        defer { close(fd) }
        var st = stat()
        fstat(fd, &st)
        let fileSize = Int64(st.st_size)
        func fail(_ why: String) -> TakeError { TakeError(path: path, reason: "cannot repair the header: \(why)") }
        func readAt(_ offset: Int64, _ count: Int) -> [UInt8] {
            var b = [UInt8](repeating: 0, count: count)
            let n = b.withUnsafeMutableBytes { pread(fd, $0.baseAddress, count, off_t(offset)) }
            return n == count ? b : []
        }
        func writeAt(_ offset: Int64, _ bytes: [UInt8]) -> Bool {
            bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress, bytes.count, off_t(offset)) } == bytes.count
        }
        func u32(_ b: [UInt8], _ i: Int) -> UInt32 { UInt32(b[i]) | UInt32(b[i + 1]) << 8 | UInt32(b[i + 2]) << 16 | UInt32(b[i + 3]) << 24 }
        func le32(_ v: UInt32) -> [UInt8] { withUnsafeBytes(of: v.littleEndian, Array.init) }
        func le64(_ v: Int64) -> [UInt8] { withUnsafeBytes(of: v.littleEndian, Array.init) }

        let head = readAt(0, 12)
        guard head.count == 12, String(decoding: head[8..<12], as: UTF8.self) == "WAVE" else { throw fail("not a WAVE file") }
        let magic = String(decoding: head[0..<4], as: UTF8.self)
        guard magic == "RIFF" || magic == "RF64" else { throw fail("not a RIFF file") }
        var offset: Int64 = 12
        var ds64At: Int64?
        var blockAlign = 0
        var dataAt: Int64?
        while offset + 8 <= fileSize {
            let chunk = readAt(offset, 8)
            guard chunk.count == 8 else { break }
            let id = String(decoding: chunk[0..<4], as: UTF8.self)
            let size = Int64(u32(chunk, 4))
            if id == "ds64" { ds64At = offset }
            if id == "fmt " {
                let fmt = readAt(offset + 8, 16)
                if fmt.count == 16 { blockAlign = Int(fmt[12]) | Int(fmt[13]) << 8 }
            }
            if id == "data" { dataAt = offset; break }
            offset += 8 + size + (size & 1)
        }
        guard let data = dataAt else { throw fail("no data chunk") }
        guard blockAlign > 0 else { throw fail("no fmt chunk") }
        let dataStart = data + 8
        // A finished file (its RIFF size is the file's and its data chunk lies inside it) is
        // not a crashed take: chunks after the data (LIST, iXML) are not audio to claim.
        func u64(_ b: [UInt8]) -> Int64 { b.count == 8 ? b.reversed().reduce(Int64(0)) { $0 << 8 | Int64($1) } : -1 }
        let declaredRIFF = magic == "RF64" ? ds64At.map { u64(readAt($0 + 8, 8)) } ?? -1 : Int64(u32(head, 4))
        let declaredData = magic == "RF64" ? ds64At.map { u64(readAt($0 + 16, 8)) } ?? -1 : Int64(u32(readAt(data, 8), 4))
        if declaredRIFF + 8 == fileSize, declaredData > 0, declaredData % Int64(blockAlign) == 0,
           dataStart + declaredData <= fileSize {
            return Outcome(frameCount: declaredData / Int64(blockAlign), changed: false)
        }
        let dataBytes = max(0, (fileSize - dataStart) / Int64(blockAlign) * Int64(blockAlign))
        let frames = dataBytes / Int64(blockAlign)
        let riffSize = dataStart - 8 + dataBytes
        var changed = false
        func update(_ at: Int64, _ bytes: [UInt8]) throws(TakeError) {
            if readAt(at, bytes.count) != bytes {
                guard writeAt(at, bytes) else { throw fail("cannot write: \(String(cString: strerror(errno)))") }
                changed = true
            }
        }
        if magic == "RF64", let ds64 = ds64At {
            try update(ds64 + 8, le64(riffSize))
            try update(ds64 + 16, le64(dataBytes))
            try update(ds64 + 24, le64(frames))
        } else {
            guard riffSize <= Int64(UInt32.max) else { throw fail("over 4 GB in a plain RIFF header") }
            try update(4, le32(UInt32(riffSize)))
            try update(data + 4, le32(UInt32(dataBytes)))
        }
        if changed { fsync(fd) }
        return Outcome(frameCount: frames, changed: changed)
    }
}
