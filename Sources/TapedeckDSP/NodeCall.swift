/// A chain's node behind a class of its own, for the audio thread's calls.
///
/// Why: a method called on a class-bound existential (`any Node`) read from memory retains
/// the node before the call and releases it after — from an array, from a pointer's pointee
/// or from an `unowned(unsafe)` field alike (checked in the optimised assembly). That was
/// a swift_retain and a swift_release per node per period (1.8 % of the audio thread's
/// samples at 256 tracks × 4 nodes, perf). An ``Unmanaged`` reference cannot hold an
/// existential, but it can hold this class: called through
/// `_withUnsafeGuaranteedRef`, the wrapper and then its node (held as the node's own type,
/// `Unmanaged<N>`) are both borrowed, and nothing is counted.
class NodeCall {
    /// Audio thread: the node's ``Node/process(_:)``.
    func process(_ context: inout RenderContext) {}

    /// Audio thread: the node's ``Node/reset()``.
    func reset() {}

    /// The wrapper for `node`, opened to its own type. Off the audio thread (allocates).
    static func make(_ node: any Node) -> NodeCall { wrap(node) }

    private static func wrap<N: Node>(_ node: N) -> NodeCall { TypedNodeCall(node) }
}

/// ``NodeCall`` for a node of type `N`; its chain holds the node (this does not).
private final class TypedNodeCall<N: Node>: NodeCall {
    private let node: Unmanaged<N>

    init(_ node: N) { self.node = .passUnretained(node) }

    /// Audio thread: no allocation, no locks, no reference counting.
    override func process(_ context: inout RenderContext) { node._withUnsafeGuaranteedRef { $0.process(&context) } }

    /// Audio thread: as the node's reset.
    override func reset() { node._withUnsafeGuaranteedRef { $0.reset() } }
}
