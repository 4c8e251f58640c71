import TapedeckCore
import TapedeckIO

/// `tapedeck undo` and `tapedeck redo`: the last change to a session, reverted or brought
/// back, whichever process made it. With the screen open the screen's own undo does it (the
/// command is handed to it, as every edit is); otherwise the history the session folder keeps
/// (`SESSION/history/`, one step per save) does.
struct UndoCommand: HandedCommand {
    static let spec = CommandSpec(
        name: "undo", summary: "revert the last change to a session (whoever made it)",
        synopsis: ["undo SESSION [--list]"],
        positionals: [PositionalSpec("SESSION", complete: .session)],
        options: [OptionSpec(flag: "--list", "list the steps undo and redo would take, newest first, and change nothing")],
        details: """
        With the session open on the screen, undo is the screen's own (the u key): its last
        edit, whoever asked for it. Otherwise the session folder's history reverts the last
        save: the last command-line edit, a recording's takes, or what the screen saved.
        The folder keeps the last \(SessionHistory.limit) steps in SESSION/history/; a change
        after an undo drops what redo would have brought back. Audio files are never deleted.
        """,
        examples: ["tapedeck undo song.tapedeck", "tapedeck redo song.tapedeck", "tapedeck undo song.tapedeck --list"])

    let folder: SessionFolder
    let redo: Bool
    let list: Bool

    init(arguments: inout Arguments) throws {
        try self.init(arguments: &arguments, redo: false)
    }

    init(arguments: inout Arguments, redo: Bool) throws {
        folder = SessionFolder(path: try arguments.required("a session folder"))
        list = redo ? false : arguments.flag("--list")
        self.redo = redo
    }

    func run(_ context: CommandContext) throws -> Int32 {
        if list {
            // With the session open on the screen, the list is the screen's own undo.
            try SessionOwner.handReadToOwner(folder)
            let steps = try SessionHistory.steps(folder)
            context.console.out(SessionHistory.listText(undo: steps.undo, redo: steps.redo))
            return ExitCode.ok
        }
        guard let name = try folder.undoLastSave(redo: redo) else {
            context.console.out("nothing to \(redo ? "redo" : "undo")")
            return ExitCode.ok
        }
        context.console.out("\(redo ? "redid" : "undid"): \(name)")
        return ExitCode.ok
    }
}

/// `tapedeck redo`: brings back what `undo` reverted.
struct RedoCommand: HandedCommand {
    static let spec = CommandSpec(
        name: "redo", summary: "bring back the change undo reverted",
        synopsis: ["redo SESSION"],
        positionals: [PositionalSpec("SESSION", complete: .session)],
        details: "Brings back the last change `tapedeck undo` (or the screen's u) reverted. See `tapedeck help undo`.",
        examples: ["tapedeck redo song.tapedeck"])

    let undo: UndoCommand

    init(arguments: inout Arguments) throws {
        undo = try UndoCommand(arguments: &arguments, redo: true)
    }

    func run(_ context: CommandContext) throws -> Int32 { try undo.run(context) }
}
