/// The help overlay: every action with its keys, in columns, plus the fixed panel keys.
public enum HelpOverlay {
    /// The help entries: keys and what they do, one per action, in key-map order.
    public static func entries(_ keyMap: KeyMap) -> [(keys: String, summary: String)] {
        Action.allCases.map { action in
            let keys = keyMap.keys(for: action).map(\.name).joined(separator: " ")
            return (keys.isEmpty ? "(none)" : keys, action.summary)
        }
    }

    /// Lines about the chain panel and dialogs, whose keys are fixed.
    public static let panelLines = [
        "chain panel (Tab): up/down node  , . parameter  left/right fine  shift/pgup/pgdn coarse",
        "  b bypass  K/J move  x remove  Enter edit text  / input or playback chain",
        "dialogs: Enter ok  Esc cancel  y/n answer.  Remap keys in ~/.config/tapedeck/keys",
    ]

    /// Draws the overlay centred on the canvas.
    public static func draw(_ model: ScreenModel, into canvas: inout Canvas, glyphs: Glyphs) {
        let items = entries(model.keyMap)
        let columnWidth = 40
        let columns = max(1, min(2, (canvas.width - 4) / columnWidth))
        let perColumn = (items.count + columns - 1) / columns
        let box = Box(height: perColumn + panelLines.count + 4, width: columns * columnWidth + 4, in: canvas)
        let top = box.draw(into: &canvas, title: "Keys — any key closes", glyphs: glyphs)
        let room = box.height - 3 - panelLines.count
        for (i, item) in items.enumerated() {
            let col = i / perColumn, row = i % perColumn
            guard row < room else { continue }
            let x = box.left + 2 + col * columnWidth
            let keyText = Fit.pad(item.keys, 12)
            canvas.put(top + row, x, keyText, .overlayTitle, maxWidth: box.width - 4)
            canvas.put(top + row, x + 13, item.summary, .overlay, maxWidth: min(columnWidth - 14, box.left + box.width - 2 - (x + 13)))
        }
        for (i, line) in panelLines.enumerated() {
            box.line(&canvas, top + min(perColumn, room) + 1 + i - 1 + 1, line, .dim)
        }
    }
}
