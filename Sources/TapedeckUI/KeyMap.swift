import TapedeckCore

/// One key press, as the screen understands it.
public enum Key: Hashable, Sendable {
    /// A printable character (`r`, `?`, `[`).
    case char(Character)
    /// Control plus a letter (`ctrl-r`).
    case ctrl(Character)
    /// A key without a character.
    case named(NamedKey)
    /// Function key F1…F12.
    case function(Int)

    /// Parses a key name as written in the keys file: `space`, `tab`, `enter`, `esc`,
    /// `backspace`, `delete`, `insert`, `up`, `down`, `left`, `right`, `shift-left`,
    /// `shift-right`, `home`, `end`, `pgup`, `pgdn`, `f1`…`f12`, `ctrl-x` (or `^x`, `c-x`),
    /// or a single character.
    public init?(name: String) {
        let lower = name.lowercased()
        if let n = NamedKey(rawValue: lower) { self = .named(n); return }
        if lower.count >= 2, lower.hasPrefix("f"), let n = Int(lower.dropFirst()), (1...12).contains(n) {
            self = .function(n); return
        }
        for prefix in ["ctrl-", "ctrl+", "c-", "^"] where lower.hasPrefix(prefix) && lower.count == prefix.count + 1 {
            guard let c = lower.last, c.isLetter, c.isASCII else { return nil }
            self = .ctrl(c); return
        }
        // A control, unprintable or bidi character is no key anyone can see or press.
        if name.count == 1, let c = name.first, !c.isWhitespace, !c.unicodeScalars.contains(where: SafeText.needsEscape) {
            self = .char(c); return
        }
        return nil
    }

    /// The name used in the keys file and the help overlay.
    public var name: String {
        switch self {
        case .char(let c): String(c)
        case .ctrl(let c): "ctrl-\(c)"
        case .named(let n): n.rawValue
        case .function(let n): "f\(n)"
        }
    }
}

/// Keys that have names rather than characters.
public enum NamedKey: String, Sendable, CaseIterable {
    /// Whitespace and editing keys.
    case space, tab, enter, esc, backspace, delete, insert
    /// Arrows.
    case up, down, left, right
    /// Shifted arrows (coarse steps).
    case shiftLeft = "shift-left", shiftRight = "shift-right"
    /// Navigation.
    case home, end, pgup, pgdn
}

/// Everything a key can be bound to. The raw value is the name in the keys file (and in the
/// help overlay).
public enum Action: String, CaseIterable, Sendable {
    /// Transport.
    case play, record, home, end, loop, punch
    /// Loop and punch edges at the playhead.
    case loopStart = "loop-start", loopEnd = "loop-end", punchStart = "punch-start", punchEnd = "punch-end"
    /// Selection and playhead.
    case up, down, left, right
    /// Timeline zoom.
    case zoomIn = "zoom-in", zoomOut = "zoom-out"
    /// Track switches.
    case mute, solo, arm
    /// Track list edits.
    case newTrack = "new-track", deleteTrack = "delete-track", rename, input
    /// The mixer: faders, pan, resets, the mixer view; the meters' reset (clip lights and
    /// loudness) and the master's EBU R128 loudness on the status line.
    case faderDown = "fader-down", faderUp = "fader-up", faderDownCoarse = "fader-down-coarse", faderUpCoarse = "fader-up-coarse"
    case panLeft = "pan-left", panRight = "pan-right", panLeftCoarse = "pan-left-coarse", panRightCoarse = "pan-right-coarse"
    case resetFader = "reset-fader", resetPan = "reset-pan", mixer, resetMeters = "reset-meters", loudness
    /// Routing (listed after the mixer in the help): buses, sends (added, chosen, stepped,
    /// typed, pre/post, removed), the strip's output, a bus's solo-safe.
    case newBus = "new-bus", send, sendNext = "send-next", sendRemove = "send-remove"
    case sendDown = "send-down", sendUp = "send-up", sendDownCoarse = "send-down-coarse", sendUpCoarse = "send-up-coarse"
    case sendLevel = "send-level", sendPre = "send-pre", output, soloSafe = "solo-safe"
    /// Regions: selection and editing.
    case selectRegion = "select-region", regionPrevious = "region-previous", regionNext = "region-next"
    case moveLeft = "move-left", moveRight = "move-right", nudgeLeft = "nudge-left", nudgeRight = "nudge-right"
    case trimStart = "trim-start", trimEnd = "trim-end", split, fadeIn = "fade-in", fadeOut = "fade-out"
    case regionGainDown = "region-gain-down", regionGainUp = "region-gain-up", stretch
    case deleteRegion = "delete-region", duplicate, copy, paste, raise, snap
    /// Focus.
    case nextPanel = "next-panel"
    /// History, file and program.
    case undo, redo, save, quit, help
    /// Speed, mode and pitch.
    case speedDown = "speed-down", speedUp = "speed-up", mode
    /// Pitch in semitones.
    case pitchDown = "pitch-down", pitchUp = "pitch-up"
    /// Markers and ruler.
    case marker, markerRename = "marker-rename", markerDelete = "marker-delete"
    case markerPrevious = "marker-previous", markerNext = "marker-next", rulerMode = "ruler", tempo
    /// Dialogs.
    case chain, devices, importFile = "import", export
    /// Cancels the slow work running beside the screen (an import handed to it).
    case cancel
    /// Recording workflow: metronome, count-in, take lanes, input monitoring, retroactive capture.
    case click, countIn = "count-in", take, lanes, monitor, retro
    /// MIDI: a new MIDI track, quantise, freeze, MIDI learn.
    case newMIDITrack = "new-midi-track", quantize, freeze, learn
    /// Automation: lanes shown, a new lane, a lane's mode (points: see ScreenModel+Automation).
    case automationLanes = "automation-lanes", automationNew = "automation-new", automationMode = "automation-mode"

