import TapedeckDSP

/// The chain editor panel for the selected track, shown while the chain panel has focus:
/// each node with every parameter's value and unit (the ones the chain leaves at their
/// default dimmed), bypassed nodes marked.
public enum ChainPanelView {
    /// Draws the panel in `rows` rows from `y`, full width.
    public static func draw(_ model: ScreenModel, into canvas: inout Canvas, y: Int, rows: Int, glyphs: Glyphs) {
        guard rows > 0 else { return }
        canvas.fill(y, 0, height: rows, width: canvas.width, " ", .normal)
        canvas.fill(y, 0, height: 1, width: canvas.width, glyphs.rule, .ruler)
        let t = model.chainTrack
        if t == ScreenModel.masterChainTrack {
            canvas.put(y, 2, " Chain of master ", .title)
        } else {
            guard model.session.tracks.indices.contains(t) else {
                canvas.put(y, 2, " Chain: no track ", .title)
                return
            }
            let which = model.chainIsInput ? "input" : "playback"
            canvas.put(y, 2, " Chain (\(which)) of \(model.session.tracks[t].name) ", .title)
        }
        let chain: Chain
        do { chain = try model.parsedChain(t) } catch {
            canvas.put(y + 1, 2, "\(error.message) — Enter retypes it", .error, maxWidth: canvas.width - 3)
            return
        }
        if chain.entries.isEmpty {
            canvas.put(y + 1, 2, "empty: Enter types a chain, e.g. hpf:80,comp:threshold=-18:ratio=4", .dim)
            return
        }
        let room = rows - 1
        let first = max(0, min(model.chainNode - room + 1, chain.entries.count - room))
        for i in 0..<min(room, chain.entries.count) {
            let n = first + i
            guard n < chain.entries.count else { break }
            let entry = chain.entries[n]
            let row = y + 1 + i
            let isSelected = n == model.chainNode
            var x = canvas.put(row, 1, isSelected ? ">" : " ", .selected)
            x = canvas.put(row, x + 1, Fit.pad(Fit.shortened("\(n + 1). \(label(entry.node, registry: model.chainRegistry))", 14), 14),
                           entry.bypassed ? .dim : (isSelected ? .selected : .trackName))
            if entry.bypassed { x = canvas.put(row, x, "bypassed ", .muted) }
            // Whole parameters only: one that does not fit is not cut, a "…" says there is more.
            for (p, state) in chain.parameters(of: n, registry: model.chainRegistry).enumerated() {
                let active = isSelected && p == model.chainParameter
                let text = "\(state.definition.id)=\(state.displayText)"
                guard x + 1 + text.count <= canvas.width else {
                    if x + 2 <= canvas.width { canvas.put(row, x + 1, "…", .dim) }
                    break
                }
                x = canvas.put(row, x + 1, text, active ? .selected : (state.isSet ? .value : .dim))
            }
        }
    }

    /// What the panel calls a node: a built-in's own short name (`hpf`); a plugin's name
    /// (`Simple amplifier`), since its identifier (`lv2:http://plugin.org.uk/…`) cut to the
    /// column says only "lv2:http:/…" whichever plugin it is.
    static func label(_ node: String, registry: NodeRegistry) -> String {
        guard node.contains(":"), let name = registry.descriptor(named: node)?.displayName, !name.isEmpty else { return node }
        return name
    }
}
