import Foundation

/// Chapter comments in a finished Ogg Opus file: `CHAPTER001=00:01:00.000` and
/// `CHAPTER001NAME=Intro` in its `OpusTags` packet, the Vorbis-comment convention ffmpeg
/// and the podcast players built on it read as chapters (as in FLAC, ``FLACChapters``).
///
/// libsndfile writes only its fixed comment set (title, artist, album, …), so once it has
/// closed the file the `OpusTags` packet is rebuilt here with the chapters added: its Ogg
/// pages are laid out anew (255 lacing values a page), the audio pages after them are
/// copied with their sequence numbers moved on by as many pages as the tags gained and their
/// CRC computed again, and the file is written beside itself and renamed into place.
public enum OpusChapters {
    /// Adds `chapters` (frames at `sampleRate`) to the Ogg Opus file at `path`.
    public static func add(_ chapters: [CuePoint], sampleRate: Int, toFileAt path: String) throws(AudioFileError) {
        guard !chapters.isEmpty else { return }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw AudioFileError(path: path, reason: "cannot read the Opus file back to add its chapters")
        }
        guard let out = rewritten([UInt8](data), chapters: chapters, sampleRate: sampleRate) else {
            throw AudioFileError(path: path, reason: "cannot add chapters: the Ogg pages are not as libsndfile writes them")
        }
        try ChapterRewrite.replace(path: path, with: out)
    }

    /// One page: where its header and body lie.
    struct Page {
        var offset: Int
        var headerLength: Int
        var bodyLength: Int
        var lacing: ArraySlice<UInt8>
    }

    /// The pages of `bytes`, or nil where one runs past the end or lacks its capture pattern.
    static func pages(_ bytes: [UInt8]) -> [Page]? {
        var out: [Page] = []
        var at = 0
        while at < bytes.count {
            guard at + 27 <= bytes.count, bytes[at..<(at + 4)].elementsEqual("OggS".utf8) else { return nil }
            let n = Int(bytes[at + 26])
            guard at + 27 + n <= bytes.count else { return nil }
            let lacing = bytes[(at + 27)..<(at + 27 + n)]
            let body = lacing.reduce(0) { $0 + Int($1) }
            guard at + 27 + n + body <= bytes.count else { return nil }
            out.append(Page(offset: at, headerLength: 27 + n, bodyLength: body, lacing: lacing))
            at += 27 + n + body
        }
        return out
    }

    /// The file with the chapters in its tags, or nil when it is not one stream of OpusHead,
    /// OpusTags and audio.
    static func rewritten(_ bytes: [UInt8], chapters: [CuePoint], sampleRate: Int) -> [UInt8]? {
        guard let pages = pages(bytes), pages.count >= 2 else { return nil }
        let serial = Array(bytes[(pages[0].offset + 14)..<(pages[0].offset + 18)])
        // The tags packet: from page 1 until a lacing value under 255 ends it.
        var packet: [UInt8] = []
        var tagPages = 0
        var ended = false
        for page in pages.dropFirst() where !ended {
            tagPages += 1
            let body = page.offset + page.headerLength
            packet += bytes[body..<(body + page.bodyLength)]
            ended = page.lacing.last.map { $0 < 255 } ?? false
        }
        guard ended, packet.count >= 8, packet[0..<8].elementsEqual("OpusTags".utf8),
              let parsed = FLACChapters.parse(Array(packet[8...])) else { return nil }
        var comments = parsed.comments.filter { !String(decoding: $0.prefix(7), as: UTF8.self).uppercased().hasPrefix("CHAPTER") }
        for (i, c) in chapters.sorted(by: { $0.frame < $1.frame }).prefix(FileCues.maximumFLACChapters).enumerated() {
            let number = String(format: "%03d", i + 1)
            comments.append(Array("CHAPTER\(number)=\(FLACChapters.clock(c.frame, sampleRate: sampleRate))".utf8))
            comments.append(Array("CHAPTER\(number)NAME=".utf8) + FileCues.cut(c.name, capacity: 1000))
        }
        var tags = Array("OpusTags".utf8) + le32(parsed.vendor.count) + parsed.vendor + le32(comments.count)
        for c in comments { tags += le32(c.count) + c }

        // The new tags pages: 255 lacing values each; the last value under 255 ends the packet.
        var lacing = [UInt8](repeating: 255, count: tags.count / 255) + [UInt8(tags.count % 255)]
        var out = Array(bytes[0..<(pages[0].offset + pages[0].headerLength + pages[0].bodyLength)])
        var sequence: UInt32 = 1
        var bodyAt = 0
        var first = true
        while !lacing.isEmpty {
            let take = Array(lacing.prefix(255))
            lacing.removeFirst(take.count)
            let size = take.reduce(0) { $0 + Int($1) }
            // A page on which no packet ends has granule position −1.
            let granule: [UInt8] = lacing.isEmpty ? [UInt8](repeating: 0, count: 8) : [UInt8](repeating: 0xFF, count: 8)
            var page = Array("OggS".utf8) + [0, first ? 0 : 1] + granule + serial + le32(Int(sequence)) + [0, 0, 0, 0]
            page += [UInt8(take.count)] + take + tags[bodyAt..<(bodyAt + size)]
            setChecksum(&page, at: 0)
            out += page
            bodyAt += size
            sequence += 1
            first = false
        }
        // The audio pages, renumbered after the tags.
        let shift = Int64(sequence) - Int64(1 + tagPages)
        for page in pages.dropFirst(1 + tagPages) {
            var p = Array(bytes[page.offset..<(page.offset + page.headerLength + page.bodyLength)])
            if shift != 0 {
                let old = Int64(p[18]) | Int64(p[19]) << 8 | Int64(p[20]) << 16 | Int64(p[21]) << 24
                let new = le32(Int(old + shift))
                for k in 0..<4 { p[18 + k] = new[k] }
                setChecksum(&p, at: 0)
            }
            out += p
        }
        return out
    }

    /// Ogg's CRC-32 (polynomial 0x04C11DB7, not reflected, no final XOR) over a page with
    /// its checksum field zeroed, stored in that field.
    static func setChecksum(_ page: inout [UInt8], at offset: Int) {
        for k in 0..<4 { page[offset + 22 + k] = 0 }
        var crc: UInt32 = 0
        for b in page {
            crc = crc << 8 ^ table[Int((crc >> 24) ^ UInt32(b))]
        }
        for k in 0..<4 { page[offset + 22 + k] = UInt8(crc >> (8 * UInt32(k)) & 0xFF) }
    }

    static let table: [UInt32] = (0..<256).map { i -> UInt32 in
        var r = UInt32(i) << 24
        for _ in 0..<8 { r = r & 0x8000_0000 != 0 ? r << 1 ^ 0x04C1_1DB7 : r << 1 }
        return r
    }

    private static func le32(_ v: Int) -> [UInt8] {
        [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 24 & 0xFF)]
    }
}
