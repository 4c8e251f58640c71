import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Chapter comments in a finished FLAC file: `CHAPTER001=00:01:00.000` and
/// `CHAPTER001NAME=Chorus` in its Vorbis comment block, the convention ffmpeg/ffprobe (and
/// players built on it) read as chapters.
///
/// libsndfile writes only its fixed set of Vorbis comments (title, comment, date, …) and no
/// others, so the block is rewritten here once libsndfile has closed the file: the metadata
/// blocks are read (each size checked against the file), the comment block gets the chapter
/// entries (one is made if there was none), and the file is written anew beside itself — the
/// audio frames copied as they are — and renamed over the old one, so a failure leaves the
/// file libsndfile wrote.
public enum FLACChapters {
    /// Adds `chapters` (frames at `sampleRate`) and the `extra` comments (`KEY`, value;
    /// replacing any of the same key) to the FLAC file at `path`.
    public static func add(_ chapters: [CuePoint], sampleRate: Int, extra: [(String, String)] = [],
                           toFileAt path: String) throws(AudioFileError) {
        guard !chapters.isEmpty || !extra.isEmpty else { return }
        let input = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard input >= 0 else { throw AudioFileError(path: path, reason: "cannot read the file back to add its chapters") }
        defer { close(input) }
        var st = stat()
        guard fstat(input, &st) == 0, let (blocks, audioStart) = metadataBlocks(fd: input, fileSize: Int64(st.st_size)) else {
            throw AudioFileError(path: path, reason: "cannot add chapters: the FLAC metadata is not as libsndfile writes it")
        }
        var comments: [UInt8]?
        var all: [(type: UInt8, body: [UInt8])] = []
        for block in blocks {
            if block.type == 4 && comments == nil {
                comments = adding(chapters, sampleRate: sampleRate, extra: extra, to: block.body)
            } else if block.type != 1 {  // padding is dropped: the file is rewritten anyway
                all.append(block)
            }
        }
        let commentBlock = comments ?? adding(chapters, sampleRate: sampleRate, extra: extra, to: nil)
        guard commentBlock.count < 1 << 24 else {
            throw AudioFileError(path: path, reason: "cannot add chapters: too many for one Vorbis comment block")
        }
        // STREAMINFO stays first, as FLAC requires; the comments follow it.
        all.insert((4, commentBlock), at: min(1, all.count))
        var header = Array("fLaC".utf8)
        for (i, (type, body)) in all.enumerated() {
            header.append((i == all.count - 1 ? 0x80 : 0) | type)
            header += [UInt8(body.count >> 16 & 0xFF), UInt8(body.count >> 8 & 0xFF), UInt8(body.count & 0xFF)]
            header += body
        }
        let tmp = path + ".chapters"
        unlink(tmp)
        let output = FileSystem.createExclusive(tmp)
        guard output >= 0 else { throw AudioFileError(path: tmp, reason: "cannot create: \(FileSystem.createProblem(path: tmp, code: -output))") }
        // The audio frames, copied a megabyte at a time after the new metadata.
        var ok = writeAll(output, header)
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var offset = off_t(audioStart)
        while ok {
            let n = buffer.withUnsafeMutableBytes { pread(input, $0.baseAddress, $0.count, offset) }
            if n == 0 { break }
            ok = n > 0 && writeAll(output, buffer[0..<n])
            offset += off_t(max(n, 0))
        }
        ok = ok && fsync(output) == 0
        let code = errno
        close(output)
        guard ok, rename(tmp, path) == 0 else {
            unlink(tmp)
            throw AudioFileError(path: path, reason: "cannot add chapters: \(DurableFile.writeProblem(code))")
        }
    }

    private static func writeAll<C: ContiguousBytes>(_ fd: Int32, _ bytes: C) -> Bool {
        bytes.withUnsafeBytes { raw -> Bool in
            var done = 0
            while done < raw.count {
                let n = write(fd, raw.baseAddress! + done, raw.count - done)
                if n <= 0 { return false }
                done += n
            }
            return true
        }
    }

