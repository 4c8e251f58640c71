import TapedeckIO
import TapedeckCore
import TapedeckDSP
import TapedeckEngine
import TapedeckLV2
import TapedeckFluidSynth
import TapedeckDevices
import TapedeckRemote
#if canImport(Glibc)
import Glibc
#endif

/// Runs the command line (`argv`, the program's name first) and returns the exit status: the
/// whole program, which the `tapedeck` executable only calls. Every error a user can cause
/// ends here as one line on stderr and a non-zero status, never a trap or a stack trace.
@MainActor
public func runMain(_ argv: [String]) -> Int32 {
    // Every sub-command, in the order `tapedeck help` lists them.
    let commands = CommandList.all
    // Installed LV2 plugins join the built-in nodes in every chain (discovered on first use).
    NodeRegistry.install(LV2Provider.shared)
    // The General MIDI instrument (FluidSynth) joins the built-in nodes.
    NodeRegistry.install(type: GMSynthNode.self)
    // Every write is kept off the files of the sessions open in running Tapedecks too.
    WriteGuard.openSessions = { ControlFolder.openSessions().compactMap { SessionReferences.protected(path: $0) } }
    var args = Array(argv.dropFirst())
    // `tapedeck --headless --record [SESSION] ...` is `tapedeck record [SESSION] ...`.
    if let h = args.firstIndex(of: "--headless"), args.contains("--record") {
        args.remove(at: h)
        args.removeAll { $0 == "--record" }
        args.insert("record", at: 0)
    }
    args = ScreenCommand.dispatch(args, commandNames: commands.map { $0.name })
    if args.isEmpty || args == ["help"] || args == ["--help"] || args == ["-h"] {
        Terminal.out(HelpText.overview(commands))
        return ExitCode.ok
    }
    if args.first == "help", args.count == 2 {
        guard let c = commands.first(where: { $0.name == args[1] }) else {
            Terminal.err("tapedeck: no command '\(args[1].terminalSafe)'\(NameMatch.suggestion(args[1], in: commands.map { $0.name })) (see 'tapedeck help')\n")
            return ExitCode.usage
        }
        Terminal.out(c.usage)
        return ExitCode.ok
    }
    if args == ["--version"] || args == ["-V"] {
        Terminal.out(VersionText.text())
        return ExitCode.ok
    }
    let word = args.removeFirst()
    guard let type = commands.first(where: { $0.name == word }) else {
        let hint = NameMatch.nearest(word, in: commands.map { $0.name }).map { "did you mean '\($0)'? " } ?? ""
        Terminal.err("tapedeck: unknown command '\(word.terminalSafe)' (\(hint)see 'tapedeck help'; a session to open ends in .tapedeck)\n")
        return ExitCode.usage
    }
    if args.contains("--help") || args.contains("-h") {
        Terminal.out(type.usage)
        return ExitCode.ok
    }
    // A session held open by the screen takes this edit itself (OwnerForwarding).
    if OwnerForwarding.commandNames.contains(type.name) || OwnerForwarding.readNames.contains(type.name) { OwnerForwarding.install() }
    // And answers this command's reads from the session as it stands.
    SessionOwner.readsAskOwner = OwnerForwarding.readNames.contains(type.name)
    return runCommand(type, args, in: .commandLine())
}

/// Parses and runs one command (`args` without its name) in `context` and returns its exit
/// status; an error is reported as one line on the context's console. A session's owner runs
/// handed-over commands through it too.
@MainActor
func runCommand(_ type: any Command.Type, _ args: [String], in context: CommandContext) -> Int32 {
    do {
        var parsed = Arguments(args, spec: type.spec)
        let command = try type.init(arguments: &parsed)
        try parsed.finish()
        return try command.run(context)
    } catch let error as SessionError where error.ownerPid != nil {
        if error.ownerAnswersRead {
            if !error.ownerListens {
                // A long import, or a screen whose socket this user's runtime folder does not
                // show: what the file says may not be the session as it stands.
                context.console.err("tapedeck: note: \(error.description.terminalSafe), which cannot be asked from here; showing the saved session.json\n")
            } else if let status = OwnerForwarding.forwardRead(type, args, to: error.ownerPid!, holder: error) { return status }
        } else if let status = OwnerForwarding.forward(type, args, to: error.ownerPid!, refusal: error) {
            return status
        }
        // Nobody listens on the holder's socket: a file left by a process that is gone, its
        // pid now the holder's (a plain command that takes no edits), or a screen that has
        // just quit; or an owner that cannot answer a read. Wait for the lock as with no
        // screen at all, or read the saved file.
        let takesEdits = SessionOwner.takesEdits
        SessionOwner.takesEdits = nil
        defer { SessionOwner.takesEdits = takesEdits }
        return runCommand(type, args, in: context)
    } catch {
        return report(error, to: context.console)
    }
}

/// Prints `error` as one line on `console` and picks the exit status for its kind.
func report(_ error: any Error, to console: Console = .terminal) -> Int32 {
    let (text, code): (String, Int32)
    switch error {
    case let e as UsageError: (text, code) = (e.description, ExitCode.usage)
    // A write the guard refused is the user's choice of path: a usage mistake, as before it.
    case let e as WriteRefusal: (text, code) = (e.description, ExitCode.usage)
    case let e as AudioFileError: (text, code) = (e.description, ExitCode.dataError)
    case let e as SessionError: (text, code) = (e.description, ExitCode.dataError)
    case let e as TimeText.ParseError: (text, code) = (e.description, ExitCode.usage)
    case let e as ChainError: (text, code) = (e.description, ExitCode.usage)
    case let e as ChainContextError: (text, code) = (e.description, ExitCode.dataError)
    case let e as TakeLaneError: (text, code) = (e.description, ExitCode.usage)
    case let e as TrackLookupError: (text, code) = (e.description, ExitCode.usage)
    case let e as RegionEditError: (text, code) = (e.description, ExitCode.usage)
    case let e as MarkerEditError: (text, code) = (e.description, ExitCode.usage)
    case let e as InputChannelsError: (text, code) = (e.description, ExitCode.usage)
    case let e as NodeRegistry.UnknownNodeError: (text, code) = (e.description, ExitCode.usage)
    case let e as QuantizeError: (text, code) = (e.description, ExitCode.usage)
    case let e as MIDIError: (text, code) = (e.description, ExitCode.failure)
    case let e as RecordFailure: (text, code) = (e.description, e.status)
    case let e as CustomStringConvertible: (text, code) = (e.description, ExitCode.failure)
    default: (text, code) = ("\(error)", ExitCode.failure)
    }
    // Names and values echoed from the user or a file never reach the terminal raw; a chain
    // error keeps its caret lines (each already escaped).
    let safe = error is ChainError ? text : text.terminalSafe
    console.err("tapedeck: \(safe)\n")
    return code
}
