import Synchronization
import TapedeckCore

/// The catalogue of node types — the built-in ones and those of installed providers (LV2
/// plugins) behind one lookup — for chains, the screen's chain panel and `tapedeck nodes`.
public struct NodeRegistry: Sendable {
    /// The built-in node types, in listing order.
    public let types: [any BuiltInNode.Type]
    /// Providers of further node types, each named in chains by its prefix (`lv2:…`).
    public let providers: [any NodeTypeProvider]

    /// A registry of `types` and `providers`; names and prefixes must be unique.
    public init(types: [any BuiltInNode.Type], providers: [any NodeTypeProvider] = []) {
        self.types = types
        self.providers = providers
    }

    /// Every built-in node: effects, then generators, the instrument and the music effect.
    public static let builtIn = NodeRegistry(types: [
        GainNode.self, PanNode.self, EQNode.self, HighPassNode.self, LowPassNode.self,
        CompressorNode.self, GateNode.self, LimiterNode.self, DelayNode.self, ReverbNode.self,
        ChorusNode.self, PhaserNode.self, TremoloNode.self, SaturationNode.self,
        ToneNode.self, NoiseNode.self, MetronomeNode.self,
        SamplerNode.self, MIDIGateNode.self,
    ])

    private static let installed = Mutex<[any NodeTypeProvider]>([])
    private static let installedTypes = Mutex<[any BuiltInNode.Type]>([])

    /// The registry chains use unless told otherwise: the built-in nodes, the node types
    /// ``install(type:)`` added and every provider ``install(_:)`` added. Any thread.
    public static var standard: NodeRegistry {
        NodeRegistry(types: builtIn.types + installedTypes.withLock { $0 }, providers: installed.withLock { $0 })
    }

    /// Adds a node type that lives in a target of its own (one that links a library the
    /// other nodes do not need, such as the FluidSynth instrument) to ``standard``, after the
    /// built-in ones; a second call with the same name replaces the first. A program calls
    /// this once at startup, before it reads any chain.
    public static func install(type: any BuiltInNode.Type) {
        installedTypes.withLock { list in
            list.removeAll { $0.descriptor.name == type.descriptor.name }
            list.append(type)
        }
    }

    /// Adds `provider` to ``standard`` (replacing one with the same prefix). A program calls
    /// this once at startup, before it reads any chain.
    public static func install(_ provider: any NodeTypeProvider) {
        installed.withLock { list in
            list.removeAll { $0.prefix == provider.prefix }
            list.append(provider)
        }
    }

    /// Takes the provider with `prefix` out of ``standard`` again: a test that installed one
    /// of its own for a while leaves the rest of its process reading chains as before.
    public static func uninstall(prefix: String) {
        installed.withLock { list in list.removeAll { $0.prefix == prefix } }
    }

    /// The built-in descriptors, in listing order.
    public var descriptors: [NodeDescriptor] { types.map { $0.descriptor } }

    /// The built-in node type called `name` (chain name, case-insensitive).
    public func type(named name: String) -> (any BuiltInNode.Type)? {
        let key = name.lowercased()
        return types.first { $0.descriptor.name == key }
    }

    /// The provider whose prefix is `prefix` (case-insensitive).
    public func provider(prefix: String) -> (any NodeTypeProvider)? {
        let key = prefix.lowercased()
        return providers.first { $0.prefix == key }
    }

    /// The descriptor of node type `name`: a built-in name or `PREFIX:IDENTIFIER` as chain
    /// entries hold it. Nil when it is unknown or not installed.
    public func descriptor(named name: String) -> NodeDescriptor? {
        if let type = type(named: name) { return type.descriptor }
        guard let (provider, identifier) = split(name) else { return nil }
        return provider.descriptor(identifier: identifier)
    }

    /// A new built-in node of the type called `name`, parameters at their defaults. Any thread
    /// but the audio thread (it allocates).
    public func makeNode(named name: String) -> (any Node)? {
        type(named: name)?.init()
    }

    /// The node for `entry`, parameters at their defaults (or its preset's and state's): a
    /// built-in node, a provider's, or a ``MissingNode`` standing in for a type that is not
    /// installed. Never nil. Off the audio thread.
    public func makeNode(for entry: Chain.Entry, stateFolder: String?) -> any Node {
        if let type = type(named: entry.node) { return type.init() }
        if !entry.isMissing, let (provider, identifier) = split(entry.node),
           let node = provider.makeNode(identifier: identifier, entry: entry, stateFolder: stateFolder) {
            return node
        }
        return MissingNode(name: entry.node)
    }

    private func split(_ name: String) -> (any NodeTypeProvider, String)? {
        guard let colon = name.firstIndex(of: ":"), let provider = provider(prefix: String(name[..<colon])) else { return nil }
        return (provider, String(name[name.index(after: colon)...]))
    }

