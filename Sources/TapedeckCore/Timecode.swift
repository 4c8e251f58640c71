/// A session's timecode rate: the frame rates Ardour's session offers, Ardour's default 30.
/// Surfaces speak the playhead in it (OSC `/position/smpte`, the Mackie time display).
public enum TimecodeRate: String, CaseIterable, Sendable {
    /// 24000/1001 frames a second, counted as 24 (film pulled down).
    case fps23_976 = "23.976"
    /// 24 frames a second.
    case fps24 = "24"
    /// 25000/1001 frames a second, counted as 25.
    case fps24_975 = "24.975"
    /// 25 frames a second (PAL).
    case fps25 = "25"
    /// 30000/1001 frames a second, counted as 30, no frame numbers skipped.
    case fps29_97 = "29.97"
    /// 30000/1001 frames a second, counted with SMPTE drop-frame numbering.
    case fps29_97Drop = "29.97df"
    /// 30 frames a second (Ardour's default).
    case fps30 = "30"
    /// 30 frames a second with drop-frame numbering (Ardour's "30 drop").
    case fps30Drop = "30df"
    /// 60000/1001 frames a second, counted as 60.
    case fps59_94 = "59.94"
    /// 60 frames a second.
    case fps60 = "60"

    /// The rate of a session that never chose one: Ardour's default.
    public static let standard = TimecodeRate.fps30

    /// Every rate's name, for a message that refuses anything else.
    public static var namesText: String { allCases.map(\.rawValue).joined(separator: ", ") }

    /// Reads a rate as Tapedeck writes it (`29.97df`) or as Ardour's UI does (`29.97 drop`,
    /// `23.98`, `24.98`); nil for anything else.
    public init?(text: String) {
        let t = text.trimmingWhitespace().lowercased()
        if let rate = TimecodeRate(rawValue: t) {
            self = rate
            return
        }
        switch t {
        case "23.98": self = .fps23_976
        case "24.98", "24.976": self = .fps24_975
        case "29.97 drop", "29.97drop", "29.97 df": self = .fps29_97Drop
        case "30 drop", "30drop", "30 df": self = .fps30Drop
        default: return nil
        }
    }

    /// Frames a real second, as a fraction (`30000/1001` at 29.97).
    public var framesPerSecond: (numerator: Int64, denominator: Int64) {
        switch self {
        case .fps23_976: (24000, 1001)
        case .fps24: (24, 1)
        case .fps24_975: (25000, 1001)
        case .fps25: (25, 1)
        case .fps29_97, .fps29_97Drop: (30000, 1001)
        case .fps30, .fps30Drop: (30, 1)
        case .fps59_94: (60000, 1001)
        case .fps60: (60, 1)
        }
    }

    /// Frames a timecode second counts (the `FF` field runs 0 up to this less one).
    public var nominalFramesPerSecond: Int64 {
        switch self {
        case .fps23_976, .fps24: 24
        case .fps24_975, .fps25: 25
        case .fps29_97, .fps29_97Drop, .fps30, .fps30Drop: 30
        case .fps59_94, .fps60: 60
        }
    }

    /// Whether frame numbers 0 and 1 of each minute but every tenth are skipped.
    public var isDropFrame: Bool { self == .fps29_97Drop || self == .fps30Drop }
}

extension TimecodeRate: Codable {
    /// Decodes a rate by name (Ardour's spellings too); anything else is refused with the
    /// names it may be.
    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let rate = TimecodeRate(text: text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath,
                                                    debugDescription: "'\(text)' is not a timecode rate (\(TimecodeRate.namesText))"))
        }
        self = rate
    }

    /// Encodes the rate's name.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(rawValue)
    }
}

/// A position as timecode, `HH:MM:SS:FF`: one conversion from timeline frames for every
/// place that shows one (OSC `/position/smpte`, the Mackie time display).
public struct Timecode: Equatable, Sendable {
    /// Hours, not wrapped at 24 (Ardour does not wrap them either).
    public var hours: Int64
    /// Minutes, 0–59.
    public var minutes: Int64
    /// Seconds, 0–59.
    public var seconds: Int64
    /// Frames within the second, 0 up to the rate's nominal frames less one.
    public var frames: Int64

    /// Creates a timecode from its fields.
    public init(hours: Int64, minutes: Int64, seconds: Int64, frames: Int64) {
        self.hours = hours
        self.minutes = minutes
        self.seconds = seconds
        self.frames = frames
    }

    /// The timecode of timeline `frame` at `sampleRate`, counted at `rate` (a frame before 0
    /// is 0). A timecode frame starts at the sample it falls on or before, as Ardour's
    /// `sample_to_timecode` floors; exact in whole numbers, so no drift at any length.
    public init(frame: Int64, sampleRate: Int, rate: TimecodeRate) {
        let (num, den) = rate.framesPerSecond
        let perSecond = Int64(max(sampleRate, 1)) * den
        // Split before multiplying, so a long session's frame count cannot overflow.
        let f = max(0, frame)
        var count = (f / perSecond) * num + (f % perSecond) * num / perSecond
        let nominal = rate.nominalFramesPerSecond
        if rate.isDropFrame {
            // SMPTE drop-frame (Ardour's arithmetic): 17982 frames in ten minutes; the first
            // minute of each ten has all 1800 numbers, the other nine skip 00 and 01.
            let tens = count / 17982, within = count % 17982
            count += 18 * tens + (within < 2 ? 0 : 2 * ((within - 2) / 1798))
        }
        frames = count % nominal
        seconds = count / nominal % 60
        minutes = count / nominal / 60 % 60
        hours = count / nominal / 3600
    }

    /// `HH:MM:SS:FF`, as Ardour sends `/position/smpte` (a colon before the frames even at a
    /// drop-frame rate).
    public var text: String {
        func two(_ v: Int64) -> String { v < 10 ? "0\(v)" : "\(v)" }
        return "\(two(hours)):\(two(minutes)):\(two(seconds)):\(two(frames))"
    }
}
