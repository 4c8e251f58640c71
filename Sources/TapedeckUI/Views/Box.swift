/// A framed box for overlays and dialogs, centred on the canvas.
struct Box {
    let top: Int, left: Int, height: Int, width: Int

    /// A box of at most `height` × `width`, shrunk to fit the canvas, centred.
    init(height: Int, width: Int, in canvas: Canvas) {
        self.height = min(height, canvas.height)
        self.width = min(width, canvas.width)
        top = (canvas.height - self.height) / 2
        left = (canvas.width - self.width) / 2
    }

    /// Fills the box, draws its frame and the title; returns the first inner row.
    @discardableResult
    func draw(into canvas: inout Canvas, title: String, glyphs: Glyphs) -> Int {
        canvas.fill(top, left, height: height, width: width, " ", .overlay)
        let ascii = glyphs == .ascii
        let h: Character = ascii ? "-" : "─", v: Character = ascii ? "|" : "│"
        for x in left..<(left + width) { canvas.set(top, x, h, .overlay); canvas.set(top + height - 1, x, h, .overlay) }
        for y in top..<(top + height) { canvas.set(y, left, v, .overlay); canvas.set(y, left + width - 1, v, .overlay) }
        let corners: [Character] = ascii ? ["+", "+", "+", "+"] : ["┌", "┐", "└", "┘"]
        canvas.set(top, left, corners[0], .overlay)
        canvas.set(top, left + width - 1, corners[1], .overlay)
        canvas.set(top + height - 1, left, corners[2], .overlay)
        canvas.set(top + height - 1, left + width - 1, corners[3], .overlay)
        canvas.put(top, left + 2, " \(title) ", .overlayTitle, maxWidth: max(0, width - 4))
        return top + 1
    }

    /// Writes one line inside the box, clipped to it.
    func line(_ canvas: inout Canvas, _ row: Int, _ text: String, _ role: Role = .overlay) {
        guard row > top, row < top + height - 1 else { return }
        canvas.put(row, left + 2, text, role, maxWidth: max(0, width - 4))
    }
}
