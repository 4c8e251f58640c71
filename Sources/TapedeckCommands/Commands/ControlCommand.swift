import Foundation
import TapedeckCore
import TapedeckIO
import TapedeckRemote

/// `tapedeck ctl`: tells a running Tapedeck (the screen, `record` or `play`) what to do over
/// its control socket, and prints its answer.
struct ControlCommand: Command {
    static let spec = CommandSpec(
        name: "ctl", summary: "control a running Tapedeck (screen, record or play): play, stop, record, locate, loop, speed, status",
        synopsis: ["ctl [--session S | --pid P] COMMAND [ARGUMENT]"],
        positionals: [PositionalSpec("COMMAND", complete: .choices,
                                     choices: ControlCommand.verbs),
                      PositionalSpec("ARGUMENT", complete: .none)],
        options: [
            OptionSpec("--session", value: "S", "the Tapedeck that has session S open", complete: .session),
            OptionSpec("--pid", value: "P", "the Tapedeck running as process P"),
        ],
        details: """
        Every running Tapedeck — the screen, `record` and `play` — listens on a socket of its own,
        $XDG_RUNTIME_DIR/tapedeck/PID.sock (/tmp/tapedeck-UID/PID.sock when XDG_RUNTIME_DIR is
        not set), mode 0600 in a folder only you can enter; nothing listens on the network.
        A folder that is not yours alone (another user made /tmp/tapedeck-UID first, or it is a
        link, or open to others) is never used: Tapedeck listens in a folder of its own beside
        it, and ctl finds it there, refuses the other in one line and sends nothing unless the
        process answering runs as you.
        With one Tapedeck running, no --session or --pid is needed. A session named first, as
        other commands take it (`tapedeck ctl song.tapedeck status`), is read as --session.

          play            roll from the playhead
          stop            stop (a recording ends and its takes are kept)
          record          start recording the armed tracks, or stop a recording
          record on       start recording unless a take runs (MMC's record strobe)
          record off      end the take, rolling on (MMC's record exit)
          rewind          back to the start
          back [N]        back N bars, one by default (a surface's rewind button)
          forward [N]     on N bars, one by default (its fast-forward button)
          locate TIME     move the playhead (12.5, 1:30, 4.1.1, 3|2|480, 90000f)
          loop on|off     loop over the session's loop range (toggle: switch it)
          speed R         playback speed (0.75, 3/4, 75%)
          save            save the session as the screen holds it (its save key, NSM's save)
          status          one JSON line: state, position, speed, armed tracks, xruns, levels

        The screen's own keys are these same commands: it does exactly what they do and says
        on its message line who asked; a headless `record` stops when told stop (or record)
        and refuses to move while it records; `play` follows every command but record; neither
        has anything to save. Prints the answer: ok, ok: what happened, or the JSON; a refusal
        is printed on stderr and exits 1. MIDI machine control, a surface's transport buttons
        and a session manager's save are read into these same commands and obey the same rules.
        """,
        examples: ["tapedeck ctl status", "tapedeck ctl --session song.tapedeck locate 9.1.1", "tapedeck ctl record"])

    let command: RemoteCommand
    let session: String?
    let pid: pid_t?

    init(arguments: inout Arguments) throws {
        var session = try arguments.option("--session")
        pid = try arguments.intOption("--pid", in: 1...Int(Int32.max)).map { pid_t($0) }
        var words = arguments.remainingPositionals()
        // `ctl song.tapedeck status`, as every other command takes its session: no verb is
        // a session folder's name, so the first word can only mean the session.
        if session == nil, let first = words.first, ControlCommand.namesSession(first) {
            session = first
            words.removeFirst()
        }
        self.session = session
        guard !words.isEmpty else { throw UsageError("ctl: give a command: \(RemoteCommand.words.joined(separator: ", "))") }
        switch RemoteCommand.parse(words.joined(separator: " ")) {
        case .success(let c): command = c
        case .failure(let e): throw UsageError("ctl: \(e.description)")
        }
        if session != nil && pid != nil { throw UsageError("ctl: give --session or --pid, not both") }
    }