    /// What the help overlay says the action does.
    public var summary: String {
        switch self {
        case .play: "play / stop"
        case .record: "record (armed tracks)"
        case .home: "back to start"
        case .end: "to the end"
        case .loop: "loop on/off"
        case .punch: "punch on/off"
        case .loopStart: "loop start at playhead"
        case .loopEnd: "loop end at playhead"
        case .punchStart: "punch in at playhead"
        case .punchEnd: "punch out at playhead"
        case .up: "previous track"
        case .down: "next track"
        case .left: "playhead back (snap)"
        case .right: "playhead forward (snap)"
        case .zoomIn: "zoom in"
        case .zoomOut: "zoom out"
        case .mute: "mute track"
        case .solo: "solo track"
        case .arm: "arm track"
        case .newTrack: "new track"
        case .deleteTrack: "delete track or bus (asks)"
        case .rename: "rename track or bus"
        case .input: "track input (1 or 1-2)"
        case .faderDown: "fader -0.5 dB"
        case .faderUp: "fader +0.5 dB"
        case .faderDownCoarse: "fader -3 dB"
        case .faderUpCoarse: "fader +3 dB"
        case .panLeft: "pan left 5"
        case .panRight: "pan right 5"
        case .panLeftCoarse: "pan left 25"
        case .panRightCoarse: "pan right 25"
        case .resetFader: "fader to 0 dB"
        case .resetPan: "pan to centre"
        case .mixer: "mixer view on/off"
        case .selectRegion: "select region at playhead"
        case .regionPrevious: "previous region"
        case .regionNext: "next region"
        case .moveLeft: "move region a grid step back"
        case .moveRight: "move region a grid step on"
        case .nudgeLeft: "nudge region -10 ms"
        case .nudgeRight: "nudge region +10 ms"
        case .trimStart: "trim region start to playhead"
        case .trimEnd: "trim region end to playhead"
        case .split: "split at playhead (comps takes)"
        case .fadeIn: "fade in up to playhead"
        case .fadeOut: "fade out from playhead"
        case .regionGainDown: "region gain -1 dB"
        case .regionGainUp: "region gain +1 dB"
        case .stretch: "stretch region (length/factor)"
        case .deleteRegion: "delete region"
        case .duplicate: "duplicate region"
        case .copy: "copy region"
        case .paste: "paste at playhead (on top)"
        case .raise: "raise region to the top"
        case .snap: "snap bars/beats/off"
        case .nextPanel: "next panel"
        case .undo: "undo"
        case .redo: "redo"
        case .save: "save"
        case .quit: "quit (asks if unsaved)"
        case .help: "this help"
        case .speedDown: "slower"
        case .speedUp: "faster"
        case .mode: "varispeed / stretch"
        case .pitchDown: "pitch -1 semitone"
        case .pitchUp: "pitch +1 semitone"
        case .marker: "marker at playhead"
        case .markerRename: "rename marker"
        case .tempo: "tempo/meter at this bar"
        case .markerDelete: "delete marker"
        case .markerPrevious: "to previous marker"
        case .markerNext: "to next marker"
        case .rulerMode: "ruler bars / time"
        case .chain: "edit chain as text"
        case .devices: "audio device"
        case .importFile: "import a file (new track)"
        case .export: "export the mix"
        case .cancel: "cancel the import in progress"
        case .click: "click off/recording/always"
        case .countIn: "count-in 0/1/2 bars"
        case .take: "next take under playhead"
        case .lanes: "show/fold take lanes"
        case .monitor: "monitoring off/input/auto"
        case .retro: "keep the last 10 s heard"
        case .resetMeters: "reset clips and loudness"
        case .loudness: "master loudness (EBU R128)"
        case .newMIDITrack: "new MIDI track (GM)"
        case .quantize: "quantise MIDI region"
        case .freeze: "freeze / unfreeze track"
        case .learn: "MIDI learn (next controller)"
        case .newBus: "new bus (name, stereo/mono)"
        case .send: "add a send to a bus"
        case .sendNext: "next send of the strip"
        case .sendRemove: "remove the send"
        case .sendDown: "send level -0.5 dB"
        case .sendUp: "send level +0.5 dB"
        case .sendDownCoarse: "send level -3 dB"
        case .sendUpCoarse: "send level +3 dB"
        case .sendLevel: "type the send's level"
        case .sendPre: "send pre-/post-fader"
        case .output: "strip output (master/bus/out)"
        case .soloSafe: "bus solo-safe on/off"
        case .automationLanes: "automation lanes on/off"
        case .automationNew: "new automation lane"
        case .automationMode: "lane mode: off…play…write"
        }
    }

