/// A chain written as text (`hpf:cutoff=80,!comp:ratio=4`) split into nodes, so the chain
/// panel can select, reorder, bypass and nudge them without knowing the node types. A `!`
/// before a node's name marks it bypassed. The host's validation hook has the last word on
/// whether the result is a real chain.
public struct ChainText: Equatable, Sendable {
    /// One `key=value` setting of a node.
    public struct Parameter: Equatable, Sendable {
        /// Parameter id.
        public var key: String
        /// Value as written.
        public var value: String
    }

    /// One node: its type name, bypass flag and parameters in order.
    public struct Node: Equatable, Sendable {
        /// The node type, e.g. `hpf`.
        public var name: String
        /// Bypassed nodes pass audio through untouched.
        public var bypassed: Bool
        /// Parameters as written.
        public var parameters: [Parameter]

        /// The node as chain text.
        public var text: String {
            ([(bypassed ? "!" : "") + name] + parameters.map { $0.value.isEmpty ? $0.key : "\($0.key)=\($0.value)" }).joined(separator: ":")
        }
    }

    /// The nodes, in signal order.
    public var nodes: [Node]

    /// Splits `text`; empty text is an empty chain. Parts without `=` are kept as keys with
    /// empty values so nothing the user typed is lost.
    public init(_ text: String) {
        nodes = text.split(separator: ",").map { String($0).trimmingWhitespace() }.filter { !$0.isEmpty }.map { part in
            var pieces = part.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
            var name = pieces.removeFirst().trimmingWhitespace()
            let bypassed = name.hasPrefix("!")
            if bypassed { name.removeFirst() }
            let params = pieces.map { p -> Parameter in
                guard let eq = p.firstIndex(of: "=") else { return Parameter(key: p, value: "") }
                return Parameter(key: String(p[..<eq]), value: String(p[p.index(after: eq)...]))
            }
            return Node(name: name, bypassed: bypassed, parameters: params)
        }
    }

    /// The chain as text.
    public var text: String { nodes.map(\.text).joined(separator: ",") }

    /// The chain as text without bypassed nodes: what should actually run.
    public var activeText: String { nodes.filter { !$0.bypassed }.map(\.text).joined(separator: ",") }

    /// Moves node `index` by `offset` places; false when it cannot move.
    public mutating func move(_ index: Int, by offset: Int) -> Bool {
        let target = index + offset
        guard nodes.indices.contains(index), nodes.indices.contains(target) else { return false }
        nodes.insert(nodes.remove(at: index), at: target)
        return true
    }

    /// Steps a numeric parameter: `coarse` steps are ten fine steps. A fine step is a tenth
    /// of the value's leading power of ten (80 → 1, 5 → 0.1, 0.3 → 0.01), so every magnitude
    /// moves at a sensible pace. Returns false when the value is not a plain number.
    public mutating func nudge(node: Int, parameter: Int, steps: Int, coarse: Bool) -> Bool {
        guard nodes.indices.contains(node), nodes[node].parameters.indices.contains(parameter),
              let value = Double(nodes[node].parameters[parameter].value) else { return false }
        let fine = ChainText.fineStep(for: value)
        let step = fine * (coarse ? 10 : 1)
        // Round to the fine grid only, so a coarse step moves exactly ten fine steps.
        let next = ((value + Double(steps) * step) / fine).rounded() * fine
        nodes[node].parameters[parameter].value = ChainText.format(next, step: fine)
        return true
    }

    /// The fine step for a value (see ``nudge(node:parameter:steps:coarse:)``).
    public static func fineStep(for value: Double) -> Double {
        var a = abs(value)
        guard a >= 1 else { return 0.01 }
        var step = 0.1
        while a >= 10 { a /= 10; step *= 10 }
        return step
    }

    private static func format(_ v: Double, step: Double) -> String {
        if step >= 1 { return String(Int(v.rounded())) }
        let hundredths = Int((v * 100).rounded())
        let sign = hundredths < 0 ? "-" : ""
        let a = abs(hundredths)
        let frac = a % 100
        return "\(sign)\(a / 100).\(frac < 10 ? "0" : "")\(frac)"
    }
}
