/// Chain text — `hpf:cutoff=80,comp:threshold=-18:ratio=4,delay:time=1/8:feedback=0.3` — read
/// into a validated description that prints back as canonical text and builds live nodes.
///
/// Syntax: nodes separated by `,`; after a node's name, settings separated by `:`, each
/// `param=value`, except that the first may be a bare value for the node's first parameter
/// (`gain:-6`, `hpf:80`, `delay:250`). Values are numbers with an optional unit suffix that
/// must fit the parameter (`80hz`, `2khz`, `-6db`, `250ms`, `1.5s`, `30%`, `-12st`), choice
/// names (`wave=saw`), or, for tempo-synced parameters, note values (`1/8`, `1/4.`, `1/8t`).
/// A `!` before a node's name bypasses it (`hpf:80,!comp:-18`): it stays in the chain, with
/// its settings, but passes audio untouched. Spaces around names and values are ignored.
///
/// Node types from a ``NodeTypeProvider`` are written `PREFIX:REFERENCE`, e.g.
/// `lv2:http://plugin.org.uk/swh-plugins/amp:gain=6` or `lv2:amp:6`; see
/// ``NodeReference`` for where a URI ends. Such entries may also carry `@preset=NAME` and
/// `@state=NAME`.
public struct Chain: Equatable, Sendable, CustomStringConvertible {
    /// One parameter setting.
    public struct Setting: Equatable, Sendable {
        /// Parameter id.
        public var parameter: String
        /// The value given.
        public var value: ParameterValue
    }

    /// One node and the settings written for it (others stay at their defaults).
    public struct Entry: Equatable, Sendable {
        /// Node name in the registry: a built-in name (`hpf`) or `PREFIX:IDENTIFIER` for a
        /// provider's node type (`lv2:http://plugin.org.uk/swh-plugins/amp`).
        public var node: String
        /// Settings in the node's parameter order.
        public var settings: [Setting]
        /// Text settings (files), in the node's order for them.
        public var texts: [TextSetting] = []
        /// A preset the node starts from, before `state` and `settings` (provider node types):
        /// the provider's canonical name for it (an LV2 preset URI).
        public var preset: String? = nil
        /// Saved state the node starts from, before `settings`: the name of a folder in the
        /// session's plugin-state folder (``PluginStateFolder``).
        public var state: String? = nil
        /// For a node type that is not installed: everything written after its name, kept
        /// exactly as written so that saving the chain never loses it. Nil when installed.
        public var unresolvedSettings: String? = nil

        /// Whether the node type was not installed when the chain was read.
        public var isMissing: Bool { unresolvedSettings != nil }
        /// Whether the node is bypassed (`!name`): kept, but passing audio untouched.
        public var bypassed = false
    }

    /// The nodes in processing order.
    public internal(set) var entries: [Entry]

    /// The empty chain (passes audio unchanged).
    public init() { entries = [] }

    /// Reads and validates `text` against `registry`. Empty text is the empty chain.
    public init(parsing text: String, registry: NodeRegistry = .standard) throws(ChainError) {
        entries = try ChainParser(text: text, registry: registry).parse()
    }

    /// Canonical text: every setting written as `param=value` in parameter order, numbers in
    /// their shortest form without units, a bypassed node marked `!`. Parsing it gives back
    /// an equal chain.
    public var text: String {
        entries.map { entry in
            let mark = entry.bypassed ? "!" : ""
            if let verbatim = entry.unresolvedSettings {
                return mark + NodeReference.text(ofNode: entry.node) + (verbatim.isEmpty ? "" : ":" + verbatim)
            }
            let definitions = NodeRegistry.standard.descriptor(named: entry.node)?.parameters ?? []
            var part = mark + NodeReference.text(ofNode: entry.node)
            for s in entry.settings {
                let definition = definitions.first { $0.id == s.parameter }
                part += ":\(s.parameter)=\(Self.valueText(s.value, definition))"
            }
            for t in entry.texts { part += ":\(t.parameter)=" + NodeReference.quotedIfNeeded(t.value) }
            if let preset = entry.preset { part += ":@preset=" + NodeReference.quotedIfNeeded(preset) }
            if let state = entry.state { part += ":@state=" + NodeReference.quotedIfNeeded(state) }
            return part
        }.joined(separator: ",")
    }

    /// Every saved state the chain refers to, including those of node types not installed
    /// (so their state folders are kept).
    public var stateReferences: [String] {
        entries.compactMap { entry in
            if let state = entry.state { return state }
            return entry.unresolvedSettings.flatMap(NodeReference.stateReference(inSettings:))
        }
    }

