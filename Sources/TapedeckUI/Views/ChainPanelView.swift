/// The chain editor panel for the selected track, shown while the chain panel has focus.
public enum ChainPanelView {
    /// Draws the panel in `rows` rows from `y`, full width.
    public static func draw(_ model: ScreenModel, into canvas: inout Canvas, y: Int, rows: Int, glyphs: Glyphs) {
        guard rows > 0 else { return }
        canvas.fill(y, 0, height: rows, width: canvas.width, " ", .normal)
        canvas.fill(y, 0, height: 1, width: canvas.width, glyphs.rule, .ruler)
        let t = model.selectedTrack
        guard model.session.tracks.indices.contains(t) else {
            canvas.put(y, 2, " Chain: no track ", .title)
            return
        }
        let which = model.chainIsInput ? "input" : "playback"
        canvas.put(y, 2, " Chain (\(which)) of \(model.session.tracks[t].name) ", .title)
        let chain = ChainText(model.chainText(t))
        if chain.nodes.isEmpty {
            canvas.put(y + 1, 2, "empty: Enter types a chain, e.g. hpf:cutoff=80,comp:threshold=-18:ratio=4", .dim)
            return
        }
        let room = rows - 1
        let first = max(0, min(model.chainNode - room + 1, chain.nodes.count - room))
        for i in 0..<min(room, chain.nodes.count) {
            let n = first + i
            guard n < chain.nodes.count else { break }
            let node = chain.nodes[n]
            let row = y + 1 + i
            let isSelected = n == model.chainNode
            var x = canvas.put(row, 1, isSelected ? ">" : " ", .selected)
            x = canvas.put(row, x + 1, Fit.pad("\(n + 1). \(node.name)", 14), node.bypassed ? .dim : (isSelected ? .selected : .trackName))
            if node.bypassed { x = canvas.put(row, x, "bypassed ", .muted) }
            for (p, parameter) in node.parameters.enumerated() {
                let shown = model.hooks.describeParameter(node.name, parameter.key, parameter.value) ?? parameter.value
                let active = isSelected && p == model.chainParameter
                x = canvas.put(row, x + 1, "\(parameter.key)=\(shown)", active ? .selected : .value)
                if x >= canvas.width { break }
            }
        }
    }
}
