import Foundation
import TapedeckCore

/// Where the screen's settings live and how they are read: `$XDG_CONFIG_HOME/tapedeck/`
/// (default `~/.config/tapedeck/`) holds `keys`, `config` (`theme = NAME`, `osc = PORT`,
/// `osc-address = ADDR`) and optionally
/// `themes/NAME.theme`.
public struct ScreenConfig: Sendable {
    /// The settings folder.
    public let folder: String
    /// Folders searched for `NAME.theme`, first match wins.
    public let themeFolders: [String]

    /// Settings for `environment` (XDG_CONFIG_HOME, HOME); `bundledThemes` are folders
    /// shipped with the program, searched after the user's own.
    public init(environment: [String: String], bundledThemes: [String]) {
        let base: String
        if let xdg = environment["XDG_CONFIG_HOME"], !xdg.isEmpty {
            base = xdg
        } else {
            base = (environment["HOME"] ?? NSHomeDirectory()) + "/.config"
        }
        folder = base + "/tapedeck"
        themeFolders = [folder + "/themes"] + bundledThemes
    }

    /// The keys file path.
    public var keysPath: String { folder + "/keys" }
    /// The config file path.
    public var configPath: String { folder + "/config" }

    /// The key map from the keys file (defaults when there is none), and its problems.
    public func loadKeyMap() -> (KeyMap, [String]) {
        guard let lines = SettingsText.read(keysPath) else { return (KeyMap(), []) }
        return KeyMap.parse(lines: lines, source: keysPath)
    }

    /// `theme = NAME` from the config file, and problems with other lines.
    public func configuredTheme() -> (String?, [String]) {
        guard let lines = SettingsText.read(configPath) else { return (nil, []) }
        var theme: String?
        var problems: [String] = []
        for (i, decoded) in lines.enumerated() {
            guard let raw = decoded else {
                problems.append("\(configPath.terminalSafe) line \(i + 1): not valid UTF-8 (skipped)")
                continue
            }
            let line = (raw.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? "").trimmingWhitespace()
            if line.isEmpty { continue }
            let parts = line.split(separator: "=", maxSplits: 1).map { String($0).trimmingWhitespace() }
            if parts.count == 2, parts[0] == "theme", !parts[1].isEmpty {
                theme = parts[1]
            } else if parts.count == 2, ScreenConfig.otherKeys.contains(parts[0]) {
                continue // read by its own reader (configuredOSC)
            } else {
                problems.append("\(configPath.terminalSafe) line \(i + 1): expected 'theme = NAME'")
            }
        }
        return (theme, problems)
    }

    /// The theme called `name`: the first `NAME.theme` found. A missing or malformed theme
    /// gives the built-in default and a message naming the file and line.
    public func loadTheme(named name: String) -> (Theme, String?) {
        for dir in themeFolders {
            let path = dir + "/" + name + ".theme"
            guard let lines = SettingsText.read(path) else { continue }
            do {
                // The file name, not the whole path, so the line number fits on the message line.
                return (try Theme.parse(lines: lines, source: name + ".theme"), nil)
            } catch {
                return (Theme.builtInDefault, "theme \(error.description) (in \(dir.terminalSafe)); using the default theme")
            }
        }
        if name == "default" { return (Theme.builtInDefault, nil) }
        let known = availableThemes()
        return (Theme.builtInDefault, "no theme '\(name.terminalSafe)'\(known.isEmpty ? "" : " (have: \(known.joined(separator: ", ")))"); using the default theme")
    }

    /// Names of the themes that can be found.
    public func availableThemes() -> [String] {
        var names = Set<String>()
        for dir in themeFolders {
            for file in (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? [] where file.hasSuffix(".theme") {
                names.insert(String(file.dropLast(6)))
            }
        }
        return names.sorted()
    }
}
