import TapedeckCore

// MARK: - Markers and the loop and punch ranges

extension ScreenModel {
    /// A marker at the playhead, named `M1`, `M2`… (`K` renames it).
    func addMarker() {
        let at = playheadFrame
        let index: Int
        do {
            index = try owner.change { try $0.apply(MarkerChange.add(name: "", atFrame: at)) } ?? 0
        } catch {
            say("\(error)", error: true)
            return
        }
        say("marker \(session.markers[index].name) at \(clock(at)) (\(keyName(.markerRename)) renames it)")
    }

    /// The marker at the playhead or the nearest one before it.
    private func currentMarker() -> Int? {
        guard let i = session.markerIndex(atOrBefore: playheadFrame) else {
            say(session.markers.isEmpty ? "no markers yet (\(keyName(.marker)) adds one at the playhead)"
                                        : "no marker at or before the playhead", error: true)
            return nil
        }
        return i
    }

    /// Asks for a new name for the marker at (or before) the playhead.
    func openMarkerRename() {
        guard let i = currentMarker() else { return }
        overlay = .text(TextInput(purpose: .renameMarker(i), prompt: "Name of the marker at \(clock(session.markers[i].frame)):",
                                  text: session.markers[i].name, offered: true))
    }

    /// Deletes the marker at (or before) the playhead; undoable.
    func deleteMarker() {
        guard let i = currentMarker() else { return }
        let m = session.markers[i]
        // The index is the session's own (currentMarker), so the delete cannot be refused.
        _ = try? owner.change { try $0.apply(MarkerChange.delete(index: i)) }
        say("deleted marker \(m.name) at \(clock(m.frame)) (\(keyName(.undo)) brings it back)")
    }

    /// Moves the playhead to the next or previous marker.
    func jumpToMarker(next: Bool) {
        let here = playheadFrame
        guard let m = next ? session.nextMarker(after: here) : session.previousMarker(before: here) else {
            say("no marker \(next ? "after" : "before") the playhead")
            return
        }
        locate(m.frame)
        say("\(m.name) at \(clock(m.frame))")
    }

    /// Sets an edge of the loop or the punch range at the playhead. The two ranges are
    /// independent.
    func setRangeEdge(loop: Bool, start: Bool) {
        let what = loop ? "loop" : "punch"
        guard let range = session.rangeEdge(loop ? session.loopRange : session.punchRange, start: start, at: playheadFrame) else {
            say("the \(what) end must come after the start", error: true)
            return
        }
        do {
            let change: RangeChange = loop ? .loop(range, enabled: nil) : .punch(range, enabled: nil)
            try owner.change { try $0.apply(change) }
        } catch {
            say("\(error)", error: true)
            return
        }
        say("\(what) \(clock(range.startFrame))-\(clock(range.endFrame))")
    }

    /// `m:ss.mmm` of a frame, for messages.
    func clock(_ frame: Int64) -> String { session.clockText(frame) }
}
