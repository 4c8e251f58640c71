import Foundation
import TapedeckCore
import TapedeckIO
import TapedeckRemote
#if canImport(Glibc)
import Glibc
#endif

/// Command-line edits of a session that the screen holds open: handed to the screen, which
/// runs them (see ``SessionOwner``).
///
/// The asking side: a command that would take the session lock finds it held by a Tapedeck
/// serving a control socket; instead of waiting and refusing, it sends the command typed —
/// its name and its parsed value as JSON (``HandedCommand``, paths made absolute), never its
/// words — and prints what the owner's run of it printed, with its status.
/// The owner's side: ``run(_:served:importCopies:)`` decodes the value by the command's name
/// from ``CommandList`` and runs it, its output kept for the reply.
enum OwnerForwarding {
    /// The commands whose edits a running owner takes: every plain session edit. Not
    /// `record` (it opens devices; a take is recorded by its own process), not `recover`.
    static let commandNames: Set<String> = [
        "import", "chain", "learn", "track", "bus", "send", "automation", "region", "marker",
        "session", "tempo", "meter", "loop", "punch", "takes", "undo", "redo",
    ]

    /// The commands whose reads a running owner answers from the session as it stands (its
    /// unsaved edits included), with the text, JSON and status the command gives on the
    /// saved file: `info`, and the showing forms of the others (`tempo S list`, `chain S T`,
    /// `automation S T …`, `undo S --list`, `takes S T`, `marker S`, `session S`).
    static let readNames: Set<String> = ["info", "tempo", "chain", "automation", "undo", "takes", "marker", "session"]

    /// How long a read waits for the owner before it reads the saved file instead: the
    /// owner's UI thread answers between frames (an import copies on a worker: see
    /// ``ImportInBackground``), so this is only reached when it is stuck.
    static let readReplySeconds = 20

    /// How long the asking side waits for the owner's answer: an import of a long file runs
    /// in the owner, and is answered when done.
    static let replySeconds = 600

    /// Lets ``SessionLock`` tell a holder that takes edits (it serves a control socket). A
    /// socket of the holder's in a folder that is not to be trusted counts too: the handover
    /// then refuses, naming that folder (``ControlClient``), rather than wait for the lock.
    static func install() {
        SessionOwner.takesEdits = { pid in
            if ControlFolder.trustedSocket(pid: pid) != nil { return true }
            var st = stat()
            return ControlFolder.folders().refused.contains { lstat($0.folder + "/\(pid).sock", &st) == 0 }
        }
    }

    /// What the owner made of a handed-over command line.
    private enum Answer {
        /// Nobody listens on the owner's socket (a stale file, or a screen that just quit).
        case nobodyListens
        /// It could not be asked: why.
        case unreachable(String)
        /// It refused the command line (`error: …`): why.
        case refused(String)
        /// It answered what is not a command's reply.
        case malformed
        /// It ran the command: its status and what it printed.
        case ran(status: Int32, out: String, err: String)
    }

    /// `args` (the command line after `type`'s name) as the typed command the owner takes: parsed
    /// (paths made absolute first) into `type`'s value, encoded as JSON. `session` is the held
    /// session's folder, left out of the label the owner's undo step shows.
    static func typed(_ type: any Command.Type, _ args: [String], session: String) throws -> TypedCommand {
        let absolute = absolutePaths(args, spec: type.spec)
        guard let handed = type as? any HandedCommand.Type else {
            throw UsageError("\(type.name) \(notTakenText)")
        }
        var parsed = Arguments(absolute, spec: type.spec)
        let command = try handed.init(arguments: &parsed)
        try parsed.finish()
        // Which word is the session is the file system's word (`./S.tapedeck/` is S.tapedeck).
        let held = SessionOwner.canonicalPath(session)
        let label = ([type.name] + absolute.filter { held == nil || SessionOwner.canonicalPath($0) != held }).joined(separator: " ")
        return TypedCommand(name: type.name, value: try encode(command), workingFolder: FileManager.default.currentDirectoryPath,
                            label: label)
    }

