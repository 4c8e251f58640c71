import Foundation

/// How a file of more than two channels is heard on a track (tracks are mono or stereo):
/// every channel goes to the left and right at a stated gain, so none is silently dropped
/// except one the downmix says it drops (the LFE, as ITU-R BS.775 leaves it out).
///
/// - A file that names its channels' positions is folded the BS.775 way: L = L + 0.707·C +
///   0.707·Ls, R = R + 0.707·C + 0.707·Rs (−3 dB for the centre and each surround), LFE
///   dropped; a rear centre goes to both sides at 0.5 (−6 dB), the channels between front
///   left (right) and centre to their side at unity, height channels to their side at
///   0.707 (centred ones to both at 0.5), a mono channel to both at 0.707.
/// - A file that names none (plain WAV, FLAC, Ogg), or names ambisonic components, which
///   have no speaker place: channels 1, 3, 5, … go to the left and 2, 4, 6, … to the right,
///   each at −3 dB.
public struct StereoDownmix: Sendable, Equatable {
    /// Which rule made the gains.
    public enum Rule: Sendable, Equatable {
        /// ITU-R BS.775 from the file's channel positions.
        case bs775
        /// No speaker layout: channels alternately left and right.
        case alternating
    }

    /// −3 dB, the gain of the centre and the surrounds (and of every channel when alternating).
    public static let minus3dB: Float = 0.707_106_77
    /// −6 dB, a rear or height centre into each side.
    public static let minus6dB: Float = 0.5

    /// The file's channels.
    public let layout: ChannelLayout
    /// The rule used.
    public let rule: Rule
    /// Per channel of the file, its gain into the left.
    public let leftGains: [Float]
    /// Per channel of the file, its gain into the right.
    public let rightGains: [Float]

    /// The downmix of a file laid out as `layout`.
    public init(layout: ChannelLayout) {
        self.layout = layout
        let speakerPlaces = layout.positions.flatMap { positions in
            positions.allSatisfy { $0.pan != nil } ? positions : nil
        }
        if let positions = speakerPlaces {
            rule = .bs775
            let gains = positions.map(StereoDownmix.bs775)
            leftGains = gains.map(\.left)
            rightGains = gains.map(\.right)
        } else {
            rule = .alternating
            leftGains = (0..<layout.channelCount).map { $0 % 2 == 0 ? StereoDownmix.minus3dB : 0 }
            rightGains = (0..<layout.channelCount).map { $0 % 2 == 1 ? StereoDownmix.minus3dB : 0 }
        }
    }

    /// The channels that reach neither side (by name).
    public var droppedChannels: [String] {
        layout.names.indices.filter { leftGains[$0] == 0 && rightGains[$0] == 0 }.map { layout.names[$0] }
    }

    /// One line for the user: the rule and every gain, e.g. `ITU-R BS.775: L = L + 0.707·C +
    /// 0.707·Ls, R = R + 0.707·C + 0.707·Rs; LFE dropped`, or `no channel layout in the file:
    /// channels 1 3 5 → L, 2 4 6 → R, each at −3 dB`.
    public var description: String {
        switch rule {
        case .bs775:
            let dropped = droppedChannels
            return "ITU-R BS.775: L = \(sum(leftGains)), R = \(sum(rightGains))"
                + (dropped.isEmpty ? "" : "; \(dropped.joined(separator: ", ")) dropped")
        case .alternating:
            let odd = stride(from: 1, through: layout.channelCount, by: 2).map(String.init).joined(separator: " ")
            let even = stride(from: 2, through: layout.channelCount, by: 2).map(String.init).joined(separator: " ")
            let why = layout.positions == nil ? "no channel layout in the file" : "no speaker layout (\(layout.summary))"
            return "\(why): channels \(odd) → L, \(even) → R, each at −3 dB"
        }
    }

    /// `L + 0.707·C + 0.707·Ls` for one side's gains.
    private func sum(_ gains: [Float]) -> String {
        let terms = gains.indices.compactMap { i -> String? in
            let g = gains[i]
            guard g != 0 else { return nil }
            return g == 1 ? layout.names[i] : String(format: "%.3g", Double(g)) + "·" + layout.names[i]
        }
        return terms.isEmpty ? "silence" : terms.joined(separator: " + ")
    }

    /// A position's gains into left and right (see the type's description).
    private static func bs775(_ p: ChannelPosition) -> (left: Float, right: Float) {
        switch p {
        case .left, .frontLeft, .frontLeftOfCenter: (1, 0)
        case .right, .frontRight, .frontRightOfCenter: (0, 1)
        case .center, .frontCenter, .mono: (minus3dB, minus3dB)
        case .lfe: (0, 0)
        case .rearLeft, .sideLeft, .topFrontLeft, .topRearLeft: (minus3dB, 0)
        case .rearRight, .sideRight, .topFrontRight, .topRearRight: (0, minus3dB)
        case .rearCenter, .topCenter, .topFrontCenter, .topRearCenter: (minus6dB, minus6dB)
        case .ambisonicW, .ambisonicX, .ambisonicY, .ambisonicZ: (0, 0)
        }
    }
}
