import CSndfile
import Foundation

/// What a take says about itself, stored inside the audio file so a take found on its own
/// (copied out of the session, recovered after a crash) still tells where it belongs.
///
/// Where it goes, by container (every place carries the same `key=value` lines, see
/// ``text``):
/// - WAV/RF64: a BWF `bext` chunk (description = the lines, cut at 256 bytes; originator
///   `Tapedeck`; time reference = timeline frame; coding history = the format line), an
///   `iXML` chunk (standard PROJECT/TAKE/NOTE/SPEED/TRACK_LIST fields plus the full lines in
///   `USER`), and the LIST/INFO strings libsndfile writes for ``sf_set_string``.
/// - FLAC: Vorbis comments (TITLE, COMMENT = the lines, SOFTWARE, DATE).
///
/// libsndfile fixes the header when the first frame is written, so the writer stores this
/// in its `init`, before any frame (``AudioFileWriter/init(path:format:blockFrames:peakPath:expectedFrameCount:metadata:)``).
public struct TakeMetadata: Equatable, Sendable {
    /// Session name (the folder's name without `.tapedeck`), or empty for a plain file.
    public var session: String
    /// 1-based track number, when the take belongs to a track.
    public var trackNumber: Int?
    /// The track's name, when it has one.
    public var trackName: String
    /// Timeline frame where the take's audio (after latency compensation) belongs.
    public var timelineFrame: Int64
    /// Frames the take's input lagged what it was played against (the round trip of an
    /// overdub), by which it was placed earlier than it arrived.
    public var latencyFrames: Int64
    /// Where ``latencyFrames`` came from, in words (`356 frames = capture 0 + playback 356
    /// (JACK) + residual 0 + graph 0`); empty when nothing played.
    public var latencyParts: String
    /// Transport speed while recording (1 = normal).
    public var speed: Double
    /// The ALSA device it was recorded from.
    public var device: String
    /// Device input channels recorded, 1-based, in file order.
    public var deviceChannels: [Int]
    /// The track's input chain, in chain syntax (empty: none).
    public var inputChain: String
    /// When recording started, `YYYY-MM-DD HH:MM:SS` (local time), or empty.
    public var startedAt: String
    /// Take group (lane stack) and take number inside it, for loop takes.
    public var takeGroup: Int?
    /// Take number inside ``takeGroup``.
    public var takeNumber: Int?
    /// The `bext` time reference (and iXML timestamp) when it is not ``timelineFrame``: an
    /// export's place counted from the session's time-of-day origin, a take stamped with the
    /// wall clock (samples since midnight). Nil: the timeline frame.
    public var timeReference: Int64?

    /// Creates metadata; everything but the timeline position has a neutral default.
    public init(session: String = "", trackNumber: Int? = nil, trackName: String = "", timelineFrame: Int64 = 0,
                latencyFrames: Int64 = 0, speed: Double = 1, device: String = "", deviceChannels: [Int] = [],
                inputChain: String = "", startedAt: String = "", takeGroup: Int? = nil, takeNumber: Int? = nil,
                timeReference: Int64? = nil, latencyParts: String = "") {
        self.session = session
        self.trackNumber = trackNumber
        self.trackName = trackName
        self.timelineFrame = timelineFrame
        self.latencyFrames = latencyFrames
        self.latencyParts = latencyParts
        self.speed = speed
        self.device = device
        self.deviceChannels = deviceChannels
        self.inputChain = inputChain
        self.startedAt = startedAt
        self.takeGroup = takeGroup
        self.takeNumber = takeNumber
        self.timeReference = timeReference
    }

    /// A short title: `song, track 2 (Bass), take 3`.
    public var title: String {
        var parts: [String] = [session.isEmpty ? "Tapedeck take" : session]
        if let n = trackNumber { parts.append("track \(n)" + (trackName.isEmpty ? "" : " (\(trackName))")) }
        if let t = takeNumber { parts.append("take \(t)") }
        return parts.joined(separator: ", ")
    }

    // MARK: text form

    /// The fields as `key=value` lines, one per field, in a fixed order. Values have `\`,
    /// newline and carriage return escaped, so any chain or device name survives.
    public var text: String {
        var lines: [(String, String)] = [("session", session)]
        if let n = trackNumber { lines.append(("track", String(n))) }
        if !trackName.isEmpty { lines.append(("track_name", trackName)) }
        lines.append(("timeline_frame", String(timelineFrame)))
        if let r = timeReference { lines.append(("time_reference", String(r))) }
        if latencyFrames != 0 { lines.append(("latency_frames", String(latencyFrames))) }
        if !latencyParts.isEmpty { lines.append(("latency", latencyParts)) }
        lines.append(("speed", String(speed)))
        lines.append(("device", device))
        if !deviceChannels.isEmpty { lines.append(("channels", deviceChannels.map(String.init).joined(separator: ","))) }
        lines.append(("input_chain", inputChain))
        if !startedAt.isEmpty { lines.append(("started", startedAt)) }
        if let g = takeGroup { lines.append(("take_group", String(g))) }
        if let t = takeNumber { lines.append(("take", String(t))) }
        return lines.map { "\($0.0)=\(TakeMetadata.escape($0.1))" }.joined(separator: "\n")
    }

