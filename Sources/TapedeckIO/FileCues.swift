import CSndfile
#if canImport(Glibc)
import Glibc
#endif

/// A named point in a file (a session marker inside an export): where other programs show
/// it (Ardour, Reaper, Audacity, sox-based tools; ffmpeg for FLAC).
public struct CuePoint: Equatable, Sendable {
    /// Frame in the file, from its first frame.
    public var frame: Int64
    /// The label shown for it.
    public var name: String

    /// A cue point at `frame` called `name`.
    public init(frame: Int64, name: String) {
        self.frame = frame
        self.name = name
    }
}

/// How cue points are stored, by container:
/// - WAV: a `cue ` chunk (libsndfile's ``SFC_SET_CUE``; at most 100 points, its fixed
///   `SF_CUES`) and a `LIST` chunk of type `adtl` holding one `labl` per point with its name.
///   libsndfile reads but never writes `labl`, so the `LIST` payload is built here and handed
///   to libsndfile as a chunk of its own (``sf_set_chunk``), which writes it in the header
///   with the right sizes: no bytes are patched into the file afterwards.
/// - FLAC: Vorbis comments `CHAPTER001=00:01:00.000` / `CHAPTER001NAME=Chorus` (the chapter
///   comment convention ffmpeg/ffprobe read as chapters), see ``FLACChapters``.
public enum FileCues {
    /// The most cue points libsndfile writes into a WAV's header (its `SF_CUES` has room for
    /// 100); an export with more gets its `cue ` and `adtl` chunks written here after the
    /// data once the file is closed (``TakeFilePatch/appendCues(path:cues:frameCount:limit:)``).
    public static let maximumWAVCues = 100
    /// The most an export's WAV holds: the `cue ` chunk's 32-bit size allows far more; this is
    /// the session's own marker limit.
    public static let maximumExportWAVCues = 10_000
    /// The most chapters a FLAC holds (three digits in `CHAPTERnnn`).
    public static let maximumFLACChapters = 999

    /// The `LIST` chunk's payload: `adtl`, then per point a `labl` subchunk (cue id, the name
    /// NUL-terminated, NUL-padded to an even size as RIFF wants), a multiple of four bytes in
    /// all. Ids are 1-based, as in ``sfCues(_:)``.
    static func adtlPayload(_ cues: [CuePoint]) -> [UInt8] {
        var out = Array("adtl".utf8)
        for (i, cue) in cues.enumerated() {
            // Names are cut to 255 bytes at a character boundary, as other fields are.
            var text = cut(cue.name, capacity: 255) + [0]
            if text.count % 2 == 1 { text.append(0) }
            // libsndfile stores a chunk of its own padded with zeros to a multiple of four and
            // counts them in the size; its reader (and others) would take two trailing zeros
            // for a broken subchunk and lose the data chunk after it. So the last label takes
            // the two bytes itself: NULs after a label's terminator are read as nothing.
            if i == cues.count - 1 && (out.count + 12 + text.count) % 4 != 0 { text += [0, 0] }
            out += Array("labl".utf8) + le32(UInt32(4 + text.count)) + le32(UInt32(i + 1)) + text
        }
        return out
    }

    /// libsndfile's cue table for `cues` (positions in frames; ids 1…n).
    static func sfCues(_ cues: [CuePoint]) -> SF_CUES {
        var table = SF_CUES()
        table.cue_count = UInt32(cues.count)
        // "data" as libsndfile writes a marker: the four bytes in file order.
        let data = Int32(bitPattern: UInt32(0x64) | UInt32(0x61) << 8 | UInt32(0x74) << 16 | UInt32(0x61) << 24)
        withUnsafeMutableBytes(of: &table.cue_points) { raw in
            let points = raw.bindMemory(to: SF_CUE_POINT.self)
            for (i, cue) in cues.enumerated() where i < points.count {
                points[i].indx = Int32(i + 1)
                points[i].position = UInt32(cue.frame)
                points[i].fcc_chunk = data
                points[i].chunk_start = 0
                points[i].block_start = 0
                points[i].sample_offset = UInt32(cue.frame)
                TakeMetadata.fill(&points[i].name, with: cue.name, capacity: 255)
            }
        }
        return table
    }

    /// The points a file can hold: inside `0..<frameCount` when known (a cue past the end
    /// points at nothing), in frame order, at most `limit`; and how many were left out.
    static func usable(_ cues: [CuePoint], frameCount: Int64?, limit: Int, maximumFrame: Int64) -> (kept: [CuePoint], dropped: Int) {
        let inside = cues.filter { $0.frame >= 0 && $0.frame <= maximumFrame && $0.frame < (frameCount ?? Int64.max) }
            .sorted { $0.frame < $1.frame }
        return (Array(inside.prefix(limit)), cues.count - min(inside.count, limit))
    }

    /// `text`'s UTF-8 without NULs (a label ends at its first), cut to `capacity` bytes at a
    /// character boundary.
    static func cut(_ text: String, capacity: Int) -> [UInt8] {
        var bytes = Array(text.utf8.filter { $0 != 0 })
        if bytes.count > capacity {
            var end = capacity
            while end > 0 && bytes[end] & 0xC0 == 0x80 { end -= 1 }
            bytes = Array(bytes[0..<end])
        }
        return bytes
    }

    private static func le32(_ v: UInt32) -> [UInt8] {
        [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 24)]
    }
}

extension AudioFileWriter {
    /// Stores `cues` in a fresh WAV's header (before the first write, as libsndfile wants);
    /// returns what could not be stored, or nil.
    func storeWAVCues(_ cues: [CuePoint], handle h: OpaquePointer, expectedFrameCount: Int64?) -> String? {
        // The cue chunk's positions are 32-bit: a point past 2^32 frames cannot be said.
        // An export (its length known) holds any number: past libsndfile's 100 they are
        // written after the data on close.
        let limit = expectedFrameCount == nil ? FileCues.maximumWAVCues : FileCues.maximumExportWAVCues
        let (kept, dropped) = FileCues.usable(cues, frameCount: expectedFrameCount, limit: limit, maximumFrame: Int64(UInt32.max))
        var problems: [String] = []
        if dropped > 0 { problems.append("\(dropped) marker\(dropped == 1 ? "" : "s") (a WAV holds \(limit) cue points before 2^32 frames)") }
        guard !kept.isEmpty else { return problems.first }
        if kept.count > FileCues.maximumWAVCues {
            appendedCues = kept
            return problems.first
        }
        var table = FileCues.sfCues(kept)
        if sf_command(h, Int32(SFC_SET_CUE), &table, Int32(MemoryLayout<SF_CUES>.size)) != SF_TRUE {
            problems.append("cue chunk")
        }
        let payload = FileCues.adtlPayload(kept)
        let bytes = UnsafeMutableRawPointer.allocate(byteCount: payload.count, alignment: 1)
        bytes.copyMemory(from: payload, byteCount: payload.count)
        chunkBuffers.append(bytes)
        var chunk = SF_CHUNK_INFO()
        TakeMetadata.setID(&chunk, "LIST")
        chunk.datalen = UInt32(payload.count)
        chunk.data = bytes
        if sf_set_chunk(h, &chunk) != 0 { problems.append("LIST/adtl labels") }
        return problems.isEmpty ? nil : problems.joined(separator: ", ")
    }
}
