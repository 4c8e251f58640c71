/// Draws the dialogs: confirmation, text input, device chooser, import browser, export.
public enum DialogView {
    /// Draws `model.overlay` (other than help) centred on the canvas.
    public static func draw(_ model: ScreenModel, into canvas: inout Canvas, glyphs: Glyphs) {
        guard let overlay = model.overlay else { return }
        let wide = min(canvas.width - 2, 76)
        switch overlay {
        case .help(let scroll):
            HelpOverlay.draw(model, scroll: scroll, into: &canvas, glyphs: glyphs)
        case .confirm(let question):
            let box = Box(height: 5, width: max(question.question.count, question.answers.count) + 6, in: canvas)
            let top = box.draw(into: &canvas, title: "Confirm", glyphs: glyphs)
            box.line(&canvas, top, question.question, .overlayTitle)
            box.line(&canvas, top + 2, question.answers)
        case .text(let input):
            let box = Box(height: (input.problem == nil ? 6 : 7) + input.notes.count, width: wide, in: canvas)
            let top = box.draw(into: &canvas, title: title(input.purpose), glyphs: glyphs)
            box.line(&canvas, top, input.prompt)
            // Show the end of long text, where the cursor is.
            let room = box.width - 6
            let shown = input.text.count > room ? String(input.text.suffix(room)) : input.text
            // An offered value shows selected: typing replaces it.
            if input.offered {
                box.line(&canvas, top + 1, "> ", .value)
                box.line(&canvas, top + 1, "  " + shown, .selected)
            } else {
                box.line(&canvas, top + 1, "> " + shown + "_", .value)
            }
            for (i, note) in input.notes.enumerated() { box.line(&canvas, top + 2 + i, note, .dim) }
            if let problem = input.problem { box.line(&canvas, top + 2 + input.notes.count, problem, .error) }
            box.line(&canvas, box.top + box.height - 2, "Enter ok · Esc cancel", .dim)
        case .devices(let list, let selected):
            let box = Box(height: min(list.count, 12) + 4, width: wide, in: canvas)
            let top = box.draw(into: &canvas, title: "Audio device", glyphs: glyphs)
            drawList(list, selected: selected, box: box, top: top, canvas: &canvas)
            box.line(&canvas, box.top + box.height - 2, "up/down choose · Enter use · Esc close", .dim)
        case .importBrowser(let browser):
            let entries = browser.entries
            let box = Box(height: min(max(entries.count, 1), 14) + 6, width: wide, in: canvas)
            let top = box.draw(into: &canvas, title: "Import an audio file onto a new track", glyphs: glyphs)
            box.line(&canvas, top, browser.folder, .label)
            box.line(&canvas, top + 1, browser.filter.isEmpty ? "type to filter" : "filter: \(browser.filter)_", browser.filter.isEmpty ? .dim : .value)
            if entries.isEmpty { box.line(&canvas, top + 2, "no folder or audio file matches", .dim) }
            drawList(entries, selected: browser.selected, box: box, top: top + 2, canvas: &canvas)
            box.line(&canvas, box.top + box.height - 2, "Enter open folder / import at the playhead · Esc close", .dim)
        case .choice(let choice):
            let box = Box(height: min(choice.items.count, 12) + 4 + (choice.note == nil ? 0 : 1), width: min(wide, 50), in: canvas)
            let top = box.draw(into: &canvas, title: choice.title, glyphs: glyphs)
            drawList(choice.items, selected: choice.selected, box: box, top: top, canvas: &canvas,
                     reserved: choice.note == nil ? 0 : 1)
            if let note = choice.note { box.line(&canvas, box.top + box.height - 3, note, .dim) }
            box.line(&canvas, box.top + box.height - 2, "up/down choose · Enter ok · Esc cancel", .dim)
        case .export(let job, let path):
            let box = Box(height: 10, width: wide, in: canvas)
            let top = box.draw(into: &canvas, title: "Export", glyphs: glyphs)
            box.line(&canvas, top, path, .label)
            switch job.status {
            case .running(let fraction):
                let barWidth = max(4, box.width - 12)
                let filled = Int(Double(barWidth) * fraction)
                let bar = String(repeating: glyphs.meterFull, count: filled) + String(repeating: glyphs.meterEmpty, count: barWidth - filled)
                box.line(&canvas, top + 1, "\(bar) \(Int(fraction * 100))%", .value)
                box.line(&canvas, top + 3, "exporting… Esc hides this window", .dim)
            case .done(let summary):
                // The summary and the loudness line, wrapped: the numbers are the point.
                for (i, line) in wrapped(summary, width: box.width - 4, lines: 5).enumerated() { box.line(&canvas, top + 1 + i, line, .value) }
                box.line(&canvas, box.top + box.height - 2, "done · any key closes", .dim)
            case .failed(let reason):
                for (i, line) in wrapped(reason, width: box.width - 4, lines: 5).enumerated() { box.line(&canvas, top + 1 + i, line, .error) }
                box.line(&canvas, box.top + box.height - 2, "failed · any key closes", .dim)
            }
        }
    }

    /// `text` in lines of at most `width`, broken at spaces where it can, at most `lines` of
    /// them (the last ends in … when cut).
    static func wrapped(_ text: String, width: Int, lines: Int) -> [String] {
        guard width > 1 else { return [] }
        var out: [String] = []
        var rest = Substring(text)
        while !rest.isEmpty && out.count < lines {
            if rest.count <= width { out.append(String(rest)); rest = ""; break }
            let head = rest.prefix(width)
            let cut = head.lastIndex(of: " ").map { rest.distance(from: rest.startIndex, to: $0) } ?? width
            let take = cut > width / 2 ? cut : width
            out.append(String(rest.prefix(take)))
            rest = rest.dropFirst(take).drop { $0 == " " }
        }
        if !rest.isEmpty, let last = out.popLast() { out.append(String(last.prefix(width - 1)) + "…") }
        return out
    }

    private static func title(_ purpose: TextPurpose) -> String {
        switch purpose {
        case .chain: "Chain"
        case .saveAs: "Save as"
        case .exportPath: "Export"
        case .renameTrack: "Rename track"
        case .renameMarker: "Rename marker"
        case .input: "Input"
        case .stretch: "Stretch region"
        case .quantize: "Quantise"
        case .newBus: "New bus"
        case .sendLevel: "Send level"
        case .output: "Output"
        case .automationLane: "Automation lane"
        case .tempo: "Tempo map"
        }
    }

    private static func drawList(_ items: [String], selected: Int, box: Box, top: Int, canvas: inout Canvas, reserved: Int = 0) {
        let room = max(1, box.height - 3 - reserved - (top - box.top - 1))
        let first = max(0, min(selected - room + 1, items.count - room))
        for i in 0..<min(room, items.count) {
            let index = first + i
            guard index < items.count else { break }
            let isSelected = index == selected
            box.line(&canvas, top + i, (isSelected ? "> " : "  ") + items[index], isSelected ? .selected : .overlay)
        }
    }
}
