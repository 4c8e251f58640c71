import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The ID3v2.4 tag at the front of an exported MP3: title, artist, album and date as UTF-8
/// text frames, and chapters as podcast apps read them (the ID3v2 Chapter Frame Addendum:
/// one `CTOC` table of contents, top level and ordered, listing one `CHAP` frame per chapter,
/// each with its start and end in milliseconds and a `TIT2` sub-frame naming it).
///
/// Written here, not by a library: libsndfile hands LAME only its Latin-1 title, artist and
/// album, LAME's id3tag API has no chapter frames, and TagLib's chapter frames are C++ only.
/// Once libsndfile has closed the file, any ID3v2 tag LAME put at the front is replaced by
/// this one and the MPEG frames are copied after it as they are, into a file beside it that
/// is renamed over it, so a failure leaves the file libsndfile wrote.
public enum ID3Tag {
    /// A `CTOC` lists at most 255 children (its entry count is one byte).
    public static let maximumChapters = 255

    /// Replaces the tag of the MP3 at `path` (`frameCount` frames at `sampleRate` long).
    public static func rewrite(path: String, tags: FileTags, chapters: [CuePoint], sampleRate: Int,
                               frameCount: Int64) throws(AudioFileError) {
        guard let file = FileManager.default.contents(atPath: path) else {
            throw AudioFileError(path: path, reason: "cannot read the MP3 back to write its tag")
        }
        let bytes = [UInt8](file)
        let audioStart = existingTagSize(bytes)
        let lengthMs = UInt32(clamping: Int64((Double(frameCount) * 1000 / Double(max(sampleRate, 1))).rounded()))
        let tag = build(tags: tags, chapters: chapters, sampleRate: sampleRate, lengthMs: lengthMs)
        try ChapterRewrite.replace(path: path, with: tag + bytes[audioStart...])
    }

    /// Bytes of the ID3v2 tag(s) at the front of `bytes` (0 when there is none).
    static func existingTagSize(_ bytes: [UInt8]) -> Int {
        var at = 0
        while at + 10 <= bytes.count, bytes[at] == 0x49, bytes[at + 1] == 0x44, bytes[at + 2] == 0x33 {
            let size = bytes[(at + 6)..<(at + 10)].reduce(0) { $0 << 7 | Int($1 & 0x7F) }
            let footer = bytes[at + 5] & 0x10 != 0 ? 10 : 0
            guard at + 10 + size + footer <= bytes.count else { break }
            at += 10 + size + footer
        }
        return at
    }

    /// The whole tag: header and frames.
    static func build(tags: FileTags, chapters: [CuePoint], sampleRate: Int, lengthMs: UInt32) -> [UInt8] {
        var frames: [UInt8] = []
        for (id, value) in [("TIT2", tags.title), ("TPE1", tags.artist), ("TALB", tags.album), ("TDRC", tags.date),
                            ("TSSE", "Tapedeck")] {
            if let value, !value.isEmpty { frames += frame(id, text(value)) }
        }
        let sorted = Array(chapters.sorted { $0.frame < $1.frame }.prefix(maximumChapters))
        if !sorted.isEmpty {
            let ids = sorted.indices.map { "chp\($0)" }
            // Table of contents: top-level (bit 1) and ordered (bit 0).
            var toc = Array("toc".utf8) + [0, 0x03, UInt8(sorted.count)]
            for id in ids { toc += Array(id.utf8) + [0] }
            frames += frame("CTOC", toc)
            let rate = Double(max(sampleRate, 1))
            for (i, c) in sorted.enumerated() {
                let start = UInt32(clamping: Int64((Double(c.frame) * 1000 / rate).rounded()))
                let end = i + 1 < sorted.count ? UInt32(clamping: Int64((Double(sorted[i + 1].frame) * 1000 / rate).rounded())) : max(lengthMs, start)
                // Byte offsets unused: 0xFFFFFFFF, as the addendum says.
                var body = Array(ids[i].utf8) + [0] + be32(start) + be32(end) + be32(.max) + be32(.max)
                body += frame("TIT2", text(c.name.isEmpty ? "Chapter \(i + 1)" : c.name))
                frames += frame("CHAP", body)
            }
        }
        return Array("ID3".utf8) + [4, 0, 0] + syncsafe(frames.count) + frames
    }

    /// A text frame's body: UTF-8 (encoding 3), no terminator.
    static func text(_ s: String) -> [UInt8] { [3] + FileCues.cut(s, capacity: 4000) }

    /// An ID3v2.4 frame: id, syncsafe size, no flags, body.
    static func frame(_ id: String, _ body: [UInt8]) -> [UInt8] {
        Array(id.utf8) + syncsafe(body.count) + [0, 0] + body
    }

    static func syncsafe(_ n: Int) -> [UInt8] {
        [UInt8(n >> 21 & 0x7F), UInt8(n >> 14 & 0x7F), UInt8(n >> 7 & 0x7F), UInt8(n & 0x7F)]
    }

    static func be32(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
}

/// Writing a finished file anew beside itself and renaming it into place.
enum ChapterRewrite {
    /// Replaces the file at `path` with `bytes`: written to `path.chapters`, synced, renamed.
    static func replace<C: Collection>(path: String, with bytes: C) throws(AudioFileError) where C.Element == UInt8 {
        let tmp = path + ".chapters"
        unlink(tmp)
        let fd = FileSystem.createExclusive(tmp)
        guard fd >= 0 else { throw AudioFileError(path: tmp, reason: "cannot create: \(FileSystem.createProblem(path: tmp, code: -fd))") }
        let all = Array(bytes)
        var done = 0
        var ok = true
        all.withUnsafeBytes { raw in
            while done < raw.count {
                let n = write(fd, raw.baseAddress! + done, raw.count - done)
                if n <= 0 { ok = false; return }
                done += n
            }
        }
        ok = ok && fsync(fd) == 0
        let code = errno
        close(fd)
        guard ok, rename(tmp, path) == 0 else {
            unlink(tmp)
            throw AudioFileError(path: path, reason: "cannot add its tag and chapters: \(DurableFile.writeProblem(code))")
        }
    }
}
