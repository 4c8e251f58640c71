import TapedeckCore
/// The catalogue of node types: looks them up by name and describes them for `tapedeck nodes`.
public struct NodeRegistry: Sendable {
    /// The registered node types, in listing order.
    public let types: [any Node.Type]

    /// A registry of `types`; names must be unique.
    public init(types: [any Node.Type]) {
        self.types = types
    }

    /// Every built-in node: effects, then generators, the instrument and the music effect.
    public static let builtIn = NodeRegistry(types: [
        GainNode.self, PanNode.self, EQNode.self, HighPassNode.self, LowPassNode.self,
        CompressorNode.self, GateNode.self, LimiterNode.self, DelayNode.self, ReverbNode.self,
        ChorusNode.self, PhaserNode.self, TremoloNode.self, SaturationNode.self,
        ToneNode.self, NoiseNode.self, MetronomeNode.self,
        SamplerNode.self, MIDIGateNode.self,
    ])

    /// The descriptors, in listing order.
    public var descriptors: [NodeDescriptor] { types.map { $0.descriptor } }

    /// The node type called `name` (chain name, case-insensitive).
    public func type(named name: String) -> (any Node.Type)? {
        let key = name.lowercased()
        return types.first { $0.descriptor.name == key }
    }

    /// A new node of the type called `name`, parameters at their defaults. Any thread but
    /// the audio thread (it allocates).
    public func makeNode(named name: String) -> (any Node)? {
        type(named: name)?.init()
    }

    /// Why ``detailText(name:)`` found nothing.
    public struct UnknownNodeError: Error, Equatable, CustomStringConvertible, Sendable {
        /// The name asked for.
        public var name: String
        /// Every known name.
        public var known: [String]
        /// One line for the user.
        public var description: String {
            "unknown node '\(name)'\(NameMatch.suggestion(name, in: known)) (known nodes: \(known.joined(separator: ", ")); `tapedeck nodes` lists them)"
        }
    }

    /// A table of every node: name, kind, tags, one-line description.
    public func listingText() -> String {
        let rows = descriptors.map { [$0.name, $0.kind.rawValue, $0.tags.joined(separator: ", "), $0.summary] }
        return table(header: ["NAME", "KIND", "TAGS", "DESCRIPTION"], rows: rows)
    }

    /// One node in full: its description and every parameter's id, range, unit and default.
    public func detailText(name: String) throws(UnknownNodeError) -> String {
        guard let d = type(named: name)?.descriptor else {
            throw UnknownNodeError(name: name, known: descriptors.map(\.name))
        }
        var text = "\(d.name) — \(d.displayName) (\(d.kind.rawValue), \(d.manufacturer)/\(d.subtype) v\(d.version))\n"
        text += "\(d.summary)\n"
        text += "tags: \(d.tags.joined(separator: ", "))\n"
        if d.parameters.isEmpty { return text + "no parameters\n" }
        let rows = d.parameters.map { p -> [String] in
            let range = p.unit == .choice ? p.choices.joined(separator: " | ")
                : "\(formatShortest(p.minimum)) … \(formatShortest(p.maximum))"
            var unit = p.unit == .choice ? "choice" : (p.unit == .fraction ? "fraction (or %)" : p.unit.rawValue)
            if p.tempoSyncable { unit += " or note (1/8, 1/4., 1/8t)" }
            return [p.id, p.name, range, unit, p.displayText(p.defaultValue)]
        }
        text += "\n" + table(header: ["PARAMETER", "NAME", "RANGE", "UNIT", "DEFAULT"], rows: rows)
        text += "\nA bare value sets '\(d.parameters[0].id)': \(d.name):\(formatShortest(d.parameters[0].defaultValue))\n"
        return text
    }

    private func table(header: [String], rows: [[String]]) -> String {
        let all = [header] + rows
        var widths = [Int](repeating: 0, count: header.count)
        for row in all { for (i, cell) in row.enumerated() { widths[i] = max(widths[i], cell.count) } }
        var text = ""
        for row in all {
            var line = ""
            for (i, cell) in row.enumerated() {
                line += i == row.count - 1 ? cell : cell + String(repeating: " ", count: widths[i] - cell.count + 2)
            }
            text += line + "\n"
        }
        return text
    }
}
