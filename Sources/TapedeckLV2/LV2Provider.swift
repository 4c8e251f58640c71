import TapedeckCore
import TapedeckDSP

/// Installed LV2 plugins as node types: `lv2:URI` or `lv2:SHORTNAME` in chains, discovered
/// through lilv the first time a chain, `tapedeck nodes` or the screen asks for one.
///
/// Install it once at startup: `NodeRegistry.install(LV2Provider.shared)`.
public final class LV2Provider: NodeTypeProvider, @unchecked Sendable {
    /// The provider every Tapedeck front-end installs.
    public static let shared = LV2Provider()

    /// `lv2`.
    public let prefix = "lv2"

    private init() {}

    private var world: LV2World { LV2World.shared }

    public func resolve(_ reference: String, isURI: Bool) -> NodeResolution {
        if isURI {
            return world.installedURIs.contains(reference) ? .found(identifier: reference) : .notInstalled(identifier: reference)
        }
        let key = reference.lowercased()
        let matches = world.urisByShortName[key] ?? []
        if matches.count == 1 { return .found(identifier: matches[0]) }
        if matches.count > 1 { return .ambiguous(matches) }
        let near = world.urisByShortName.keys.filter { $0.hasPrefix(key) || key.hasPrefix($0) }.sorted().prefix(5)
        let hint = near.isEmpty ? "" : "; did you mean \(near.map { "'\($0)'" }.joined(separator: ", "))?"
        return .unknown("no installed LV2 plugin has this short name\(hint) (`tapedeck nodes --lv2` lists them)")
    }

    public func descriptor(identifier: String) -> NodeDescriptor? {
        world.info(identifier)?.descriptor
    }

    public func resolvePreset(_ name: String, identifier: String) throws(NodeTypeError) -> String {
        let presets = world.presets(of: identifier)
        if let exact = presets.first(where: { $0.uri == name }) { return exact.uri }
        let labelled = presets.filter { $0.label.lowercased() == name.lowercased() }
        if labelled.count == 1 { return labelled[0].uri }
        if presets.isEmpty { throw NodeTypeError("\(identifier) has no presets") }
        if labelled.count > 1 { throw NodeTypeError("several presets are called '\(name)'; give its URI in <…>") }
        throw NodeTypeError("no preset '\(name)' (presets: \(presets.map(\.label).joined(separator: ", ")))")
    }

    public func makeNode(identifier: String, entry: Chain.Entry, stateFolder: String?) -> (any Node)? {
        guard let info = world.info(identifier) else { return nil }
        return LV2Node(info: info, preset: entry.preset, stateName: entry.state, stateFolder: stateFolder)
    }

    public func detailText(identifier: String) -> String {
        guard let info = world.info(identifier) else { return "\(identifier.terminalSafe): not installed\n" }
        let d = info.descriptor
        let version = info.version == "0.0" ? "" : " v\(info.version)"
        // Everything from the plugin's files is escaped: a URI or name may hold terminal escapes.
        var text = "lv2:\(info.uri.terminalSafe) — \(info.name.terminalSafe) (\(d.kind.rawValue), LV2 plugin\(version))\n"
        text += "short name: \(info.shortName.terminalSafe)\(world.urisByShortName[info.shortName]?.count == 1 ? "" : " (not unique: use the URI)")\n"
        text += "class: \(info.className.terminalSafe)\(info.author.isEmpty ? "" : " · author: \(info.author.terminalSafe)")\n"
        text += "ports: \(portSummary(info))\n"
        if let latency = info.latencyPort { text += "latency: reported by port '\(latency.symbol.terminalSafe)', compensated like the limiter's\n" }
        if info.hasStateInterface { text += "state: saved with the session (a folder in SESSION/plugins/)\n" }
        if !info.missingFeatures.isEmpty {
            text += "cannot run here: needs \(info.missingFeatures.joined(separator: ", "))\n"
        }
        text += NodeRegistry.parameterText(d, name: "lv2:\(info.shortName)")
        let presets = world.presets(of: identifier)
        if !presets.isEmpty {
            text += "\npresets (@preset=NAME):\n"
            text += NodeRegistry.table(header: ["NAME", "URI"], rows: presets.map { [$0.label.terminalSafe, $0.uri.terminalSafe] })
        }
        return text
    }

    /// `audio 1 in, 1 out (runs once per channel on stereo tracks), MIDI in`.
    private func portSummary(_ info: LV2PluginInfo) -> String {
        let ins = info.audioInputs.count, outs = info.audioOutputs.count
        var parts = ["audio \(ins) in, \(outs) out" + (ins == 1 && outs == 1 ? " (runs once per channel on stereo tracks)" : "")]
        if info.takesMIDI { parts.append("MIDI in") }
        let sideChains = info.ports.filter { $0.kind == .audio && $0.isInput && $0.isSideChain }.count
        if sideChains > 0 { parts.append("\(sideChains) side-chain in (silent)") }
        let cv = info.ports.filter { $0.kind == .cv }.count
        if cv > 0 { parts.append("\(cv) CV (silent)") }
        return parts.joined(separator: ", ")
    }

    /// `tapedeck nodes --lv2`: every installed plugin with its short name, kind, class,
    /// author, version, URI and name. Plugins the host cannot run are marked.
    public func listingText() -> String {
        let rows = world.pluginURIs.compactMap { uri -> [String]? in
            guard let info = world.info(uri) else { return nil }
            let unique = world.urisByShortName[info.shortName]?.count == 1
            let runnable = info.missingFeatures.isEmpty ? "" : " (cannot run here)"
            return [unique ? info.shortName.terminalSafe : "-", info.kind.rawValue, info.className.terminalSafe, info.author.terminalSafe,
                    info.version.terminalSafe, info.uri.terminalSafe, info.name.terminalSafe + runnable]
        }
        let table = NodeRegistry.table(header: ["SHORT NAME", "KIND", "CLASS", "AUTHOR", "VERSION", "URI", "NAME"], rows: rows)
        let problem = world.loadProblem.map { $0 + "\n" } ?? ""
        return table + "\n\(rows.count) plugins. In chains: lv2:URI or lv2:SHORTNAME (\"-\": the short name is not unique).\n" + problem
    }
}