    /// The heading the help overlay lists the action under.
    public var section: String {
        switch self {
        case .play, .record, .home, .end, .loop, .punch, .loopStart, .loopEnd, .punchStart, .punchEnd,
             .left, .right, .speedDown, .speedUp, .mode, .pitchDown, .pitchUp:
            "Transport"
        case .up, .down, .mute, .solo, .arm, .newTrack, .deleteTrack, .rename, .input, .faderDown, .faderUp,
             .faderDownCoarse, .faderUpCoarse, .panLeft, .panRight, .panLeftCoarse, .panRightCoarse,
             .resetFader, .resetPan, .mixer, .resetMeters, .loudness, .monitor, .newMIDITrack, .freeze, .learn:
            "Tracks and mixer"
        case .selectRegion, .regionPrevious, .regionNext, .moveLeft, .moveRight, .nudgeLeft, .nudgeRight,
             .trimStart, .trimEnd, .split, .fadeIn, .fadeOut, .regionGainDown, .regionGainUp, .stretch,
             .deleteRegion, .duplicate, .copy, .paste, .raise, .snap, .quantize:
            "Regions"
        case .take, .lanes, .click, .countIn, .retro:
            "Recording and takes"
        case .marker, .markerRename, .markerDelete, .markerPrevious, .markerNext, .rulerMode, .tempo, .zoomIn, .zoomOut:
            "Markers and view"
        case .nextPanel, .undo, .redo, .save, .quit, .help, .chain, .devices, .importFile, .export, .cancel:
            "Session"
        case .newBus, .send, .sendNext, .sendRemove, .sendDown, .sendUp, .sendDownCoarse, .sendUpCoarse, .sendLevel, .sendPre,
             .output, .soloSafe:
            "Buses, sends and outputs"
        case .automationLanes, .automationNew, .automationMode:
            "Automation"
        }
    }
}

/// Which keys do what. Defaults are built in; the keys file changes them.
public struct KeyMap: Equatable, Sendable {
    /// The bindings: every key bound to at most one action.
    public private(set) var actionForKey: [Key: Action]

