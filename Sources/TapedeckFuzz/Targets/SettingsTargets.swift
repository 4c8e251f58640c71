import Foundation
import TapedeckIO
import TapedeckCore
import TapedeckUI

/// The screen's settings files, read from disk exactly as the screen reads them.
struct SettingsFiles {
    let config: ScreenConfig
    let folder: String

    init(kind: String) throws {
        // A worker killed at the end of a run cannot remove its folder: the next run does.
        Leftovers.removeDead(in: FileManager.default.temporaryDirectory.path, prefix: "tapedeck-fuzz-\(kind)-")
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("tapedeck-fuzz-\(kind)-\(getpid())").path
        try? FileManager.default.removeItem(atPath: root)
        folder = root + "/tapedeck"
        try FileManager.default.createDirectory(atPath: folder + "/themes", withIntermediateDirectories: true)
        config = ScreenConfig(environment: ["XDG_CONFIG_HOME": root], bundledThemes: [])
    }

    func write(_ bytes: [UInt8], to name: String) -> Bool {
        FileManager.default.createFile(atPath: folder + "/" + name, contents: Data(bytes))
    }

    /// Whether `text` saved with Windows line ends at `name` reads as it does with Unix ones,
    /// without problems, as `load` (which returns what was read, and whether it complained).
    func readsTheSameWithCRLF<T: Equatable>(_ text: String, at name: String, _ load: () -> (T, Bool)) -> Bool {
        _ = write(Array(text.replacingOccurrences(of: "\n", with: "\r\n").utf8), to: name)
        let (crlf, complained) = load()
        _ = write(Array(text.utf8), to: name)
        return !complained && crlf == load().0
    }
}

/// `~/.config/tapedeck/keys`.
struct KeysTarget: FuzzTarget {
    static let name = "keys"
    let files: SettingsFiles
    // Keys no other action depends on alone: taking an action's only key is reported (a
    // note, not a mistake), and the CRLF check below wants files that read without one.
    let seeds = ["play = space, f5\nrecord = f6\nmarker = #\n", "# mine\nquit = ctrl-q\nhelp = f1, ?\nruler = ctrl-t\n",
                 "up = f7\ndown = f8\nleft = f9\nright = f10\nundo = u # comment\n"]
    let mutator = Mutator(tokens: ["=", ",", "#", "\n", "\r\n", "\r", "ctrl-", "shift-left", "f12", "space", "play", " "].map { Array($0.utf8) })

    init() throws { files = try SettingsFiles(kind: "keys") }

    func input(seed: UInt64, index: Int) -> [UInt8] {
        mutator.mutate(oneOf: seeds, stream: Self.name, seed: seed, index: index, maxEdits: 6)
    }

    func check(_ input: [UInt8], index: Int) -> String? {
        guard files.write(input, to: "keys") else { return "cannot write the case file" }
        let (_, problems) = files.config.loadKeyMap()
        for p in problems {
            if let bad = Oracle.unclear(p, naming: [" line "]) { return bad }
        }
        // A file saved with Windows line ends means the same as with Unix ones.
        guard index % 16 == 0 else { return nil }
        let same = files.readsTheSameWithCRLF(seeds[index % seeds.count], at: "keys") {
            let (map, problems) = files.config.loadKeyMap()
            return (map, !problems.isEmpty)
        }
        return same ? nil : "a CRLF keys file reads differently"
    }
}

/// `~/.config/tapedeck/themes/NAME.theme`.
struct ThemeTarget: FuzzTarget {
    static let name = "theme"
    let files: SettingsFiles
    let seeds = [Theme.builtInDefaultText, "name = t\nplaying = 40/green default bold\nclip = red 196 reverse\n",
                 "# c\nnormal = default default\nselected = 255 0 bold reverse underline dim\n"]
    let mutator = Mutator(tokens: ["=", "/", "#", "\n", "\r\n", "\r", "bold", "255", "256", "default", "red", " ", "\t"].map { Array($0.utf8) })

    init() throws { files = try SettingsFiles(kind: "theme") }

    func input(seed: UInt64, index: Int) -> [UInt8] {
        mutator.mutate(oneOf: seeds, stream: Self.name, seed: seed, index: index, maxEdits: 6)
    }

    func check(_ input: [UInt8], index: Int) -> String? {
        guard files.write(input, to: "themes/fuzz.theme") else { return "cannot write the case file" }
        let (_, message) = files.config.loadTheme(named: "fuzz")
        if let message, let bad = Oracle.unclear(message, naming: ["fuzz.theme line "]) { return bad }
        guard index % 16 == 0 else { return nil }
        let same = files.readsTheSameWithCRLF(seeds[index % seeds.count], at: "themes/fuzz.theme") {
            let (theme, message) = files.config.loadTheme(named: "fuzz")
            return (theme, message != nil)
        }
        return same ? nil : "a CRLF theme reads differently"
    }
}
