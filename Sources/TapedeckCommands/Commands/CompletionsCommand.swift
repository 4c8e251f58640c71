/// `tapedeck completions SHELL`: prints the completion script `make install` installs.
struct CompletionsCommand: Command {
    static let spec = CommandSpec(
        name: "completions", summary: "print the shell completion script for bash, zsh or fish",
        synopsis: ["completions bash|zsh|fish"],
        positionals: [PositionalSpec("SHELL", complete: .choices, choices: Completions.shells)],
        details: """
        Prints a script that makes Tab complete tapedeck's commands, options and their values,
        generated from the same tables as 'tapedeck help'. `make install` installs all three;
        to try one without installing: source <(tapedeck completions bash).
        """,
        examples: ["tapedeck completions fish > ~/.config/fish/completions/tapedeck.fish"])

    let shell: String

    init(arguments: inout Arguments) throws {
        shell = try arguments.required("a shell (bash, zsh or fish)")
        guard Completions.shells.contains(shell) else {
            throw UsageError("completions: no script for '\(shell)' (bash, zsh or fish)")
        }
    }

    func run(_ context: CommandContext) throws -> Int32 {
        Terminal.out(Completions.script(shell: shell, commands: CommandList.all), newline: false)
        return ExitCode.ok
    }
}

/// `tapedeck man`: prints the tapedeck(1) man page in roff.
struct ManCommand: Command {
    static let spec = CommandSpec(
        name: "man", summary: "print the tapedeck(1) man page (roff)",
        synopsis: ["man"],
        details: """
        Prints the manual page `make install` installs, generated from the same tables as
        'tapedeck help'. To read it without installing: tapedeck man | man -l -
        """)

    init(arguments: inout Arguments) throws {}

    func run(_ context: CommandContext) throws -> Int32 {
        Terminal.out(ManPage.text(CommandList.all), newline: false)
        return ExitCode.ok
    }
}
