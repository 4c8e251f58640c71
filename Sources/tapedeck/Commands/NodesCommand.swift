import TapedeckDSP

/// `tapedeck nodes [NAME]`: the effect nodes there are, or one with its parameters.
struct NodesCommand: Command {
    static let spec = CommandSpec(
        name: "nodes", summary: "list the effect nodes, or show one node's parameters",
        synopsis: ["nodes [NAME]"],
        positionals: [PositionalSpec("NAME", complete: .none)],
        details: """
        Without NAME: every node with its kind (effect, generator, instrument, music effect),
        tags and what it does. With NAME: its parameters — id, range, unit, default.
        Chains are written `node:param=value:param=value,node…`; a bare value sets a node's
        first parameter (`gain:-6`, `hpf:80`, `delay:1/8`).
        """,
        examples: ["tapedeck nodes comp"])

    let nodeName: String?

    init(arguments: inout Arguments) throws {
        nodeName = arguments.positional()
    }

    func run() throws -> Int32 {
        if let nodeName {
            Terminal.out(try NodeRegistry.builtIn.detailText(name: nodeName))
        } else {
            Terminal.out(NodeRegistry.builtIn.listingText())
        }
        return ExitCode.ok
    }
}
