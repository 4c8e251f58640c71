/// The text of `tapedeck help`.
enum HelpText {
    static let version = "0.1.0"

    static func overview(_ commands: [any Command.Type]) -> String {
        var lines = [
            "tapedeck \(version): a multitrack recorder that lives in a terminal",
            "",
            "usage: tapedeck COMMAND [ARGS...]",
            "",
            "commands:",
        ]
        let width = (commands.map { $0.name.count }.max() ?? 0) + 2
        for c in commands {
            lines.append("  " + c.name + String(repeating: " ", count: width - c.name.count) + c.summary)
        }
        lines += ["", "times: 12.5 (seconds), 1:02.5 (m:ss.mmm), 90000f (frames), 4.2.1 (bar.beat.sixteenth)",
                  "'tapedeck help COMMAND' shows one command's options."]
        return lines.joined(separator: "\n")
    }
}
