import TapedeckCore
import TapedeckIO

extension ExportCommand {
    /// The screen's export dialog: `exports/mix.flac --bits 16 --normalize -16LUFS` is this
    /// command's `-o` and options, read by its own parser, so the dialog offers what `export`
    /// offers and refuses what it refuses. Paths (the file, `--stems`, `--chapters`) are read
    /// from the session folder unless they start with `/`.
    static func forScreen(_ words: [String], folderPath: String) throws -> ExportCommand {
        guard let path = words.first, !path.hasPrefix("-") else {
            throw UsageError("export: start with the file to write (exports/mix.wav), then any of export's options")
        }
        func inFolder(_ p: String) -> String { p.hasPrefix("/") ? p : folderPath + "/" + p }
        var rest = Array(words.dropFirst())
        // Every path typed here is read from the session folder (the screen's working folder
        // may be anywhere): the file, the stems folder, the chapters file.
        for option in ["--stems", "--chapters"] {
            for i in rest.indices where rest[i] == option && i + 1 < rest.count { rest[i + 1] = inFolder(rest[i + 1]) }
            for i in rest.indices where rest[i].hasPrefix(option + "=") {
                rest[i] = option + "=" + inFolder(String(rest[i].dropFirst(option.count + 1)))
            }
        }
        if rest.contains(where: { $0 == "-o" || $0 == "--output" || $0.hasPrefix("--output=") }) {
            throw UsageError("export: the file to write is the first word; -o is not needed here")
        }
        var arguments = Arguments([folderPath, "-o", inFolder(path)] + rest, spec: spec)
        let command = try ExportCommand(arguments: &arguments)
        try arguments.finish()
        return command
    }
}