    /// Why ``detailText(name:)`` found nothing.
    public struct UnknownNodeError: Error, Equatable, CustomStringConvertible, Sendable {
        /// The name asked for.
        public var name: String
        /// Every known built-in name.
        public var known: [String]
        /// What a provider said about the name, when it looked like one of its references.
        public var detail: String? = nil
        /// A provider's type with this short name, written as a chain names it (`lv2:flanger`).
        public var plugin: String? = nil
        /// One line for the user.
        public var description: String {
            if let detail { return "unknown node '\(name)': \(detail)" }
            if let plugin { return "unknown node '\(name)'; the plugin of that name is \(plugin)" }
            return "unknown node '\(name)'\(NameMatch.suggestion(name, in: known)) (known nodes: \(known.joined(separator: ", ")); `tapedeck nodes` lists them, `tapedeck nodes --lv2` the installed plugins)"
        }
    }

    /// A table of every built-in node: name, kind, tags, one-line description.
    public func listingText() -> String {
        let rows = descriptors.map { [$0.name, $0.kind.rawValue, $0.tags.joined(separator: ", "), $0.summary] }
        return Self.table(header: ["NAME", "KIND", "TAGS", "DESCRIPTION"], rows: rows)
    }

    /// One node in full: its description and every parameter's id, range, unit and default.
    /// `name` is a built-in name, `PREFIX:REFERENCE`, or a provider's URI or short name.
    public func detailText(name: String) throws(UnknownNodeError) -> String {
        if let d = type(named: name)?.descriptor {
            var text = "\(d.name) — \(d.displayName) (\(d.kind.rawValue), \(d.manufacturer)/\(d.subtype) v\(d.version))\n"
            text += "\(d.summary)\n"
            text += "tags: \(d.tags.joined(separator: ", "))\n"
            text += Self.parameterText(d)
            for t in d.textParameters {
                text += "\(t.id)=NAME — \(t.name): \(t.summary) (write a name holding ':' or ',' in <…>)\n"
            }
            return text
        }
        // A provider's type: PREFIX:REFERENCE, or a URI on its own. A bare short name is not
        // enough, as in chains (`lv2:flanger`, not `flanger`), so a plugin installed later
        // never changes what a built-in name means.
        for provider in providers {
            let prefixed = name.lowercased().hasPrefix(provider.prefix + ":")
            let reference = prefixed ? String(name.dropFirst(provider.prefix.count + 1)) : name
            let unquoted = reference.hasPrefix("<") && reference.hasSuffix(">") ? String(reference.dropFirst().dropLast()) : reference
            let isURI = unquoted != reference || NodeReference.isPlainURIStart(reference)
            guard prefixed || isURI else { continue }
            switch provider.resolve(unquoted, isURI: isURI) {
            case .found(let identifier):
                return provider.detailText(identifier: identifier)
            case .notInstalled(let identifier):
                throw UnknownNodeError(name: name, known: [], detail: "no installed \(provider.prefix) plugin has the URI \(identifier)")
            case .ambiguous(let identifiers):
                throw UnknownNodeError(name: name, known: [], detail: NodeReference.ambiguity(identifiers))
            case .unknown(let why):
                throw UnknownNodeError(name: name, known: [], detail: why)
            }
        }
        throw UnknownNodeError(name: name, known: descriptors.map(\.name), detail: nil, plugin: pluginNamed(name))
    }

    /// `PREFIX:NAME` when exactly one provider type has the short name `name`.
    func pluginNamed(_ name: String) -> String? {
        guard NodeReference.isShortName(name) else { return nil }
        for provider in providers {
            if case .found = provider.resolve(name, isURI: false) { return "\(provider.prefix):\(name.lowercased())" }
        }
        return nil
    }

    /// The parameter table of `d` and how a bare value reads after `name` (default: the
    /// descriptor's name), for ``detailText(name:)``.
    public static func parameterText(_ d: NodeDescriptor, name: String? = nil) -> String {
        if d.parameters.isEmpty { return "no parameters\n" }
        let rows = d.parameters.map { p -> [String] in
            var range = p.unit == .choice ? p.choices.joined(separator: " | ")
                : "\(formatShortest(p.minimum)) … \(formatShortest(p.maximum))"
            if !p.valueLabels.isEmpty {
                range += " (" + p.valueLabels.map { "\(formatShortest($0.value)) = \($0.label)" }.joined(separator: ", ") + ")"
            }
            var unit = p.unit == .choice ? "choice" : (p.unit == .fraction ? "fraction (or %)" : p.unit.symbol)
            if p.tempoSyncable { unit += " or note (1/8, 1/4., 1/8t)" }
            return [p.id, p.name, range, unit, p.displayText(p.defaultValue)]
        }
        var text = "\n" + table(header: ["PARAMETER", "NAME", "RANGE", "UNIT", "DEFAULT"], rows: rows)
        text += "\nA bare value sets '\(d.parameters[0].id)': \(name ?? d.name):\(formatShortest(d.parameters[0].defaultValue))\n"
        return text
    }

    /// Columns padded to their widest cell, the last one left ragged.
    public static func table(header: [String], rows: [[String]]) -> String {
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
