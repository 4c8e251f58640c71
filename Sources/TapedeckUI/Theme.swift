/// Everything on screen that can have its own look. The raw value is the name used in
/// `.theme` files.
public enum Role: String, CaseIterable, Sendable {
    /// Plain text and empty space.
    case normal
    /// Headings and the session name.
    case title
    /// Field names.
    case label
    /// Field values.
    case value
    /// Hints and placeholders.
    case dim
    /// Transport state words.
    case stopped, playing, recording
    /// The selected track row.
    case selected
    /// Track names.
    case trackName = "track-name"
    /// Arm, mute and solo indicators.
    case armed, muted, solo
    /// Meter zones: below −18, −18…−6, above −6 dBFS.
    case meterLow = "meter-low", meterMid = "meter-mid", meterHigh = "meter-high"
    /// The peak-hold tick.
    case meterHold = "meter-hold"
    /// The clip marker.
    case clip
    /// Waveforms of audible and of muted tracks.
    case waveform, waveformMuted = "waveform-muted"
    /// Region background.
    case region
    /// Fade curves on the timeline.
    case fade
    /// Timeline decorations.
    case playhead, loop, punch, marker, ruler
    /// The message line, and errors on it.
    case message, error
    /// Dialog boxes and their titles.
    case overlay, overlayTitle = "overlay-title"
    /// Attention: offline device, too-small terminal.
    case notice
}

/// One terminal colour: the 256-colour index and what to use on an 8-colour terminal.
public struct ThemeColor: Equatable, Sendable {
    /// Index 0…255, or −1 for the terminal's own default.
    public var index256: Int
    /// Index 0…7 (or −1) used when the terminal has only 8 colours.
    public var index8: Int

    /// A colour with an explicit 8-colour fallback (else the nearest basic colour).
    public init(_ index256: Int, fallback8: Int? = nil) {
        self.index256 = index256
        self.index8 = fallback8 ?? ThemeColor.nearest8(index256)
    }

    /// The terminal's default colour.
    public static let terminalDefault = ThemeColor(-1)

    /// The closest of the 8 basic colours to an xterm 256-colour index.
    public static func nearest8(_ i: Int) -> Int {
        if i < 8 { return i }
        if i < 16 { return i - 8 }
        if i >= 232 { return i < 244 ? 0 : 7 }
        let c = i - 16
        let r = c / 36, g = (c / 6) % 6, b = c % 6
        // Each basic colour is one bit per primary; a primary counts when it is bright.
        let bit = { (v: Int) in v >= 3 ? 1 : 0 }
        return bit(r) | bit(g) << 1 | bit(b) << 2
    }
}

/// How one role looks.
public struct Style: Equatable, Sendable {
    /// Foreground colour.
    public var foreground: ThemeColor = .terminalDefault
    /// Background colour.
    public var background: ThemeColor = .terminalDefault
    /// Bold text.
    public var bold = false
    /// Swapped foreground and background.
    public var reverse = false
    /// Underlined text.
    public var underline = false
    /// Dim text.
    public var dim = false

    /// A plain style in the terminal's colours.
    public init() {}
}

/// A named set of styles, one per ``Role``, read from a `.theme` file:
///
/// ```
/// # comment
/// name = default
/// playing = green default bold
/// recording = 196/red default bold reverse
/// ```
/// Each style line is `ROLE = FOREGROUND BACKGROUND [bold] [reverse] [underline] [dim]`; a
/// colour is a name (black red green yellow blue magenta cyan white default), a 256-colour
/// index, or `INDEX/FALLBACK` giving the colour to use on an 8-colour terminal. Roles not
/// listed look like `normal`.
public struct Theme: Equatable, Sendable {
    /// The theme's name.
    public var name: String
    /// Style per role; missing roles use `normal`.
    public var styles: [Role: Style]

    /// Creates a theme.
    public init(name: String, styles: [Role: Style]) {
        self.name = name
        self.styles = styles
    }

    /// The style for `role`.
    public func style(_ role: Role) -> Style { styles[role] ?? styles[.normal] ?? Style() }

    /// Why a theme file was refused: every bad line and what is wrong with it.
    public struct ParseError: Error, Equatable, Sendable, CustomStringConvertible {
        /// The file (or theme name) concerned.
        public var source: String
        /// 1-based number of the first bad line.
        public var line: Int
        /// What is wrong with it.
        public var reason: String
        /// Every bad line after the first, with its reason.
        public var more: [Problem] = []

        /// One bad line.
        public struct Problem: Equatable, Sendable {
            /// 1-based line number.
            public var line: Int
            /// What is wrong with it.
            public var reason: String
        }

        /// `SOURCE line N: REASON`, then `; line M: REASON` for each other bad line.
        public var description: String {
            ([Problem(line: line, reason: reason)] + more).enumerated().map { i, p in
                (i == 0 ? "\(source.terminalSafe) line " : "line ") + "\(p.line): \(p.reason.terminalSafe)"
            }.joined(separator: "; ")
        }
    }

    private static let colorNames = ["black", "red", "green", "yellow", "blue", "magenta", "cyan", "white"]

