import CSndfile

/// Where one channel of a file is meant to be heard, as libsndfile reports a file's channel
/// map (`SFC_GET_CHANNEL_MAP_INFO`: the channel mask of WAVE_FORMAT_EXTENSIBLE and RF64, the
/// layout tags of CAF and AIFF). The raw values are libsndfile's `SF_CHANNEL_MAP_*`.
public enum ChannelPosition: Int32, Sendable, CaseIterable {
    /// A mono channel within a wider file.
    case mono = 1
    /// Left (Apple's name; WAVEX says front left).
    case left, right, center
    /// Front left, right and centre (WAVEX's names for the same places).
    case frontLeft, frontRight, frontCenter
    /// Rear (back) centre, left and right: the surrounds of 5.1 as WAVEX and libsndfile write it.
    case rearCenter, rearLeft, rearRight
    /// Low-frequency effects.
    case lfe
    /// Between front left (right) and centre.
    case frontLeftOfCenter, frontRightOfCenter
    /// Side left and right: the surrounds of 5.1 "side" and of 7.1.
    case sideLeft, sideRight
    /// Height channels.
    case topCenter, topFrontLeft, topFrontRight, topFrontCenter, topRearLeft, topRearRight, topRearCenter
    /// First-order ambisonic B-format components.
    case ambisonicW, ambisonicX, ambisonicY, ambisonicZ

    /// Which way it sits: −1 left, 0 centre, +1 right, nil for a component that has no one
    /// place (ambisonics). Used to pan the mono tracks an import makes.
    public var pan: Double? {
        switch self {
        case .left, .frontLeft, .rearLeft, .sideLeft, .topFrontLeft, .topRearLeft: -1
        case .right, .frontRight, .rearRight, .sideRight, .topFrontRight, .topRearRight: 1
        case .frontLeftOfCenter: -0.5
        case .frontRightOfCenter: 0.5
        case .mono, .center, .frontCenter, .rearCenter, .lfe, .topCenter, .topFrontCenter, .topRearCenter: 0
        case .ambisonicW, .ambisonicX, .ambisonicY, .ambisonicZ: nil
        }
    }
}

/// A file's channels and what each is: its positions when the file states them, and a short
/// name for each ("L", "R", "C", "LFE", "Ls", "Rs", …; "1", "2", … when it states none).
public struct ChannelLayout: Sendable, Equatable {
    /// Channels in the file.
    public let channelCount: Int
    /// Each channel's position, or nil when the file names none (plain WAV, FLAC, Ogg).
    public let positions: [ChannelPosition]?
    /// A short, distinct name per channel.
    public let names: [String]

    /// The layout of `channelCount` channels at `positions` (ignored unless there is one per
    /// channel).
    public init(channelCount: Int, positions: [ChannelPosition]?) {
        self.channelCount = max(0, channelCount)
        let known = positions.flatMap { $0.count == channelCount && channelCount > 0 ? $0 : nil }
        self.positions = known
        names = known.map(ChannelLayout.names(for:)) ?? (0..<max(0, channelCount)).map { String($0 + 1) }
    }

    /// The names with spaces between: `L R C LFE Ls Rs`.
    public var summary: String { names.joined(separator: " ") }

    /// Names for `positions`. The surrounds are "Ls"/"Rs" whether the file calls them rear
    /// or side (5.1 is written both ways); a file with both (7.1) gets "Lss"/"Rss" for the side
    /// pair and "Lrs"/"Rrs" for the rear one, as cinema layouts name them. A name that still
    /// repeats gets its channel number (`L`, `L4`).
    static func names(for positions: [ChannelPosition]) -> [String] {
        let set = Set(positions)
        let hasRear = set.contains(.rearLeft) || set.contains(.rearRight)
        let hasSide = set.contains(.sideLeft) || set.contains(.sideRight)
        let both = hasRear && hasSide
        let base: [String] = positions.map { p in
            switch p {
            case .mono: "M"
            case .left, .frontLeft: "L"
            case .right, .frontRight: "R"
            case .center, .frontCenter: "C"
            case .lfe: "LFE"
            case .rearLeft: both ? "Lrs" : "Ls"
            case .rearRight: both ? "Rrs" : "Rs"
            case .sideLeft: both ? "Lss" : "Ls"
            case .sideRight: both ? "Rss" : "Rs"
            case .rearCenter: "Cs"
            case .frontLeftOfCenter: "Lc"
            case .frontRightOfCenter: "Rc"
            case .topCenter: "Tc"
            case .topFrontLeft: "Tfl"
            case .topFrontRight: "Tfr"
            case .topFrontCenter: "Tfc"
            case .topRearLeft: "Trl"
            case .topRearRight: "Trr"
            case .topRearCenter: "Trc"
            case .ambisonicW: "W"
            case .ambisonicX: "X"
            case .ambisonicY: "Y"
            case .ambisonicZ: "Z"
            }
        }
        var seen: [String: Int] = [:]
        for n in base { seen[n, default: 0] += 1 }
        var taken = Set<String>()
        return base.enumerated().map { i, n in
            // The first of a repeated name keeps it; the others are told apart by channel.
            if seen[n] == 1 || !taken.contains(n) { taken.insert(n); return n }
            return "\(n)\(i + 1)"
        }
    }
}

extension AudioFileReader {
    /// The positions libsndfile reports for a file's channels, or nil when it reports none
    /// or any value it reports is not a position. Asked only of files wider than stereo: a
    /// mono or stereo file needs no map, and a damaged CAF's map can be shorter than its
    /// channels (libsndfile then copies past it), so the question is not asked needlessly.
    static func channelPositions(handle h: OpaquePointer, channelCount: Int) -> [ChannelPosition]? {
        guard channelCount > 2 else { return nil }
        var map = [Int32](repeating: 0, count: channelCount)
        let ok = map.withUnsafeMutableBytes { bytes in
            sf_command(h, Int32(SFC_GET_CHANNEL_MAP_INFO), bytes.baseAddress, Int32(bytes.count))
        }
        guard ok == SF_TRUE else { return nil }
        let positions = map.compactMap(ChannelPosition.init(rawValue:))
        return positions.count == channelCount ? positions : nil
    }
}
