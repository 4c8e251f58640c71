import Foundation
import TapedeckIO

/// `tapedeck docs FOLDER`: writes one page per command, generated from the command tables —
/// Markdown for `docs/commands/` (`make docs`), or with `--man` the `tapedeck-NAME(1)` pages
/// `make install` installs (`man tapedeck-record`).
struct DocsCommand: Command {
    static let spec = CommandSpec(
        name: "docs", summary: "write one page per command (Markdown, or man pages with --man) into a folder",
        synopsis: ["docs FOLDER [--man]"],
        positionals: [PositionalSpec("FOLDER", complete: .directory)],
        options: [
            OptionSpec(flag: "--man", "write tapedeck-COMMAND.1 man pages (roff) instead of COMMAND.md and README.md"),
        ],
        details: """
        Writes FOLDER/COMMAND.md for every command, and FOLDER/README.md listing them, generated
        from the same tables as 'tapedeck help COMMAND' and the man page, so they always agree.
        `make docs` writes them into docs/commands/ (a test fails when the committed pages
        differ from what this prints). With --man it writes FOLDER/tapedeck-COMMAND.1 instead;
        `make install` puts them beside tapedeck(1), so man tapedeck-record works.
        The folder is made when missing; the pages in it are written over.
        """,
        examples: ["tapedeck docs docs/commands", "tapedeck docs --man /usr/local/share/man/man1"])

    let folder: String
    let man: Bool

    init(arguments: inout Arguments) throws {
        man = arguments.flag("--man")
        folder = try arguments.required("a folder to write the pages into")
    }

    /// Every file the command writes, by name, with its text.
    static func pages(man: Bool) -> [(name: String, text: String)] {
        let specs = CommandList.all.map { $0.spec }
        if man { return specs.map { (ManPage.commandPageName($0), ManPage.commandPage($0)) } }
        return specs.map { (CommandDocs.fileName($0), CommandDocs.page($0)) } + [("README.md", CommandDocs.index(CommandList.all))]
    }

    func run(_ context: CommandContext) throws -> Int32 {
        try WriteGuard.check(folder, as: "docs", kind: .folder)
        try DocsCommand.makeFolder(folder)
        let pages = DocsCommand.pages(man: man)
        for page in pages {
            try WriteGuard.write(Array(page.text.utf8), to: folder + "/" + page.name, as: "docs")
        }
        Terminal.out("docs: \(pages.count) pages in \(folder.terminalSafe)")
        return ExitCode.ok
    }

    /// `mkdir -p`, saying in the system's words why a folder could not be made.
    static func makeFolder(_ path: String) throws {
        var built = path.hasPrefix("/") ? "" : "."
        for part in path.split(separator: "/") {
            built += "/" + part
            if mkdir(built, 0o755) != 0 {
                let code = errno
                guard code == EEXIST else {
                    throw AudioFileError(path: path, reason: "cannot make the folder"
                                         + (built.hasSuffix(path) ? "" : " \(built.terminalSafe)") + ": " + String(cString: strerror(code)))
                }
            }
        }
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), isFolder.boolValue else {
            throw AudioFileError(path: path, reason: "is not a folder")
        }
    }
}