    /// The metadata blocks after `fLaC` in the file `fd` (each's type and body) and where the
    /// audio frames start; nil when a size runs past the file or the first block is not
    /// STREAMINFO.
    static func metadataBlocks(fd: Int32, fileSize: Int64) -> (blocks: [(type: UInt8, body: [UInt8])], audioStart: Int64)? {
        func read(_ count: Int, at offset: Int64) -> [UInt8]? {
            guard count >= 0, offset + Int64(count) <= fileSize else { return nil }
            var out = [UInt8](repeating: 0, count: count)
            let n = out.withUnsafeMutableBytes { pread(fd, $0.baseAddress, count, off_t(offset)) }
            return n == count ? out : nil
        }
        guard let magic = read(4, at: 0), magic.elementsEqual("fLaC".utf8) else { return nil }
        var at: Int64 = 4
        var blocks: [(type: UInt8, body: [UInt8])] = []
        while true {
            guard let h = read(4, at: at) else { return nil }
            let size = Int(h[1]) << 16 | Int(h[2]) << 8 | Int(h[3])
            guard let body = read(size, at: at + 4) else { return nil }
            blocks.append((h[0] & 0x7F, body))
            at += 4 + Int64(size)
            if h[0] & 0x80 != 0 { break }
        }
        return blocks.first?.type == 0 ? (blocks, at) : nil
    }

    /// A Vorbis comment block body: `existing`'s vendor and comments (minus any chapter
    /// entries: these replace them) and the chapters. A damaged `existing` is replaced.
    static func adding(_ chapters: [CuePoint], sampleRate: Int, extra: [(String, String)] = [], to existing: [UInt8]?) -> [UInt8] {
        var vendor = Array("Tapedeck".utf8)
        var comments: [[UInt8]] = []
        let replaced = Set(extra.map { $0.0.uppercased() + "=" })
        if let b = existing, let parsed = parse(b) {
            vendor = parsed.vendor
            comments = parsed.comments.filter { c in
                let text = String(decoding: c.prefix(64), as: UTF8.self).uppercased()
                return !text.hasPrefix("CHAPTER") && !replaced.contains(where: { text.hasPrefix($0) })
            }
        }
        for (key, value) in extra { comments.append(Array("\(key)=\(value)".utf8)) }
        for (i, c) in chapters.sorted(by: { $0.frame < $1.frame }).enumerated() {
            let number = String(format: "%03d", i + 1)
            comments.append(Array("CHAPTER\(number)=\(clock(c.frame, sampleRate: sampleRate))".utf8))
            comments.append(Array("CHAPTER\(number)NAME=".utf8) + FileCues.cut(c.name, capacity: 1000))
        }
        var out = le32(vendor.count) + vendor + le32(comments.count)
        for c in comments { out += le32(c.count) + c }
        return out
    }

    /// `HH:MM:SS.mmm` of `frame`, to the nearest millisecond.
    static func clock(_ frame: Int64, sampleRate: Int) -> String {
        let total = Int64((Double(frame) * 1000 / Double(max(sampleRate, 1))).rounded())
        return String(format: "%02lld:%02lld:%02lld.%03lld", total / 3_600_000, total / 60000 % 60, total / 1000 % 60, total % 1000)
    }

    /// A Vorbis comment body's vendor and comments, or nil when a length runs past it.
    static func parse(_ b: [UInt8]) -> (vendor: [UInt8], comments: [[UInt8]])? {
        var at = 0
        func u32() -> Int? {
            guard at + 4 <= b.count else { return nil }
            defer { at += 4 }
            return Int(b[at]) | Int(b[at + 1]) << 8 | Int(b[at + 2]) << 16 | Int(b[at + 3]) << 24
        }
        guard let vn = u32(), at + vn <= b.count else { return nil }
        let vendor = Array(b[at..<(at + vn)])
        at += vn
        guard let count = u32(), count <= b.count / 4 else { return nil }
        var comments: [[UInt8]] = []
        for _ in 0..<count {
            guard let n = u32(), at + n <= b.count else { return nil }
            comments.append(Array(b[at..<(at + n)]))
            at += n
        }
        return (vendor, comments)
    }

    private static func le32(_ v: Int) -> [UInt8] {
        [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 24 & 0xFF)]
    }
}