    /// Parses theme text; `source` names it in errors. A theme with any bad line is refused
    /// whole, so a half-applied theme never shows; the error names every bad line.
    public static func parse(_ text: String, source: String) throws(ParseError) -> Theme {
        try parse(lines: SettingsText.lines(text), source: source)
    }

    /// The same for lines already split (nil: a line that is not valid UTF-8).
    static func parse(lines: [String?], source: String) throws(ParseError) -> Theme {
        var theme = Theme(name: source, styles: [:])
        var problems: [ParseError.Problem] = []
        for (i, decoded) in lines.enumerated() {
            do throws(ParseError) {
                try parseLine(decoded, into: &theme, lineNumber: i + 1, source: source)
            } catch {
                problems.append(ParseError.Problem(line: error.line, reason: error.reason))
            }
        }
        if let first = problems.first {
            throw ParseError(source: source, line: first.line, reason: first.reason, more: Array(problems.dropFirst()))
        }
        return theme
    }

    /// Applies one line of a theme file to `theme`.
    private static func parseLine(_ decoded: String?, into theme: inout Theme, lineNumber: Int, source: String) throws(ParseError) {
        func fail(_ reason: String) -> ParseError { ParseError(source: source, line: lineNumber, reason: reason) }
        guard let raw = decoded else { throw fail("not valid UTF-8") }
        let line = raw.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
        let trimmed = line.trimmingWhitespace()
        if trimmed.isEmpty { return }
        guard let eq = trimmed.firstIndex(of: "=") else { throw fail("expected 'role = foreground background [bold]'") }
        let key = String(trimmed[..<eq]).trimmingWhitespace()
        let value = String(trimmed[trimmed.index(after: eq)...]).trimmingWhitespace()
        if key == "name" {
            guard !value.isEmpty else { throw fail("name is empty") }
            theme.name = value
            return
        }
        guard let role = Role(rawValue: key) else { throw fail("unknown role '\(key)'") }
        let words = value.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        guard words.count >= 2 else { throw fail("'\(key)' needs a foreground and a background colour") }
        var style = Style()
        guard let fg = color(words[0]) else { throw fail("'\(words[0])' is not a colour") }
        guard let bg = color(words[1]) else { throw fail("'\(words[1])' is not a colour") }
        style.foreground = fg
        style.background = bg
        for word in words.dropFirst(2) {
            switch word {
            case "bold": style.bold = true
            case "reverse": style.reverse = true
            case "underline": style.underline = true
            case "dim": style.dim = true
            default: throw fail("'\(word)' is not bold, reverse, underline or dim")
            }
        }
        theme.styles[role] = style
    }

    private static func color(_ word: String) -> ThemeColor? {
        let parts = word.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard parts.count <= 2, let main = basic(parts[0]) ?? index(parts[0], max: 255) else { return nil }
        if parts.count == 2 {
            guard let fb = basic(parts[1]) ?? index(parts[1], max: 7) else { return nil }
            return ThemeColor(main, fallback8: fb)
        }
        return ThemeColor(main)
    }

    private static func basic(_ word: String) -> Int? {
        if word == "default" { return -1 }
        return colorNames.firstIndex(of: word)
    }

    private static func index(_ word: String, max: Int) -> Int? {
        guard let n = Int(word), n >= 0, n <= max else { return nil }
        return n
    }

    /// The built-in default theme, used when no theme file can be read. Kept identical to
    /// `Themes/default.theme` (a test checks).
    public static let builtInDefaultText = """
    # Tapedeck default theme: light text on the terminal's own background.
    name = default
    normal = default default
    title = 75/cyan default bold
    label = 245/white default
    value = default default bold
    dim = 242/white default
    stopped = default default bold
    playing = 40/green default bold
    recording = 231/white 160/red bold
    selected = default 237/blue bold
    track-name = default default bold
    armed = 196/red default bold
    muted = 214/yellow default bold
    solo = 51/cyan default bold
    meter-low = 40/green default
    meter-mid = 220/yellow default
    meter-high = 202/red default
    meter-hold = 231/white default bold
    clip = 231/white 160/red bold
    waveform = 110/cyan default
    waveform-muted = 240/white default
    region = 110/cyan 235/black
    fade = 213/magenta default bold
    playhead = 226/yellow default bold
    loop = 34/green default
    punch = 203/red default
    marker = 213/magenta default bold
    ruler = 248/white default
    message = 250/white default
    error = 231/white 124/red bold
    overlay = 252/white 236/black
    overlay-title = 75/cyan 236/black bold
    notice = 226/yellow default bold

    """

    /// ``builtInDefaultText`` parsed.
    public static let builtInDefault: Theme = {
        (try? parse(builtInDefaultText, source: "default")) ?? Theme(name: "default", styles: [:])
    }()
}

extension String {
    func trimmingWhitespace() -> String {
        var s = Substring(self)
        while let f = s.first, f.isWhitespace { s.removeFirst() }
        while let l = s.last, l.isWhitespace { s.removeLast() }
        return String(s)
    }
}