    /// The same chain with entry `index`'s saved state set to `state` (its preset, now part of
    /// the state, dropped). For hosts saving a session; see ``ChainInstance/capturingState(in:)``.
    public func replacingState(ofEntry index: Int, with state: String?) -> Chain {
        var copy = self
        guard copy.entries.indices.contains(index), !copy.entries[index].isMissing else { return copy }
        copy.entries[index].state = state
        if state != nil { copy.entries[index].preset = nil }
        return copy
    }

    /// The canonical text.
    public var description: String { text }

    static func valueText(_ value: ParameterValue, _ definition: ParameterDefinition?) -> String {
        switch value {
        case .note(let n): return n.description
        case .number(let v):
            if let d = definition, d.unit == .choice, d.choices.indices.contains(Int(v)) { return d.choices[Int(v)] }
            return formatShortest(v)
        }
    }

    /// Creates the live nodes with these settings, bypassed ones bypassed: one node per
    /// entry, always. An entry whose node type is not installed becomes a ``MissingNode`` that
    /// passes audio through, so the chain keeps its shape and its text. Saved state
    /// (`@state=`) is read from `stateFolder` (the session's ``PluginStateFolder``); without
    /// one such nodes start from their defaults and say so in their ``Node/problem``. Off the
    /// audio thread. Text settings (files) are read through `files`, here, so a sample loads
    /// while the chain is built, never on the audio thread.
    public func instantiate(registry: NodeRegistry = .standard, stateFolder: String? = nil,
                            files: (any NodeFiles)? = nil) -> ChainInstance {
        var nodes: [any Node] = []
        var bypassed: [Int] = []
        for entry in entries {
            let node = Chain.makeNode(for: entry, registry: registry, stateFolder: stateFolder, files: files)
            if entry.bypassed { bypassed.append(nodes.count) }
            nodes.append(node)
        }
        let instance = ChainInstance(chain: self, nodes: nodes)
        for i in bypassed { instance.setBypassed(i, true) }
        return instance
    }
}

/// The parser behind ``Chain/init(parsing:registry:)``; works on characters so error offsets
/// match what the user sees.
struct ChainParser {
    let text: String
    let characters: [Character]
    let registry: NodeRegistry

    init(text: String, registry: NodeRegistry) {
        self.text = text
        self.characters = Array(text)
        self.registry = registry
    }

    func fail(_ reason: ChainError.Reason, _ offset: Int, _ length: Int = 1) -> ChainError {
        ChainError(reason, text: text, offset: min(offset, max(characters.count - 1, 0)), length: length)
    }

    /// Splits `range` at `separator`, returning the pieces' ranges. Separators inside
    /// `<…>` (a quoted URI or name) do not split.
    func split(_ range: Range<Int>, at separator: Character) -> [Range<Int>] {
        var pieces: [Range<Int>] = []
        var start = range.lowerBound
        var quoted = false
        for i in range {
            if characters[i] == "<" { quoted = true } else if characters[i] == ">" { quoted = false }
            guard !quoted, characters[i] == separator else { continue }
            pieces.append(start..<i)
            start = i + 1
        }
        pieces.append(start..<range.upperBound)
        return pieces
    }

    /// `range` without surrounding spaces.
    func trimmed(_ range: Range<Int>) -> Range<Int> {
        var lo = range.lowerBound, hi = range.upperBound
        while lo < hi && characters[lo].isWhitespace { lo += 1 }
        while hi > lo && characters[hi - 1].isWhitespace { hi -= 1 }
        return lo..<hi
    }

    func string(_ range: Range<Int>) -> String { String(characters[range]) }

    func parse() throws(ChainError) -> [Chain.Entry] {
        let all = trimmed(0..<characters.count)
        if all.isEmpty { return [] }
        // No name, URI, file or value holds a control or format character (ESC, BEL, NUL,
        // a bidi override): such text is a terminal escape waiting to be printed, never a
        // chain, so it is refused before it can be stored.
        if let bad = characters.indices.first(where: { i in
            characters[i].unicodeScalars.contains { [.control, .format].contains($0.properties.generalCategory) }
        }) {
            let code = characters[bad].unicodeScalars.first.map { String($0.value, radix: 16, uppercase: true) } ?? "?"
            throw fail(.malformed("a chain cannot hold control characters (U+\(String(repeating: "0", count: max(0, 4 - code.count)))\(code) here)"), bad)
        }
        var entries: [Chain.Entry] = []
        for piece in split(0..<characters.count, at: ",") {
            entries.append(try parseEntry(piece))
        }
        return entries
    }