    /// Parses ``text``; unknown keys are ignored (a newer Tapedeck may add some), and nil
    /// comes back when the text is not Tapedeck's (no `timeline_frame` line).
    public init?(text: String) {
        var fields: [String: String] = [:]
        for line in text.split(whereSeparator: { $0 == "\n" || $0 == "\r" }) {
            guard let eq = line.firstIndex(of: "=") else { continue }
            let key = line[..<eq].trimmingCharacters(in: .whitespaces)
            fields[key] = TakeMetadata.unescape(String(line[line.index(after: eq)...]))
        }
        guard let frameText = fields["timeline_frame"], let frame = Int64(frameText) else { return nil }
        self.init(session: fields["session"] ?? "", trackNumber: fields["track"].flatMap { Int($0) },
                  trackName: fields["track_name"] ?? "", timelineFrame: frame,
                  latencyFrames: fields["latency_frames"].flatMap { Int64($0) } ?? 0,
                  speed: fields["speed"].flatMap { Double($0) } ?? 1, device: fields["device"] ?? "",
                  deviceChannels: (fields["channels"] ?? "").split(separator: ",").compactMap { Int($0) },
                  inputChain: fields["input_chain"] ?? "", startedAt: fields["started"] ?? "",
                  takeGroup: fields["take_group"].flatMap { Int($0) }, takeNumber: fields["take"].flatMap { Int($0) },
                  timeReference: fields["time_reference"].flatMap { Int64($0) }, latencyParts: fields["latency"] ?? "")
    }

    static func escape(_ s: String) -> String {
        var out = ""
        for c in s {
            switch c {
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            default: out.append(c)
            }
        }
        return out
    }

    static func unescape(_ s: String) -> String {
        var out = ""
        var escaped = false
        for c in s {
            if escaped {
                out.append(c == "n" ? "\n" : c == "r" ? "\r" : c)
                escaped = false
            } else if c == "\\" {
                escaped = true
            } else {
                out.append(c)
            }
        }
        return out
    }

    // MARK: iXML

    /// An iXML document (version 2.10 fields Tapedeck knows) carrying the same lines in `USER`.
    public func ixml(sampleRate: Int, channelCount: Int = 0) -> String {
        func x(_ s: String) -> String {
            var out = ""
            for c in s {
                switch c {
                case "&": out += "&amp;"
                case "<": out += "&lt;"
                case ">": out += "&gt;"
                case "\"": out += "&quot;"
                default: out.append(c)
                }
            }
            return out
        }
        let frame = UInt64(max(timeReference ?? timelineFrame, 0))
        // A take lists the device inputs it recorded; anything else (an export, a stem, a
        // render) every channel of the file, named for what it carries.
        let names: [String]
        if !deviceChannels.isEmpty {
            names = deviceChannels.map { trackName.isEmpty ? "input \($0)" : "\(trackName) in \($0)" }
        } else {
            let base = trackName.isEmpty ? (session.isEmpty ? "mix" : "\(session) mix") : trackName
            names = channelCount == 1 ? [base] : channelCount == 2 ? ["\(base) L", "\(base) R"]
                : (0..<max(0, channelCount)).map { "\(base) \($0 + 1)" }
        }
        var trackList = "<TRACK_LIST><TRACK_COUNT>\(names.count)</TRACK_COUNT>"
        for (i, name) in names.enumerated() {
            trackList += "<TRACK><CHANNEL_INDEX>\(i + 1)</CHANNEL_INDEX><INTERLEAVE_INDEX>\(i + 1)</INTERLEAVE_INDEX>"
                + "<NAME>\(x(name))</NAME></TRACK>"
        }
        trackList += "</TRACK_LIST>"
        return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<BWFXML><IXML_VERSION>2.10</IXML_VERSION>"
            + "<PROJECT>\(x(session))</PROJECT><TAPE>\(x(device))</TAPE>"
            + "<TAKE>\(takeNumber.map(String.init) ?? "1")</TAKE><NOTE>\(x(title))</NOTE>"
            + "<SPEED><NOTE>transport speed \(speed)</NOTE>"
            + "<TIMESTAMP_SAMPLE_RATE>\(sampleRate)</TIMESTAMP_SAMPLE_RATE>"
            + "<TIMESTAMP_SAMPLES_SINCE_MIDNIGHT_HI>\(frame >> 32)</TIMESTAMP_SAMPLES_SINCE_MIDNIGHT_HI>"
            + "<TIMESTAMP_SAMPLES_SINCE_MIDNIGHT_LO>\(frame & 0xFFFF_FFFF)</TIMESTAMP_SAMPLES_SINCE_MIDNIGHT_LO></SPEED>"
            + trackList + "<USER>\(x(text))</USER></BWFXML>\n"
    }

    /// The `USER` element's text of an iXML document, unescaped.
    static func userText(ofIXML xml: String) -> String? {
        guard let open = xml.range(of: "<USER>"), let close = xml.range(of: "</USER>", range: open.upperBound..<xml.endIndex) else { return nil }
        return String(xml[open.upperBound..<close.lowerBound])
            .replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
            .replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&amp;", with: "&")
    }

