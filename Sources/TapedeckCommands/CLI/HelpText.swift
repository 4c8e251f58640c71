/// The text of `tapedeck help` and `tapedeck help COMMAND`, generated from the command tables.
enum HelpText {
    /// Tapedeck's version; the Makefile reads it from here for the Debian package.
    static let version = "0.1.0"

    /// The times every command accepts, for help and the man page.
    static let times = "times: 12.5 (seconds), 1:02.5 (m:ss.mmm), 90000f (frames), 4.2.1 (bar.beat.sixteenth)"

    static func overview(_ commands: [any Command.Type]) -> String {
        var lines = [
            "tapedeck \(version): a multitrack recorder that lives in a terminal",
            "",
            "usage: tapedeck COMMAND [ARGS...]",
            "       tapedeck --version",
            "",
            "commands:",
        ]
        let width = (commands.map { $0.name.count }.max() ?? 0) + 2
        for c in commands {
            lines.append("  " + c.name + String(repeating: " ", count: width - c.name.count) + c.summary)
        }
        lines += ["", times, "'tapedeck help COMMAND' (or 'man tapedeck-COMMAND') shows one command's options; 'man tapedeck' shows them all.",
                  "Every command's page, a tutorial and the manual: docs/ in the source (docs/commands/COMMAND.md)."]
        return lines.joined(separator: "\n")
    }

    /// `tapedeck help NAME`: synopsis, prose, the option table, examples.
    static func usage(_ spec: CommandSpec) -> String {
        var lines: [String] = []
        for (i, form) in spec.synopsis.enumerated() {
            lines.append((i == 0 ? "usage: " : "       ") + "tapedeck " + form)
        }
        lines += ["", spec.details]
        if !spec.options.isEmpty {
            lines += ["", "options:"]
            for option in spec.options { lines += optionLines(option) }
        }
        if !spec.examples.isEmpty {
            lines.append("")
            lines += spec.examples.map { "example: " + $0 }
        }
        return lines.joined(separator: "\n")
    }

    /// `--name VALUE` as help shows it (`-o, --output FILE`).
    static func optionLabel(_ option: OptionSpec) -> String {
        let names = option.names.sorted { $0.count < $1.count }.joined(separator: ", ")
        return option.value.map { names + " " + $0 } ?? names
    }

    private static let helpColumn = 26
    private static let lineWidth = 92

    /// One option: its label, then its help wrapped in a column (on the next line when the
    /// label is too long to share one).
    private static func optionLines(_ option: OptionSpec) -> [String] {
        let wrapped = wrap(option.fullHelp, width: lineWidth - helpColumn)
        let label = "  " + optionLabel(option)
        let pad = String(repeating: " ", count: helpColumn)
        var lines: [String] = []
        if label.count < helpColumn - 1 {
            lines.append(label + String(repeating: " ", count: helpColumn - label.count) + wrapped[0])
        } else {
            lines.append(label)
            lines.append(pad + wrapped[0])
        }
        lines += wrapped.dropFirst().map { pad + $0 }
        return lines
    }

    /// Splits `text` into lines of at most `width` characters at spaces.
    static func wrap(_ text: String, width: Int) -> [String] {
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ") {
            if !line.isEmpty && line.count + 1 + word.count > width {
                lines.append(line)
                line = ""
            }
            line += (line.isEmpty ? "" : " ") + word
        }
        lines.append(line)
        return lines
    }
}