    /// A handed command's JSON, keys sorted (the same value always reads the same).
    static func encode(_ command: any HandedCommand) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(command), as: UTF8.self)
    }

    /// The handed command `typed` names, decoded from its value; why not, in one line.
    static func decode(_ typed: TypedCommand) -> Result<any HandedCommand, UsageError> {
        guard commandNames.contains(typed.name) || readNames.contains(typed.name),
              let type = CommandList.all.first(where: { $0.name == typed.name }) as? any HandedCommand.Type else {
            let known = commandNames.union(readNames).sorted().joined(separator: ", ")
            return .failure(UsageError("'\(typed.name.terminalSafe)' \(notTakenText) (it takes: \(known))"))
        }
        func value<C: HandedCommand>(_ type: C.Type) throws -> any HandedCommand {
            try JSONDecoder().decode(type, from: Data(typed.value.utf8))
        }
        let command: any HandedCommand
        do { command = try value(type) } catch {
            return .failure(UsageError("the typed '\(typed.name.terminalSafe)' command handed over could not be read: \(decodingProblem(error)) (\(malformedText))"))
        }
        // What the parser would have refused never reaches `run`, which relies on it.
        do { try command.validate() } catch { return .failure(UsageError("\(error.description.terminalSafe)")) }
        return .success(command)
    }

    /// Where and why a value did not decode, in a few words (`edit.add.time: missing`).
    private static func decodingProblem(_ error: any Error) -> String {
        func path(_ keys: [any CodingKey]) -> String { keys.isEmpty ? "the value" : keys.map(\.stringValue).joined(separator: ".") }
        switch error as? DecodingError {
        case .keyNotFound(let key, let context)?: return "\(path(context.codingPath + [key])): missing"
        case .typeMismatch(_, let context)?, .valueNotFound(_, let context)?, .dataCorrupted(let context)?:
            return "\(path(context.codingPath)): \(context.debugDescription)".terminalSafe
        default: return "\(error)".terminalSafe
        }
    }

    /// What an owner says of a typed command whose value it cannot read.
    static let malformedText = "not a value this Tapedeck's command of that name takes; are both the same version?"

    /// Sends `args` (the command line after `type`'s name), typed, to the owner `pid` and
    /// waits up to `timeoutSeconds` for its answer.
    private static func ask(_ type: any Command.Type, _ args: [String], session: String, pid: Int32, timeoutSeconds: Int) -> Answer {
        let command: TypedCommand
        do { command = try typed(type, args, session: session) } catch {
            return .unreachable("the command could not be typed: \(error)")
        }
        let reply: String
        do {
            reply = try ControlClient.sendTyped(command, toPid: pid, timeoutMilliseconds: timeoutSeconds * 1000)
        } catch where error.nobodyListens {
            return .nobodyListens
        } catch {
            return .unreachable(error.description)
        }
        if reply.hasPrefix("error: ") { return .refused(String(reply.dropFirst(7))) }
        guard let object = try? JSONSerialization.jsonObject(with: Data(reply.utf8)) as? [String: Any],
              let status = (object["status"] as? NSNumber)?.int32Value else { return .malformed }
        return .ran(status: status, out: object["out"] as? String ?? "", err: object["err"] as? String ?? "")
    }

    /// Prints what the owner's run of a command printed.
    private static func echo(out: String, err: String) {
        if !out.isEmpty { Terminal.out(out, newline: false) }
        if !err.isEmpty { Terminal.err(err.terminalSafeLines) }
    }

    /// Hands `args` (the command line after `type`'s name) to the owner `pid`; prints what it
    /// printed and returns its status. `refusal` is said when the owner cannot be asked. Nil
    /// when nobody listens on the socket (a stale file: the caller runs the command itself).
    @MainActor
    static func forward(_ type: any Command.Type, _ args: [String], to pid: Int32, refusal: SessionError) -> Int32? {
        switch ask(type, args, session: refusal.path, pid: pid, timeoutSeconds: replySeconds) {
        case .nobodyListens:
            return nil
        case .unreachable(let why):
            Terminal.err("tapedeck: \(refusal.description.terminalSafe); it cannot be asked to make the edit: \(why.terminalSafe)\n")
            return ExitCode.unavailable
        case .refused(let why):
            Terminal.err("tapedeck: \(refusal.path.terminalSafe): \(why.terminalSafe)\n")
            return ExitCode.unavailable
        case .malformed:
            Terminal.err("tapedeck: \(refusal.path.terminalSafe): pid \(pid) answered what is not a command's reply\n")
            return ExitCode.failure
        case .ran(let status, let out, let err):
            echo(out: out, err: err)
            return status
        }
    }

    /// Asks the owner `pid` to answer a read (`args` after `type`'s name) from the session as
    /// it stands; prints its answer and returns its status. Nil when it cannot answer: nobody
    /// listens, it takes no reads (headless `record`, or an older screen), or it did not
    /// answer in time. The caller then reads the saved file; a failure worth knowing about
    /// (no answer, a control folder not to be trusted) is said in one line first.
    @MainActor
    static func forwardRead(_ type: any Command.Type, _ args: [String], to pid: Int32, holder: SessionError) -> Int32? {
        switch ask(type, args, session: holder.path, pid: pid, timeoutSeconds: readReplySeconds) {
        case .nobodyListens:
            return nil
        case .unreachable(let why):
            Terminal.err("tapedeck: \(holder.description.terminalSafe), which cannot be asked (\(why.terminalSafe)); showing the saved session.json\n")
            return nil
        case .refused:
            // Headless record takes no edits; an older screen takes no reads: both
            // hold nothing the file does not say.
            return nil
        case .malformed:
            Terminal.err("tapedeck: \(holder.path.terminalSafe): pid \(pid) answered what is not a command's reply; showing the saved session.json\n")
            return nil
        case .ran(let status, let out, let err):
            if status == ExitCode.usage, out.isEmpty, err.contains(notTakenText) { return nil }
            echo(out: out, err: err)
            return status
        }
    }

    /// What an owner says of a command it does not take.
    static let notTakenText = "is not an edit a running Tapedeck takes"

    /// The owner's side: runs `typed` (a command's name and value, typed in its working
    /// folder) as this program would, on the session the owner serves (`served`), and returns
    /// its status with what it printed (kept for the reply, never on the owner's terminal).
    /// No words are parsed here: the asker parsed them. `importCopies`: what the owner's
    /// worker already copied for an import. UI thread.
    @MainActor
    static func run(_ typed: TypedCommand, served: SessionStore.Served,
                    importCopies: CopiedImports? = nil) -> (status: Int32, out: String, err: String) {
        let command: any HandedCommand
        switch decode(typed) {
        case .success(let c): command = c
        case .failure(let why): return (ExitCode.usage, "", "tapedeck: \(why.description)\n")
        }
        let console = Console.reply()
        let context = CommandContext(console: console, sessions: SessionStore(served: served),
                                     workingFolder: typed.workingFolder, importCopies: importCopies)
        let status: Int32
        do { status = try command.run(context) } catch { status = report(error, to: console) }
        return (status, console.outText, console.errText)
    }

    /// `args` with every session, file and folder argument made absolute, so the owner (in
    /// another working directory) reads the same files. Which arguments are paths comes from
    /// the command's spec: its positional slots and options that name files.
    static func absolutePaths(_ args: [String], spec: CommandSpec) -> [String] {
        let cwd = FileManager.default.currentDirectoryPath
        func absolute(_ path: String) -> String {
            path.hasPrefix("/") || path == "-" || path.isEmpty ? path : cwd + "/" + path
        }
        func isPath(_ kind: CompletionKind) -> Bool { [.file, .audioFile, .directory, .session].contains(kind) }
        func optionIsPath(_ o: OptionSpec) -> Bool {
            isPath(o.completion) || ["FILE", "DIR", "FOLDER", "PATH"].contains { (o.value ?? "").contains($0) }
        }
        var out: [String] = []
        var slot = 0
        var i = 0
        var afterDashes = false
        while i < args.count {
            let word = args[i]
            if !afterDashes && word == "--" { afterDashes = true; out.append(word); i += 1; continue }
            if !afterDashes, word.hasPrefix("-"), word.count > 1, Double(word) == nil,
               let option = spec.options.first(where: { o in o.names.contains { word == $0 || word.hasPrefix($0 + "=") } }) {
                if option.takesValue, let equals = word.firstIndex(of: "=") {
                    let value = String(word[word.index(after: equals)...])
                    out.append(String(word[...equals]) + (optionIsPath(option) ? absolute(value) : value))
                } else if option.takesValue, i + 1 < args.count {
                    out.append(word)
                    out.append(optionIsPath(option) ? absolute(args[i + 1]) : args[i + 1])
                    i += 1
                } else {
                    out.append(word)
                }
                i += 1
                continue
            }
            // `automation S T P import FILE.csv`: a file in a slot the spec leaves to the action.
            if spec.name == "automation", out.last == "import", slot >= spec.positionals.count {
                out.append(absolute(word))
                slot += 1
                i += 1
                continue
            }
            let kinds = spec.positionals.map(\.completion)
            let kind = kinds.isEmpty ? CompletionKind.none : kinds[min(slot, kinds.count - 1)]
            // A last slot repeats only when it is a list (FILE...).
            let repeats = spec.positionals.last.map { $0.name.hasSuffix("...") } ?? false
            out.append(isPath(kind) && (slot < kinds.count || repeats) ? absolute(word) : word)
            slot += 1
            i += 1
        }
        return out
    }
}

extension String {
    /// Each line escaped for the terminal (``String/terminalSafe``), the line ends kept.
    var terminalSafeLines: String {
        split(separator: "\n", omittingEmptySubsequences: false).map { String($0).terminalSafe }.joined(separator: "\n")
    }
}