    // MARK: reading

    /// Reads the metadata Tapedeck stored in `path`: the iXML `USER` lines, else the Vorbis
    /// or INFO comment, else the `bext` description. Nil when the file has none (any
    /// other program's file); throws only when the file cannot be opened.
    public static func read(path: String) throws(AudioFileError) -> TakeMetadata? {
        let reader = try AudioFileReader(path: path, blockFrames: 16)
        return reader.metadata
    }
}

extension AudioFileReader {
    /// The take metadata stored in this file (see ``TakeMetadata/read(path:)``), or nil.
    public var metadata: TakeMetadata? {
        guard let h = sndfileHandle else { return nil }
        if let xml = TakeMetadata.chunkText(handle: h, id: "iXML"), let user = TakeMetadata.userText(ofIXML: xml),
           let m = TakeMetadata(text: user) {
            return m
        }
        if let comment = sf_get_string(h, Int32(SF_STR_COMMENT)), let m = TakeMetadata(text: String(cString: comment)) {
            return m
        }
        var bext = SF_BROADCAST_INFO()
        if sf_command(h, Int32(SFC_GET_BROADCAST_INFO), &bext, Int32(MemoryLayout<SF_BROADCAST_INFO>.size)) == SF_TRUE {
            let description = withUnsafeBytes(of: bext.description) { TakeMetadata.cString($0) }
            if var m = TakeMetadata(text: description) {
                // The description may have been cut at 256 bytes; the time reference is whole.
                // Clamped: a crafted reference over Int64.max would trap a plain conversion.
                let reference = Int64(clamping: UInt64(bext.time_reference_high) << 32 | UInt64(bext.time_reference_low))
                if m.timeReference == nil { m.timelineFrame = reference } else { m.timeReference = reference }
                return m
            }
        }
        return nil
    }
}

extension TakeMetadata {
    /// The text of the first chunk with `id` (WAV-family files), or nil.
    static func chunkText(handle h: OpaquePointer, id: String) -> String? {
        var query = SF_CHUNK_INFO()
        TakeMetadata.setID(&query, id)
        guard let it = sf_get_chunk_iterator(h, &query) else { return nil }
        var info = SF_CHUNK_INFO()
        guard sf_get_chunk_size(it, &info) == 0, info.datalen > 0, info.datalen < 1 << 20 else { return nil }
        var bytes = [UInt8](repeating: 0, count: Int(info.datalen))
        let ok = bytes.withUnsafeMutableBytes { raw -> Bool in
            info.data = raw.baseAddress
            return sf_get_chunk_data(it, &info) == 0
        }
        guard ok else { return nil }
        let count = min(bytes.count, Int(info.datalen))
        return bytes.withUnsafeBytes { cString(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
    }

    /// Sets a chunk query's four-character id.
    static func setID(_ info: inout SF_CHUNK_INFO, _ id: String) {
        let bytes = Array(id.utf8.prefix(63))
        withUnsafeMutableBytes(of: &info.id) { raw in
            for (i, b) in bytes.enumerated() { raw[i] = b }
            raw[bytes.count] = 0
        }
        info.id_size = UInt32(bytes.count)
    }

    /// Text up to the first NUL of a fixed-size C field (valid UTF-8 or repaired).
    static func cString(_ raw: UnsafeRawBufferPointer) -> String {
        let end = raw.firstIndex(of: 0) ?? raw.count
        return String(decoding: raw[0..<end], as: UTF8.self)
    }

    /// Copies `text` into a fixed-size C field, cut at a UTF-8 character boundary so the
    /// field stays valid text, and NUL-padded when shorter.
    static func fill<T>(_ field: inout T, with text: String, capacity: Int) {
        var bytes = Array(text.utf8)
        if bytes.count > capacity {
            var cut = capacity
            // Back off over continuation bytes (10xxxxxx) to the start of a character.
            while cut > 0 && bytes[cut] & 0xC0 == 0x80 { cut -= 1 }
            bytes = Array(bytes[0..<cut])
        }
        withUnsafeMutableBytes(of: &field) { raw in
            for i in 0..<raw.count { raw[i] = i < bytes.count ? bytes[i] : 0 }
        }
    }
}

extension AudioFileReader {
    /// The `bext` chunk's time reference (samples since midnight, or since a session's
    /// origin, at the file's own rate), or nil when the file has none. libsndfile checks the
    /// chunk's size when it reads it; a reference above 2^62 (no recorder writes one: that is
    /// millions of years) is taken as damage and ignored.
    public var bextTimeReference: Int64? {
        guard let h = sndfileHandle else { return nil }
        var bext = SF_BROADCAST_INFO()
        guard sf_command(h, Int32(SFC_GET_BROADCAST_INFO), &bext, Int32(MemoryLayout<SF_BROADCAST_INFO>.size)) == SF_TRUE else { return nil }
        let reference = UInt64(bext.time_reference_high) << 32 | UInt64(bext.time_reference_low)
        return reference < 1 << 62 ? Int64(reference) : nil
    }
}
