import TapedeckDSP
import TapedeckLV2

/// `tapedeck nodes [NAME | --lv2]`: the effect nodes there are, the installed LV2 plugins, or
/// one node or plugin with its parameters.
struct NodesCommand: Command {
    static let spec = CommandSpec(
        name: "nodes", summary: "list the effect nodes or the installed LV2 plugins, or show one with its parameters",
        synopsis: ["nodes [NAME | --lv2]"],
        positionals: [PositionalSpec("NAME", complete: .none)],
        options: [OptionSpec(flag: "--lv2", "list the installed LV2 plugins")],
        details: """
        Without NAME: every built-in node with its kind (effect, generator, instrument, music
        effect), tags and what it does. --lv2: every installed LV2 plugin with its short name,
        kind, class, author, version and URI. With NAME — a built-in node, or a plugin's URI or
        short name (amp, lv2:amp, http://plugin.org.uk/swh-plugins/amp) — its parameters: id,
        range, unit, default, named values; for a plugin also its ports and presets.
        Chains are written `node:param=value:param=value,node…`; a bare value sets a node's
        first parameter (`gain:-6`, `hpf:80`, `delay:1/8`, `lv2:amp:6`).
        """,
        examples: ["tapedeck nodes comp", "tapedeck nodes --lv2", "tapedeck nodes http://drobilla.net/plugins/mda/JX10"])

    let nodeName: String?
    let lv2: Bool

    init(arguments: inout Arguments) throws {
        lv2 = arguments.flag("--lv2")
        nodeName = arguments.positional()
        if lv2 && nodeName != nil { throw UsageError("nodes: give NAME or --lv2, not both") }
    }

    func run(_ context: CommandContext) throws -> Int32 {
        if lv2 {
            Terminal.out(LV2Provider.shared.listingText())
        } else if let nodeName {
            do { Terminal.out(try NodeRegistry.standard.detailText(name: nodeName)) } catch {
                throw UsageError("nodes: \(error.description)")
            }
        } else {
            Terminal.out(NodeRegistry.builtIn.listingText())
        }
        return ExitCode.ok
    }
}
