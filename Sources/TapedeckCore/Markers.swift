/// Named markers and the loop and punch ranges, as edits of ``Session``. Markers are kept in
/// timeline order, so "marker 2" is the second one along the timeline.

/// Why a marker or range edit could not be made; the description is one line for the user.
public struct MarkerEditError: EditRefusal, Equatable, Sendable {
    /// The whole message.
    public var description: String

    /// An error saying `description`.
    public init(_ description: String) { self.description = description }
}

extension Session {
    /// Adds a marker called `name` at `frame` (a default `M1`, `M2`… when `name` is empty);
    /// returns its index in timeline order.
    @discardableResult
    public mutating func addMarker(_ name: String, atFrame frame: Int64, kind: Marker.Kind = .user) throws(MarkerEditError) -> Int {
        guard frame >= 0, frame <= Session.maximumTimelineFrame else {
            throw MarkerEditError("a marker must lie between the start and \(clockText(Session.maximumTimelineFrame))")
        }
        var label = name.trimmingWhitespace()
        if label.isEmpty {
            var n = markers.count + 1
            while markers.contains(where: { $0.name == "M\(n)" }) { n += 1 }
            label = "M\(n)"
        }
        let index = markers.firstIndex { $0.frame > frame } ?? markers.count
        markers.insert(Marker(name: label, frame: frame, kind: kind), at: index)
        return index
    }

    /// Renames marker `index`.
    public mutating func renameMarker(_ index: Int, to name: String) throws(MarkerEditError) {
        guard markers.indices.contains(index) else { throw MarkerEditError("marker \(index + 1) does not exist") }
        let label = name.trimmingWhitespace()
        guard !label.isEmpty else { throw MarkerEditError("a marker needs a name") }
        markers[index].name = label
    }

    /// Moves marker `index` to `frame`, keeping timeline order; returns its new index.
    @discardableResult
    public mutating func moveMarker(_ index: Int, toFrame frame: Int64) throws(MarkerEditError) -> Int {
        guard markers.indices.contains(index) else { throw MarkerEditError("marker \(index + 1) does not exist") }
        let m = markers.remove(at: index)
        return try addMarker(m.name, atFrame: frame, kind: m.kind)
    }

    /// Removes marker `index`.
    public mutating func deleteMarker(_ index: Int) throws(MarkerEditError) {
        guard markers.indices.contains(index) else { throw MarkerEditError("marker \(index + 1) does not exist") }
        markers.remove(at: index)
    }

    /// The first marker after `frame`, if any.
    public func nextMarker(after frame: Int64) -> Marker? {
        markers.filter { $0.frame > frame }.min { $0.frame < $1.frame }
    }

    /// The last marker before `frame`, if any.
    public func previousMarker(before frame: Int64) -> Marker? {
        markers.filter { $0.frame < frame }.max { $0.frame < $1.frame }
    }

    /// The marker at `frame`, or else the nearest one before it: what "this marker" means at
    /// the playhead.
    public func markerIndex(atOrBefore frame: Int64) -> Int? {
        markers.indices.filter { markers[$0].frame <= frame }.max { markers[$0].frame < markers[$1].frame }
    }

    private func checkRange(_ range: FrameRange, _ what: String) throws(MarkerEditError) {
        guard range.startFrame >= 0, range.endFrame <= Session.maximumTimelineFrame else {
            throw MarkerEditError("the \(what) range must lie between the start and \(clockText(Session.maximumTimelineFrame))")
        }
        guard range.endFrame > range.startFrame else { throw MarkerEditError("the \(what) range must end after it starts") }
    }

    /// Sets the loop range (nil clears it and turns looping off); `enabled` nil keeps the switch.
    public mutating func setLoop(_ range: FrameRange?, enabled: Bool? = nil) throws(MarkerEditError) {
        if let range { try checkRange(range, "loop") }
        loopRange = range
        loopEnabled = range == nil ? false : (enabled ?? loopEnabled)
    }

    /// Sets the punch range (nil clears it and turns punching off); `enabled` nil keeps the
    /// switch. The punch range is its own: it never follows the loop range.
    public mutating func setPunch(_ range: FrameRange?, enabled: Bool? = nil) throws(MarkerEditError) {
        if let range { try checkRange(range, "punch") }
        punchRange = range
        punchEnabled = range == nil ? false : (enabled ?? punchEnabled)
    }

    /// `range` with its start (`start` true) or end moved to `frame`. When that would turn it
    /// inside out the other edge follows, a bar away; with no range yet, a bar-long one starts
    /// or ends at `frame`. Nil when `frame` is 0 and is to be an end.
    public func rangeEdge(_ range: FrameRange?, start: Bool, at frame: Int64) -> FrameRange? {
        let bar = max(1, Int64(tempoMap.framesPerBar(atFrame: frame).rounded()))
        if start {
            let end = range.flatMap { $0.endFrame > frame ? $0.endFrame : nil } ?? frame + bar
            return FrameRange(startFrame: frame, endFrame: end)
        }
        guard frame > 0 else { return nil }
        let s = range.flatMap { $0.startFrame < frame ? $0.startFrame : nil } ?? max(0, frame - bar)
        return FrameRange(startFrame: s, endFrame: frame)
    }
}
