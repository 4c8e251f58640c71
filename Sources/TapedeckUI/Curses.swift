import CNcurses
#if canImport(Glibc)
import Glibc
#endif

/// What reading the keyboard produced.
public enum InputEvent: Equatable, Sendable {
    /// A key.
    case key(Key)
    /// The terminal changed size.
    case resize
    /// Nothing arrived within the timeout.
    case timeout
    /// Input is gone (stdin closed or hung up): the screen must end.
    case closed
}

/// The only file that talks to ncurses: start and end the terminal, turn a theme into colour
/// pairs, copy canvases to the screen (changed rows only), read keys.
/// UI thread only.
public final class Curses {
    private let window: UnsafeMutablePointer<WINDOW>
    private let screen: OpaquePointer?
    private var pairs: [Role: (attrs: attr_t, pair: Int16)] = [:]
    private var last: Canvas?
    /// `TAPEDECK_FRAME_LOG=FILE`: a line for every frame sent to the terminal, so a test, or
    /// anyone, can count what an idle screen draws and see why: the monotonic time in
    /// nanoseconds, then a tab and `ROW:TEXT` for each row that changed (every row when the
    /// frame is drawn whole), tab-separated.
    private let frameLog: Int32? = {
        guard let path = getenv("TAPEDECK_FRAME_LOG").map({ String(cString: $0) }), !path.isEmpty else { return nil }
        let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        return fd >= 0 ? fd : nil
    }()
    private var ended = false
    private var quickErrors = 0
    /// Whether the locale is UTF-8 (else the ASCII glyphs are used).
    public let isUTF8: Bool
    /// Whether colours are in use (the terminal has them and NO_COLOR is not set).
    public private(set) var usesColor = false
    /// Whether the terminal has at least 256 colours.
    public private(set) var has256Colors = false

    /// Takes over the terminal on stdin/stdout. Returns nil when there is no usable terminal
    /// (ncurses could not start: no TERM, unknown terminal), rather than letting ncurses exit.
    public init?() {
        setlocale(LC_ALL, "")
        isUTF8 = td_locale_is_utf8() != 0
        // newterm instead of initscr: initscr exits the process on failure, newterm returns nil.
        guard let out = fdopen(STDOUT_FILENO, "w"), let input = fdopen(STDIN_FILENO, "r"),
              let scr = newterm(nil, out, input) else { return nil }
        screen = scr
        set_term(scr)
        guard let w = td_stdscr() else { return nil }
        window = w
        Curses.configure(window)
    }

    /// A terminal of `height` × `width` that writes to /dev/null, for tests that read cells
    /// back. Returns nil when ncurses cannot start (no terminfo for `term`).
    public init?(testHeight height: Int, width: Int, term: String = "xterm-256color") {
        setlocale(LC_ALL, "C.UTF-8")
        isUTF8 = td_locale_is_utf8() != 0
        guard let out = fopen("/dev/null", "w"), let input = fopen("/dev/null", "r") else { return nil }
        guard let scr = newterm(term, out, input) else { return nil }
        screen = scr
        set_term(scr)
        guard let w = td_stdscr() else { return nil }
        window = w
        resizeterm(Int32(height), Int32(width))
        Curses.configure(window)
    }

    private static func configure(_ window: UnsafeMutablePointer<WINDOW>) {
        raw()            // Ctrl-S, Ctrl-R and Ctrl-C arrive as keys, not as flow control or signals.
        noecho()
        nonl()
        keypad(window, true)
        curs_set(0)
        set_escdelay(25) // Esc closes dialogs without a noticeable wait.
    }

    /// Sets up colour pairs for `theme`; with `allowColor` false (NO_COLOR) only attributes
    /// are used, and the roles that must stand out are drawn reversed.
    public func apply(theme: Theme, allowColor: Bool) {
        if allowColor && has_colors() && !usesColor {
            start_color()
            use_default_colors()
            usesColor = true
        }
        has256Colors = usesColor && td_colors() >= 256
        pairs.removeAll()
        for (i, role) in Role.allCases.enumerated() {
            let style = theme.style(role)
            var attrs = td_a_normal()
            if style.bold { attrs |= td_a_bold() }
            if style.reverse { attrs |= td_a_reverse() }
            if style.underline { attrs |= td_a_underline() }
            if style.dim { attrs |= td_a_dim() }
            var pair: Int16 = 0
            if usesColor, i + 1 < Int(td_color_pairs()) {
                let fg = has256Colors ? style.foreground.index256 : style.foreground.index8
                let bg = has256Colors ? style.background.index256 : style.background.index8
                if fg != -1 || bg != -1 {
                    pair = Int16(i + 1)
                    init_pair(pair, Int16(fg), Int16(bg))
                }
            } else if [.selected, .recording, .error, .clip, .overlayTitle].contains(role) {
                attrs |= td_a_reverse()
            }
            pairs[role] = (attrs, pair)
        }
        last = nil
    }

    /// The terminal's size now.
    public var size: (height: Int, width: Int) {
        (Int(td_getmaxy(window)), Int(td_getmaxx(window)))
    }

