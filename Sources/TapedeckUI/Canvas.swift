/// One character cell: what it shows and how.
public struct Cell: Equatable, Sendable {
    /// One character of display width 1.
    public var character: Character
    /// The style it is drawn in.
    public var role: Role

    /// Creates a cell.
    public init(_ character: Character, _ role: Role) {
        self.character = character
        self.role = role
    }

    /// An empty cell in the normal style.
    public static let blank = Cell(" ", .normal)
}

/// A frame of the screen as plain values. Views draw into a canvas; the curses layer copies
/// only the rows that differ from the last frame to the terminal, and nothing at all when
/// the frame is the same, which keeps an idle screen nearly free.
public struct Canvas: Equatable, Sendable {
    /// Rows.
    public let height: Int
    /// Columns.
    public let width: Int
    /// `rows[y][x]`.
    public private(set) var rows: [[Cell]]

    /// A blank canvas of `height` rows by `width` columns.
    public init(height: Int, width: Int) {
        self.height = max(0, height)
        self.width = max(0, width)
        rows = Array(repeating: Array(repeating: .blank, count: max(0, width)), count: max(0, height))
    }

    /// The cell at row `y`, column `x` (blank outside).
    public func cell(_ y: Int, _ x: Int) -> Cell {
        guard y >= 0, y < height, x >= 0, x < width else { return .blank }
        return rows[y][x]
    }

    /// Sets one cell; outside the canvas does nothing.
    public mutating func set(_ y: Int, _ x: Int, _ character: Character, _ role: Role) {
        guard y >= 0, y < height, x >= 0, x < width else { return }
        rows[y][x] = Cell(character, role)
    }

    /// Changes the role of one cell, keeping its character.
    public mutating func restyle(_ y: Int, _ x: Int, _ role: Role) {
        guard y >= 0, y < height, x >= 0, x < width else { return }
        rows[y][x].role = role
    }

    /// Writes `text` from (`y`, `x`), clipped to the canvas and to `maxWidth` columns.
    /// Returns the column after the last character written.
    @discardableResult
    public mutating func put(_ y: Int, _ x: Int, _ text: String, _ role: Role, maxWidth: Int = .max) -> Int {
        var col = x
        for c in text {
            if col - x >= maxWidth { break }
            set(y, col, c, role)
            col += 1
        }
        return col
    }

    /// Writes a run of `cells` on row `y` from column `x`, clipped to the canvas: a run worked
    /// out once and kept (a live take's finished columns) is copied in one go.
    public mutating func put(cells: ArraySlice<Cell>, _ y: Int, _ x: Int) {
        guard y >= 0, y < height, !cells.isEmpty else { return }
        let from = max(x, 0), to = min(x + cells.count, width)
        guard to > from else { return }
        let start = cells.startIndex + (from - x)
        // Cell by cell: a replaceSubrange copied each cell through the type's value witnesses,
        // several times slower than the assignment.
        rows[y].withUnsafeMutableBufferPointer { row in
            for i in 0..<(to - from) { row[from + i] = cells[start + i] }
        }
    }

    /// Fills a rectangle with `character`.
    public mutating func fill(_ y: Int, _ x: Int, height h: Int, width w: Int, _ character: Character = " ", _ role: Role) {
        guard h > 0, w > 0 else { return }
        for row in y..<(y + h) {
            for col in x..<(x + w) { set(row, col, character, role) }
        }
    }

    /// Row `y` as a string (for tests and for reading back).
    public func text(row y: Int) -> String {
        guard y >= 0, y < height else { return "" }
        return String(rows[y].map(\.character))
    }

    /// The whole canvas as text, one line per row.
    public var text: String { (0..<height).map { text(row: $0) }.joined(separator: "\n") }
}

/// Text helpers for fixed-width columns.
enum Fit {
    /// `text` cut or padded with spaces to exactly `width` characters.
    static func pad(_ text: String, _ width: Int) -> String {
        guard width > 0 else { return "" }
        if text.count >= width { return String(text.prefix(width)) }
        return text + String(repeating: " ", count: width - text.count)
    }

    /// The first of `texts` (longest first) that fits in `width` characters, else the last
    /// one cut: a label that shortens by whole words rather than being cut mid-word.
    static func first(_ texts: [String], in width: Int) -> String {
        texts.first { $0.count <= width } ?? String((texts.last ?? "").prefix(max(0, width)))
    }

    /// `text` right-aligned in `width` characters.
    static func right(_ text: String, _ width: Int) -> String {
        guard width > 0 else { return "" }
        if text.count >= width { return String(text.suffix(width)) }
        return String(repeating: " ", count: width - text.count) + text
    }
}