    /// The first word of every command the socket takes.
    static let verbs = RemoteCommand.words.map { String($0.prefix { $0 != " " }) }

    /// Whether `word` names a session folder rather than a verb.
    static func namesSession(_ word: String) -> Bool {
        if SessionFolder.isNamed(word) { return true }
        guard !ControlCommand.verbs.contains(word.lowercased()) else { return false }
        return SessionFolder(path: word).exists
    }

    func run(_ context: CommandContext) throws -> Int32 {
        let target = try choose()
        let reply: String
        do { reply = try ControlClient.send(command.line, toPid: target) } catch { throw ControlFailure(message: "ctl: \(error)") }
        if reply.hasPrefix("error: ") {
            throw ControlFailure(message: "ctl: Tapedeck pid \(target): \(reply.dropFirst(7))")
        }
        // The reply is one line of JSON (or a word): any character a terminal would act on is
        // escaped, which inside JSON's strings is the same character to a JSON reader.
        Terminal.out(reply.terminalSafe)
        return ControlCommand.exitStatus(of: command, reply: reply)
    }

    /// What ctl exits with once the owner answered: a handed command's (`cmd {…}`) own status,
    /// as the owner's JSON line says it (64: refused as a usage error), so a script sees a
    /// refusal as the command run directly would show it; 0 for every other verb and for an
    /// answer that says no status (printed as it came); 1 for a status no process can exit with.
    static func exitStatus(of command: RemoteCommand, reply: String) -> Int32 {
        guard case .typed = command,
              let object = try? JSONSerialization.jsonObject(with: Data(reply.utf8)) as? [String: Any],
              let status = (object["status"] as? NSNumber)?.int32Value else { return ExitCode.ok }
        return (0...255).contains(status) ? status : 1
    }

    /// The Tapedeck to talk to: the one `--pid` names, the one with `--session` open, or the
    /// only one running.
    private func choose() throws -> pid_t {
        if let pid {
            guard kill(pid, 0) == 0 || errno != ESRCH else { throw ControlFailure(message: "ctl: no process \(pid) is running") }
            return pid
        }
        let running = ControlClient.instances()
        // A control folder someone else made (or opened up) is never used: named, once.
        let refused = ControlFolder.folders().refused
        func describe(_ list: [(pid: pid_t, status: [String: Any])]) -> String {
            list.map { i in
                let where_ = (i.status["session"] as? String).map { ($0 as NSString).lastPathComponent } ?? "no session"
                return "pid \(i.pid) (\(i.status["front_end"] as? String ?? "?"), \(where_))"
            }.joined(separator: ", ")
        }
        guard !running.isEmpty else {
            if let bad = refused.first { throw ControlFailure(message: "ctl: " + ControlClient.refusal(bad.folder, bad.why)) }
            throw ControlFailure(message: "ctl: no Tapedeck is running (no control socket in \(ControlFolder.path))")
        }
        for bad in refused { Terminal.err("tapedeck: warning: ctl: \(ControlClient.refusal(bad.folder, bad.why).terminalSafe)\n") }
        if let session {
            let wanted = ControlCommand.canonical(session)
            let matches = running.filter { ($0.status["session"] as? String).map(ControlCommand.canonical) == wanted }
            guard let first = matches.first else {
                throw ControlFailure(message: "ctl: no running Tapedeck has \(session.terminalSafe) open (running: \(describe(running)))")
            }
            return first.pid
        }
        guard running.count == 1 else {
            throw UsageError("ctl: \(running.count) Tapedecks are running: \(describe(running)); choose one with --pid or --session")
        }
        return running[0].pid
    }

    /// A session path with links and `..` resolved, without a trailing slash.
    static func canonical(_ path: String) -> String {
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        let standard = URL(fileURLWithPath: absolute).standardizedFileURL.path
        guard let real = realpath(standard, nil) else { return standard }
        defer { free(real) }
        return String(cString: real)
    }
}

/// A refusal or a failure to reach a Tapedeck (exit 1).
struct ControlFailure: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}
