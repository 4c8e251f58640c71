/// Stands in for a node whose type is not installed (an LV2 plugin removed since the session
/// was saved): it passes audio through unchanged and keeps its place, and its text, in the
/// chain, so opening and saving a session never drops it.
public final class MissingNode: Node, @unchecked Sendable {
    /// `lv2:URI` and a description that says it is missing.
    public let descriptor: NodeDescriptor
    /// None: the parameters of a type that is not installed are unknown.
    public let parameters = NodeParameters([])

    /// A stand-in for node type `name` (`lv2:http://…`).
    public init(name: String) {
        descriptor = NodeDescriptor(name: name, displayName: "missing: \(name)", kind: .effect, subtype: "miss",
                                    tags: ["Missing"], summary: "Not installed here; audio passes through unchanged.",
                                    parameters: [])
    }

    /// Says that the type is not installed.
    public var problem: String? { "not installed; passed through" }

    /// Nothing to allocate.
    public func prepare(format: NodeFormat, maxFrames: Int) {}

    /// Audio thread: copies input to output when they are different buffers.
    public func process(_ context: inout RenderContext) {
        for c in 0..<min(context.output.count, context.input.count)
        where UnsafePointer(context.output[c]) != UnsafePointer(context.input[c]) {
            context.output[c].update(from: context.input[c], count: context.frameCount)
        }
    }

    /// Audio thread: nothing to clear.
    public func reset() {}

    /// Nothing to free.
    public func release() {}
}