    /// Shows `canvas`: rows equal to the last frame are skipped, and nothing is sent at all
    /// when the frame is unchanged.
    public func draw(_ canvas: Canvas) {
        if let last, last == canvas { return }
        let sameSize = last.map { $0.height == canvas.height && $0.width == canvas.width } ?? false
        if !sameSize { werase(window) }
        // Runs of cells share a role: its style is looked up once per run (a role hashes
        // its name, and a playing screen redraws thousands of cells a second).
        var runRole: Role? = nil
        var style = (attrs: td_a_normal(), pair: Int16(0))
        var changedRows: [Int] = []
        for y in 0..<canvas.height {
            if sameSize, let last, last.rows[y] == canvas.rows[y] { continue }
            if frameLog != nil { changedRows.append(y) }
            for x in 0..<canvas.width {
                // The bottom-right cell scrolls some terminals; ncurses handles it, errors are harmless.
                let cell = canvas.rows[y][x]
                if cell.role != runRole {
                    runRole = cell.role
                    style = pairs[cell.role] ?? (td_a_normal(), 0)
                }
                let scalar = cell.character.unicodeScalars.first.map { wchar_t(bitPattern: $0.value) } ?? 32
                _ = td_put_cell(window, Int32(y), Int32(x), scalar, style.attrs, style.pair)
            }
        }
        wnoutrefresh(window)
        doupdate()
        last = canvas
        if let frameLog {
            // Tabs in a row would split it: none are drawn (cells hold printable text).
            let rows = changedRows.map { y in "\(y):" + String(canvas.rows[y].map(\.character)) }
            var line = ([String(MonotonicClock.nanoseconds())] + rows).joined(separator: "\t") + "\n"
            line.withUTF8 { _ = write(frameLog, $0.baseAddress, $0.count) }
        }
    }

    /// Forgets the last frame so the next draw repaints everything.
    public func invalidate() {
        last = nil
        clearok(window, true)
    }

    /// Waits up to `timeoutMilliseconds` for a key.
    public func read(timeoutMilliseconds: Int) -> InputEvent {
        wtimeout(window, Int32(timeoutMilliseconds))
        var ch: wint_t = 0
        let started = MonotonicClock.seconds()
        let status = wget_wch(window, &ch)
        if status == ERR {
            // A timeout takes the whole timeout; an ERR much sooner, again and again, means
            // stdin is closed (ncurses would otherwise spin at full CPU).
            let elapsed = MonotonicClock.seconds() - started
            if elapsed * 1000 < Double(timeoutMilliseconds) / 2 {
                quickErrors += 1
                if quickErrors >= 5 || stdinIsGone() { return .closed }
            } else {
                quickErrors = 0
            }
            return .timeout
        }
        quickErrors = 0
        if status == KEY_CODE_YES {
            let code = Int32(ch)
            if code == td_key_resize() { invalidate(); return .resize }
            return Curses.key(forCode: code).map(InputEvent.key) ?? .timeout
        }
        return Curses.key(forCharacter: UInt32(ch)).map(InputEvent.key) ?? .timeout
    }

    private func stdinIsGone() -> Bool {
        var fds = pollfd(fd: 0, events: Int16(POLLIN), revents: 0)
        guard poll(&fds, 1, 0) >= 0 else { return true }
        return fds.revents & Int16(POLLHUP | POLLNVAL | POLLERR) != 0
    }

    /// The key for an ncurses function-key code.
    static func key(forCode code: Int32) -> Key? {
        switch code {
        case KEY_UP: .named(.up)
        case KEY_DOWN: .named(.down)
        case KEY_LEFT: .named(.left)
        case KEY_RIGHT: .named(.right)
        case KEY_SLEFT: .named(.shiftLeft)
        case KEY_SRIGHT: .named(.shiftRight)
        case KEY_HOME: .named(.home)
        case KEY_END: .named(.end)
        case KEY_PPAGE: .named(.pgup)
        case KEY_NPAGE: .named(.pgdn)
        case KEY_DC: .named(.delete)
        case KEY_IC: .named(.insert)
        case KEY_BACKSPACE: .named(.backspace)
        case KEY_ENTER: .named(.enter)
        case KEY_BTAB: .named(.tab)
        default:
            (1...12).first { td_key_f(Int32($0)) == code }.map { .function($0) }
        }
    }

    /// The key for a character code from the terminal.
    static func key(forCharacter value: UInt32) -> Key? {
        switch value {
        case 9: return .named(.tab)
        case 10, 13: return .named(.enter)
        case 27: return .named(.esc)
        case 8, 127: return .named(.backspace)
        case 32: return .named(.space)
        case 1...26: return .ctrl(Character(Unicode.Scalar(UInt8(value + 96))))
        default:
            guard let scalar = Unicode.Scalar(value), value >= 32 else { return nil }
            return .char(Character(scalar))
        }
    }

    /// Reads back the character, attributes and colour pair of a cell (tests).
    public func cell(_ y: Int, _ x: Int) -> (character: Character, attrs: attr_t, pair: Int16)? {
        var ch: wchar_t = 0
        var attrs: attr_t = 0
        var pair: Int16 = 0
        guard td_read_cell(window, Int32(y), Int32(x), &ch, &attrs, &pair) == OK,
              let scalar = Unicode.Scalar(UInt32(bitPattern: ch)) else { return nil }
        return (Character(scalar), attrs & ~td_a_color(), pair)
    }

    /// The attributes and pair the theme gave `role` (tests compare cells with it).
    public func style(of role: Role) -> (attrs: attr_t, pair: Int16) { pairs[role] ?? (td_a_normal(), 0) }

    /// Gives the terminal back: cursor shown, modes restored. Safe to call twice.
    public func end() {
        guard !ended else { return }
        ended = true
        curs_set(1)
        endwin()
        if let screen { delscreen(screen) }
    }

    deinit { end() }
}
