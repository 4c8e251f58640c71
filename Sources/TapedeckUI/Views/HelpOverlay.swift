/// The help overlay: every action under its heading with its keys and the name the keys file
/// uses for it, then the fixed keys of the panels and dialogs. It reflows to the terminal's
/// width (one column, or two when there is room) and scrolls.
public enum HelpOverlay {
    /// One line of help.
    enum Line: Equatable {
        /// A heading.
        case heading(String)
        /// Keys, the keys-file action name, what it does.
        case entry(keys: String, action: String, summary: String)
        /// Plain text.
        case text(String)
    }

    /// Columns of one help column: keys, action name, summary.
    static let keysWidth = 12, actionWidth = 18, summaryWidth = 31
    static var columnWidth: Int { keysWidth + actionWidth + summaryWidth + 2 }

    /// Lines about the panels and dialogs, whose keys are fixed.
    public static let panelLines = [
        // Each under a column's width (62), so no line is cut at 80×24.
        "chain panel (Tab): up/down node  , . parameter",
        "  left/right fine, shift-left/right pgup/pgdn coarse",
        "  b bypass  K/J move  x remove  Enter edit as text",
        "  / input or playback chain",
        "mixer view: left/right strip (the last is Master)",
        "  up/down fader, pgup/pgdn coarse; the track keys act",
        "  on the selected strip. Under the strips: sends (* is",
        "  pre-fader; the highlighted one is what the send keys",
        "  change), output, delay compensation (dly)",
        "automation lane (V shows them, down selects one): Enter",
        "  adds a point at the playhead, x deletes it, shift-left/",
        "  right move it, 9 0 ( ) step its value, Y the mode",
        "monitoring (o; - I A after R M S) of an armed track:",
        "  off: its disk only, the input never heard",
        "  input: the input, stopped and rolling, never its disk",
        "  auto: the input while stopped or recording (from the",
        "  count-in or pre-roll on), its disk while it only plays",
        "choices (bus, output): up/down, Enter; new bus: s / m",
        "dialogs: Enter ok  Esc cancel  y/n answer",
        "  import: type to filter",
        "keys file ~/.config/tapedeck/keys:",
        "  'action = key, key' per line",
    ]

    /// Every help line: each section's heading and its actions (those with no key too, shown
    /// as `(none)`), then the panel keys.
    static func lines(_ keyMap: KeyMap) -> [Line] {
        var out: [Line] = []
        var sections: [String] = []
        for a in Action.allCases where !sections.contains(a.section) { sections.append(a.section) }
        for section in sections {
            out.append(.heading(section))
            for a in Action.allCases where a.section == section {
                let keys = keyMap.keys(for: a).map(\.name).joined(separator: " ")
                out.append(.entry(keys: keys.isEmpty ? "(none)" : keys, action: a.rawValue, summary: a.summary))
            }
        }
        out.append(.heading("Panels and dialogs"))
        out += panelLines.map(Line.text)
        return out
    }

    /// Draws the overlay scrolled down by `scroll` lines (clamped), centred on the canvas.
    public static func draw(_ model: ScreenModel, scroll: Int, into canvas: inout Canvas, glyphs: Glyphs) {
        let all = lines(model.keyMap)
        let columns = max(1, min(2, (canvas.width - 4) / columnWidth))
        let box = Box(height: canvas.height - 2, width: min(canvas.width - 2, columns * columnWidth + 4), in: canvas)
        let top = box.draw(into: &canvas, title: "Keys (the keys file names them by the middle word)", glyphs: glyphs)
        let room = max(1, box.height - 2)
        let perColumn = max(room, (all.count + columns - 1) / columns)
        let maxScroll = max(0, perColumn - room)
        let offset = min(max(0, scroll), maxScroll)
        model.helpPageRows = room
        model.helpMaxScroll = maxScroll
        let innerWidth = box.width - 4
        let width = columns == 1 ? innerWidth : columnWidth
        for col in 0..<columns {
            let x = box.left + 2 + col * columnWidth
            for row in 0..<room {
                let i = col * perColumn + offset + row
                guard i < all.count, i < (col + 1) * perColumn else { break }
                draw(all[i], y: top + row, x: x, width: width, canvas: &canvas)
            }
        }
        let footer = maxScroll > 0 ? "up/down pgup/pgdn scroll (\(offset + 1)-\(offset + room) of \(perColumn)) · other keys close"
                                   : "any key closes"
        canvas.put(box.top + box.height - 1, box.left + 2, " \(footer) ", .dim, maxWidth: max(0, box.width - 4))
    }

    private static func draw(_ line: Line, y: Int, x: Int, width: Int, canvas: inout Canvas) {
        switch line {
        case .heading(let t): canvas.put(y, x, t, .overlayTitle, maxWidth: width)
        case .text(let t): canvas.put(y, x, t, .dim, maxWidth: width)
        case .entry(let keys, let action, let summary):
            canvas.put(y, x, Fit.pad(keys, keysWidth - 1), .overlayTitle, maxWidth: width)
            canvas.put(y, x + keysWidth, Fit.pad(action, actionWidth - 1), .label, maxWidth: max(0, width - keysWidth))
            canvas.put(y, x + keysWidth + actionWidth, summary, .overlay, maxWidth: max(0, width - keysWidth - actionWidth))
        }
    }
}