    private func parseEntry(_ range: Range<Int>) throws(ChainError) -> Chain.Entry {
        let parts = split(range, at: ":")
        var nameRange = trimmed(parts[0])
        let bypassed = !nameRange.isEmpty && characters[nameRange.lowerBound] == "!"
        if bypassed { nameRange = trimmed(nameRange.lowerBound + 1..<nameRange.upperBound) }
        if nameRange.isEmpty {
            let at = range.lowerBound
            throw fail(.malformed("expected a node name here (chains look like hpf:80,comp:threshold=-18)"), at)
        }
        let name = string(nameRange)
        if parts.count > 1, let provider = registry.provider(prefix: name) {
            var entry = try parseProviderEntry(provider, after: parts[1].lowerBound, in: range)
            entry.bypassed = bypassed
            return entry
        }
        if let bad = nameRange.first(where: { !(characters[$0].isLetter || characters[$0].isNumber || characters[$0] == "_" || characters[$0] == "-") }) {
            throw fail(.malformed("unexpected '\(characters[bad])' in node name '\(name)'"), bad)
        }
        guard let type = registry.type(named: name) else {
            if let plugin = registry.pluginNamed(name) {
                throw fail(.malformed("unknown node '\(name)'; the plugin of that name is \(plugin)"), nameRange.lowerBound, nameRange.count)
            }
            throw fail(.unknownNode(name: name, known: registry.descriptors.map(\.name)), nameRange.lowerBound, nameRange.count)
        }
        var texts: [TextSetting] = []
        let settings = try parseSettings(Array(parts.dropFirst()), descriptor: type.descriptor, texts: &texts)
        var entry = Chain.Entry(node: type.descriptor.name, settings: settings, bypassed: bypassed)
        entry.texts = texts
        return entry
    }

    /// Reads `parts` (each `param=value`, or a bare value first) against `descriptor`,
    /// returning the settings in parameter order.
    func parseSettings(_ parts: [Range<Int>], descriptor: NodeDescriptor) throws(ChainError) -> [Chain.Setting] {
        var texts: [TextSetting] = []
        return try parseSettings(parts, descriptor: descriptor, texts: &texts)
    }

    /// As ``parseSettings(_:descriptor:)``, also reading the descriptor's text settings
    /// (`file=kick.wav`, or `file=<a:b.wav>` for text holding `:` or `,`) into `texts`.
    func parseSettings(_ parts: [Range<Int>], descriptor: NodeDescriptor, texts: inout [TextSetting]) throws(ChainError) -> [Chain.Setting] {
        var settings: [(index: Int, setting: Chain.Setting)] = []
        for (position, part) in parts.enumerated() {
            let setting = trimmed(part)
            if setting.isEmpty {
                throw fail(.malformed("empty setting after ':' (write param=value)"), part.lowerBound)
            }
            let index: Int
            let valueRange: Range<Int>
            if let eq = setting.first(where: { characters[$0] == "=" }) {
                let idRange = trimmed(setting.lowerBound..<eq)
                valueRange = trimmed(eq + 1..<setting.upperBound)
                if idRange.isEmpty { throw fail(.malformed("missing parameter name before '='"), eq) }
                let id = string(idRange)
                if let text = descriptor.textParameters.first(where: { $0.id.lowercased() == id.lowercased() }) {
                    let value = NodeReference.unquoted(string(valueRange))
                    if value.isEmpty { throw fail(.malformed("missing value after '\(id)='"), eq) }
                    if texts.contains(where: { $0.parameter == text.id }) {
                        throw fail(.malformed("'\(text.id)' is set twice"), setting.lowerBound, setting.count)
                    }
                    texts.append(TextSetting(parameter: text.id, value: value))
                    continue
                }
                guard let i = descriptor.parameters.firstIndex(where: { $0.id.lowercased() == id.lowercased() }) else {
                    throw fail(.unknownParameter(node: descriptor.name, parameter: id,
                                                 known: descriptor.parameters.map(\.id) + descriptor.textParameters.map(\.id)),
                               idRange.lowerBound, idRange.count)
                }
                index = i
                if valueRange.isEmpty { throw fail(.malformed("missing value after '\(id)='"), eq) }
            } else {
                guard position == 0, !descriptor.parameters.isEmpty else {
                    throw fail(.malformed("a bare value may only come first, right after the node name; write param=value"),
                               setting.lowerBound, setting.count)
                }
                index = 0
                valueRange = setting
            }
            if settings.contains(where: { $0.index == index }) {
                throw fail(.malformed("'\(descriptor.parameters[index].id)' is set twice"), setting.lowerBound, setting.count)
            }
            let value = try parseValue(valueRange, descriptor: descriptor, definition: descriptor.parameters[index])
            settings.append((index, Chain.Setting(parameter: descriptor.parameters[index].id, value: value)))
        }
        settings.sort { $0.index < $1.index }
        let order = descriptor.textParameters.map(\.id)
        texts.sort { (order.firstIndex(of: $0.parameter) ?? 0) < (order.firstIndex(of: $1.parameter) ?? 0) }
        return settings.map(\.setting)
    }