    /// The built-in bindings.
    public static let defaults: [(Action, [Key])] = [
        (.play, [.named(.space)]), (.record, [.char("r")]),
        (.home, [.named(.home)]), (.end, [.named(.end)]),
        (.loop, [.char("l")]), (.punch, [.char("p")]),
        (.loopStart, [.char("[")]), (.loopEnd, [.char("]")]),
        (.up, [.named(.up)]), (.down, [.named(.down)]),
        (.left, [.named(.left)]), (.right, [.named(.right)]),
        (.zoomIn, [.char("+"), .char("=")]), (.zoomOut, [.char("-")]),
        (.mute, [.char("m")]), (.solo, [.char("s")]), (.arm, [.char("a")]),
        (.newTrack, [.char("n")]), (.deleteTrack, [.named(.delete)]),
        (.nextPanel, [.named(.tab)]),
        (.undo, [.char("u")]), (.redo, [.ctrl("r")]), (.save, [.ctrl("s")]),
        (.quit, [.char("q")]), (.help, [.char("?"), .function(1)]),
        (.speedDown, [.char("<")]), (.speedUp, [.char(">")]), (.mode, [.char("M")]),
        (.pitchDown, [.char("{")]), (.pitchUp, [.char("}")]),
        (.marker, [.char("k")]), (.rulerMode, [.char("t")]), (.tempo, [.char("|")]),
        (.chain, [.char("c")]), (.devices, [.char("d")]),
        (.importFile, [.char("i")]), (.export, [.char("e")]), (.cancel, [.ctrl("x")]),
        (.click, [.char("C")]), (.countIn, [.char("I")]), (.take, [.char("T")]), (.lanes, [.char("L")]),
        (.monitor, [.char("o")]), (.retro, [.char("R")]),
        (.punchStart, [.char(";")]), (.punchEnd, [.char("'")]),
        (.rename, [.function(2)]), (.input, [.char("w")]),
        // The number row in pairs: nudge 1 2, region gain 3 4, trim 5 6, pan 7 8, fader 9 0
        // (shifted: coarse pan & *, coarse fader ( )).
        (.faderDown, [.char("9")]), (.faderUp, [.char("0")]), (.faderDownCoarse, [.char("(")]), (.faderUpCoarse, [.char(")")]),
        (.panLeft, [.char("7")]), (.panRight, [.char("8")]), (.panLeftCoarse, [.char("&")]), (.panRightCoarse, [.char("*")]),
        (.resetFader, [.char("z")]), (.resetPan, [.char("Z")]), (.mixer, [.char("v")]),
        (.resetMeters, [.char("X")]), (.loudness, [.char("U")]),
        (.selectRegion, [.named(.enter)]), (.regionPrevious, [.char(",")]), (.regionNext, [.char(".")]),
        (.moveLeft, [.named(.shiftLeft)]), (.moveRight, [.named(.shiftRight)]),
        (.nudgeLeft, [.char("1")]), (.nudgeRight, [.char("2")]),
        (.regionGainDown, [.char("3")]), (.regionGainUp, [.char("4")]),
        (.trimStart, [.char("5")]), (.trimEnd, [.char("6")]),
        (.split, [.char("S")]), (.fadeIn, [.char("f")]), (.fadeOut, [.char("F")]), (.stretch, [.char("W")]),
        (.deleteRegion, [.char("x")]), (.duplicate, [.char("D")]), (.copy, [.char("y")]), (.paste, [.char("P")]),
        (.raise, [.char("^")]), (.snap, [.char("g")]),
        (.markerRename, [.char("K")]), (.markerDelete, [.ctrl("k")]),
        (.markerPrevious, [.named(.pgup)]), (.markerNext, [.named(.pgdn)]),
        (.newMIDITrack, [.char("N")]), (.quantize, [.char("Q")]), (.freeze, [.ctrl("f")]), (.learn, [.ctrl("l")]),
        // Routing: b for bus (B a new one), j steps through the strip's sends (J removes one),
        // h types a send's level (H pre/post), O the output, A keeps a bus heard (solo-safe).
        // Send levels step on the shifted number row: ! @ (shift-1 2) fine, $ % (shift-4 5)
        // coarse (# is left alone: it starts a comment in the keys file).
        (.newBus, [.char("B")]), (.send, [.char("b")]), (.sendNext, [.char("j")]), (.sendRemove, [.char("J")]),
        (.sendDown, [.char("!")]), (.sendUp, [.char("@")]), (.sendDownCoarse, [.char("$")]), (.sendUpCoarse, [.char("%")]),
        (.sendLevel, [.char("h")]), (.sendPre, [.char("H")]), (.output, [.char("O")]), (.soloSafe, [.char("A")]),
        // Automation: V beside v (the mixer), E for envelope, Y steps the lane's mode.
        (.automationLanes, [.char("V")]), (.automationNew, [.char("E")]), (.automationMode, [.char("Y")]),
    ]

    /// The built-in key map.
    public init() {
        var map: [Key: Action] = [:]
        for (action, keys) in KeyMap.defaults { for k in keys { map[k] = action } }
        actionForKey = map
    }

    /// The action bound to `key`, if any.
    /// Ctrl-C always quits (as the screen's quit: it asks when unsaved), whatever a keys
    /// file says, so no file can leave the screen without a way out.
    public func action(for key: Key) -> Action? { key == KeyMap.fixedQuitKey ? .quit : actionForKey[key] }

