import Foundation

/// A MIDI controller bound to something the mixer or a chain has (MIDI learn), saved in the
/// session: turning the knob moves the fader, pan, mute or node parameter it is bound to.
public struct MIDIBinding: Codable, Equatable, Sendable, CustomStringConvertible {
    /// What the controller moves.
    public enum Kind: String, Codable, Sendable, CaseIterable {
        /// A track's fader: value 0 is −∞, 100 is 0 dB, 127 is +4.2 dB (40·log10(v/100)).
        case fader
        /// A track's pan: 0 hard left, 64 centre, 127 hard right.
        case pan
        /// A track's mute: on at 64 and above (a button sending 127/0).
        case mute
        /// The master fader, as a track's.
        case master
        /// A parameter of a node in a track's chain, across its range (a frequency
        /// logarithmically, a choice by steps).
        case parameter
        /// The level of a strip's send to a bus (``bus``), as a fader's.
        case send
    }

    /// Controller number, 0…127.
    public var controller: Int
    /// MIDI channel 1…16; nil answers every channel.
    public var channel: Int?
    /// What it moves.
    public var kind: Kind
    /// The track, by name (any case), for every kind but `master`.
    public var track: String?
    /// For `parameter`: the node, 1-based, in the track's playback chain (or its input chain).
    public var node: Int?
    /// For `parameter`: the parameter's id (`cutoff`).
    public var parameter: String?
    /// For `parameter`: the node is in the input chain rather than the playback chain.
    public var inputChain: Bool?
    /// For `send`: the bus the send goes to (by name, any case).
    public var bus: String?

    /// Creates a binding.
    public init(controller: Int, channel: Int? = nil, kind: Kind, track: String? = nil, node: Int? = nil,
                parameter: String? = nil, inputChain: Bool? = nil, bus: String? = nil) {
        self.controller = controller
        self.channel = channel
        self.kind = kind
        self.track = track
        self.node = node
        self.parameter = parameter
        self.inputChain = inputChain
        self.bus = bus
    }

    /// `CC 7 (ch 1) → Vocal fader`, `CC 74 → Synth node 2 cutoff`.
    public var description: String {
        let source = "CC \(controller)" + (channel.map { " (ch \($0))" } ?? "")
        let place = track.map { "\($0.terminalSafe) " } ?? ""
        switch kind {
        case .master: return "\(source) → master fader"
        case .parameter:
            let chain = inputChain == true ? "input chain " : ""
            return "\(source) → \(place)\(chain)node \(node ?? 0) \((parameter ?? "?").terminalSafe)"
        case .send: return "\(source) → \(place)send to \((bus ?? "?").terminalSafe)"
        default: return "\(source) → \(place)\(kind.rawValue)"
        }
    }

    // MARK: - Values

    /// The fader (track or master) a controller value sets, in dB (the −∞ stop at 0).
    public static func faderDecibels(controllerValue v: Int) -> Double {
        guard v > 0 else { return Fader.silentDecibels }
        return min(40 * log10(Double(min(v, 127)) / 100), Fader.maximumDecibels)
    }

    /// The pan a controller value sets, −1…+1 (64 is the centre).
    public static func pan(controllerValue v: Int) -> Double {
        min(max(Double(min(max(v, 0), 127) - 64) / 63, -1), 1)
    }

    /// The mute a controller value sets.
    public static func mute(controllerValue v: Int) -> Bool { v >= 64 }

    /// The value of a parameter from `minimum` to `maximum` a controller value sets:
    /// linear, or logarithmic for a positive range spanning more than a decade (frequencies).
    public static func parameterValue(controllerValue v: Int, minimum: Double, maximum: Double, logarithmic: Bool,
                                      steps: Int? = nil) -> Double {
        let x = Double(min(max(v, 0), 127)) / 127
        if let steps, steps > 1 { return minimum + (Double(steps - 1) * x).rounded() }
        if logarithmic && minimum > 0 && maximum > minimum {
            return minimum * pow(maximum / minimum, x)
        }
        return minimum + (maximum - minimum) * x
    }
}

extension Session {
    /// The bindings that name `track` (any case).
    public func bindings(ofTrack name: String) -> [MIDIBinding] {
        midiBindings.filter { $0.track?.lowercased() == name.lowercased() }
    }

    /// Renames track `index`, carrying its MIDI bindings with it.
    public mutating func renameTrack(_ index: Int, to name: String) {
        guard tracks.indices.contains(index) else { return }
        let old = tracks[index].name.lowercased()
        tracks[index].name = name
        for i in midiBindings.indices where midiBindings[i].track?.lowercased() == old { midiBindings[i].track = name }
    }

    /// Adds `binding`, replacing any binding of the same controller and channel.
    public mutating func bind(_ binding: MIDIBinding) {
        midiBindings.removeAll { $0.controller == binding.controller && $0.channel == binding.channel }
        midiBindings.append(binding)
    }
}