    private func parseValue(_ range: Range<Int>, descriptor: NodeDescriptor,
                            definition p: ParameterDefinition) throws(ChainError) -> ParameterValue {
        let raw = string(range)
        let lower = raw.lowercased()
        if p.unit == .choice, let i = p.choices.firstIndex(where: { $0 == lower }) {
            return .number(Double(i))
        }
        if raw.contains("/") {
            guard let note = Self.noteValue(lower) else {
                throw fail(.malformed("'\(raw)' is not a note value (write 1/4, 1/8., 1/16t)"), range.lowerBound, range.count)
            }
            guard p.tempoSyncable else {
                throw fail(.wrongUnit(node: descriptor.name, parameter: p.id, value: raw,
                                      expected: "this parameter does not follow the tempo; give a number\(p.unit.symbol.isEmpty ? "" : " in " + p.unit.symbol)"),
                           range.lowerBound, range.count)
            }
            return .note(note)
        }
        // Split the number from its unit suffix.
        let chars = Array(lower)
        var end = 0
        if end < chars.count && (chars[end] == "-" || chars[end] == "+") { end += 1 }
        var digits = 0
        while end < chars.count && (chars[end].isASCIIDigit || chars[end] == ".") { digits += chars[end] == "." ? 0 : 1; end += 1 }
        if digits > 0 && end < chars.count && chars[end] == "e", end + 1 < chars.count,
           chars[end + 1].isASCIIDigit || ((chars[end + 1] == "-" || chars[end + 1] == "+") && end + 2 < chars.count && chars[end + 2].isASCIIDigit) {
            end += 2
            while end < chars.count && chars[end].isASCIIDigit { end += 1 }
        }
        guard digits > 0, var value = Double(String(chars[0..<end])) else {
            let expected = p.unit == .choice ? "one of \(p.choices.joined(separator: ", "))" : "a number"
            throw fail(.malformed("'\(raw)' is not a value for \(descriptor.name) \(p.id) (expected \(expected))"), range.lowerBound, range.count)
        }
        let suffix = String(chars[end...]).trimmingWhitespace()
        if !suffix.isEmpty {
            let scale: Double?
            switch (suffix, p.unit) {
            case ("db", .decibels), ("hz", .hertz), ("ms", .milliseconds), ("st", .semitones), ("q", .q),
                 ("s", .seconds), ("%", .percent), ("bpm", .beatsPerMinute), ("ct", .cents), ("cents", .cents): scale = 1
            case ("khz", .hertz), ("s", .milliseconds): scale = 1000
            case ("%", .fraction): scale = 0.01
            case ("ms", .seconds): scale = 0.001
            default: scale = nil
            }
            guard let s = scale else {
                let unitName = p.unit == .fraction ? "a fraction 0…1 (or a percentage)" : (p.unit.symbol.isEmpty ? "no unit" : p.unit.symbol)
                throw fail(.wrongUnit(node: descriptor.name, parameter: p.id, value: raw,
                                      expected: "unit '\(suffix)' does not fit; \(p.id) is in \(unitName)"),
                           range.lowerBound + end, suffix.count)
            }
            value *= s
        }
        guard value >= p.minimum && value <= p.maximum, p.unit != .choice || value == value.rounded() else {
            throw fail(.outOfRange(node: descriptor.name, parameter: p.id, value: raw, minimum: p.minimum,
                                   maximum: p.maximum, unit: p.unit == .choice ? "" : p.unit.symbol),
                       range.lowerBound, range.count)
        }
        return .number(value)
    }

    /// `1/8`, `3/16`, `1/4.`, `1/8t`.
    static func noteValue(_ text: String) -> NoteValue? {
        var body = Substring(text)
        var modifier = NoteValue.Modifier.none
        if body.hasSuffix(".") { modifier = .dotted; body = body.dropLast() }
        else if body.hasSuffix("t") { modifier = .triplet; body = body.dropLast() }
        let halves = body.split(separator: "/", omittingEmptySubsequences: false)
        guard halves.count == 2, halves.allSatisfy({ !$0.isEmpty && $0.allSatisfy(\.isASCIIDigit) }),
              let n = Int(halves[0]), let d = Int(halves[1]), n > 0, d > 0, n <= 64, d <= 256 else { return nil }
        return NoteValue(numerator: n, denominator: d, modifier: modifier)
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}

extension String {
    fileprivate func trimmingWhitespace() -> String {
        var s = Substring(self)
        while let f = s.first, f.isWhitespace { s.removeFirst() }
        while let l = s.last, l.isWhitespace { s.removeLast() }
        return String(s)
    }
}