    /// The key that quits whatever the keys file binds.
    public static let fixedQuitKey = Key.ctrl("c")

    /// The keys bound to `action`, in a stable order (for the help overlay).
    public func keys(for action: Action) -> [Key] {
        let defaults = KeyMap.defaults.first { $0.0 == action }?.1 ?? []
        let bound = actionForKey.filter { $0.value == action }.map(\.key)
        // Defaults first in their own order, then remapped keys by name.
        return defaults.filter(bound.contains) + bound.filter { !defaults.contains($0) }.sorted { $0.name < $1.name }
    }

    /// Binds `keys` to `action`, replacing the action's old keys; a key taken from another
    /// action is removed from it.
    public mutating func bind(_ action: Action, to keys: [Key]) {
        for (k, a) in actionForKey where a == action { actionForKey[k] = nil }
        for k in keys { actionForKey[k] = action }
    }

    /// Reads a keys file: `ACTION = KEY[, KEY…]` per line, `#` comments. Good lines apply;
    /// each bad line is skipped and reported as `SOURCE line N: reason`, and so is a line
    /// that leaves another action without any key.
    public static func parse(_ text: String, source: String = "keys") -> (map: KeyMap, problems: [String]) {
        parse(lines: SettingsText.lines(text), source: source)
    }

    /// The same for lines already split (nil: a line that is not valid UTF-8, reported).
    static func parse(lines: [String?], source: String) -> (map: KeyMap, problems: [String]) {
        var map = KeyMap()
        var problems: [String] = []
        // Lines that applied but left an action keyless come after the lines that failed.
        var notes: [String] = []
        for (i, decoded) in lines.enumerated() {
            func report(_ reason: String) { problems.append("\(source.terminalSafe) line \(i + 1): \(reason.terminalSafe)") }
            guard var line = decoded else { report("not valid UTF-8 (skipped)"); continue }
            if let hash = commentStart(line) { line = String(line[..<hash]) }
            let trimmed = line.trimmingWhitespace()
            if trimmed.isEmpty { continue }
            guard let eq = trimmed.firstIndex(of: "=") else { report("expected 'action = key'"); continue }
            let name = String(trimmed[..<eq]).trimmingWhitespace()
            let value = String(trimmed[trimmed.index(after: eq)...]).trimmingWhitespace()
            guard let action = Action(rawValue: name) else { report("unknown action '\(name)'"); continue }
            // A lone ',' is the comma key, not an empty list.
            let names = value == "," ? [","] : value.split(separator: ",", omittingEmptySubsequences: false).map { String($0).trimmingWhitespace() }
            guard !names.isEmpty, !names.contains(where: \.isEmpty) else { report("no key for '\(name)'"); continue }
            var keys: [Key] = []
            var bad: String?
            for n in names {
                if let k = Key(name: n) { keys.append(k) } else { bad = n; break }
            }
            if let bad {
                if bad.count == 1, bad.unicodeScalars.contains(where: SafeText.needsEscape) {
                    report("'\(bad)' for '\(name)' is a control, unprintable or bidi character, not a key (skipped)")
                } else {
                    report("unknown key '\(bad)' for '\(name)'")
                }
                continue
            }
            if action != .quit, keys.contains(KeyMap.fixedQuitKey) {
                report("ctrl-c always quits; it cannot be bound to '\(name)' (skipped)")
                continue
            }
            // Taking an action's last key unbinds it: say so, never silently.
            for k in keys {
                if let old = map.action(for: k), old != action, map.keys(for: old) == [k] {
                    notes.append("\(source.terminalSafe) line \(i + 1): '\(k.name)' was \(old.rawValue)'s only key: \(old.rawValue) has no key now (give it one on its own line)")
                }
            }
            map.bind(action, to: keys)
        }
        return (map, problems + notes)
    }

    /// Where a comment starts: a `#` at the line's start or after whitespace, except a `#`
    /// that is the key itself (`marker = #`).
    private static func commentStart(_ line: String) -> String.Index? {
        var previous: Character = " "
        var index = line.startIndex
        while index < line.endIndex {
            let c = line[index]
            if c == "#" && previous.isWhitespace {
                let before = String(line[..<index]).trimmingWhitespace()
                if !before.hasSuffix("=") { return index }
            }
            previous = c
            index = line.index(after: index)
        }
        return nil
    }
}
