import Foundation
import TapedeckCore
import TapedeckIO
import TapedeckRemote

extension ScreenModel {
    /// A command-line edit (`tapedeck marker S add 1:00`) handed to the screen because it
    /// holds the session open (see `SessionOwner`), typed (the asker parsed it: its name and
    /// value, ``TypedCommand``): run as the command would run, on the session as it stands
    /// here, as one undo step named after how it was typed and who asked; the engine hears it
    /// at once, the message line says it, and the session is saved as the command's own run
    /// would have saved it. `undo` and `redo` are the screen's own (the u key's). Answers the
    /// command's status and output as one JSON line. `running` runs the command instead of
    /// the host's ``ScreenHooks/command`` (an import landing what its worker copied:
    /// ScreenModel+Jobs). UI thread.
    func handleCommand(_ command: TypedCommand, from peer: String,
                       running: (@Sendable (SessionStore.Served) -> (status: Int32, out: String, err: String))? = nil) -> RemoteReply {
        guard folder != nil else { return .error("the screen's session has no folder yet") }
        let verb = command.name
        // The asker is a command, not `ctl`: `tapedeck marker (pid 4242)`.
        let who = peer.replacingOccurrences(of: "tapedeck ctl", with: "tapedeck \(verb.terminalSafe)")
        var status: Int32 = 0
        var out = ""
        var err = ""
        let before = session
        // A read (`tapedeck info S`): answered, nothing saved; it leaves the message line alone.
        var read = false
        if verb == "undo", (try? JSONDecoder().decode(UndoShape.self, from: Data(command.value.utf8)))?.list == true {
            read = true
            // The screen's own undo, as `undo` here is (a read: nothing changes).
            out = SessionHistory.listText(undo: document.undoNames, redo: document.redoNames) + "\n"
        } else if verb == "undo" || verb == "redo" {
            let undoing = verb == "undo"
            if let name = undoing ? owner.undo() : owner.redo() {
                out = "\(undoing ? "undid" : "redid"): \(name)\n"
                if !save() { status = 1; err = "tapedeck: \(message?.text ?? "cannot save")\n" }
            } else {
                out = "nothing to \(verb) on the screen\n"
            }
        } else {
            guard let run = running.map({ r in { @Sendable (_: TypedCommand, served: SessionStore.Served) in r(served) } }) ?? hooks.command else {
                return .error("this screen does not take command-line edits")
            }
            let step = "\(command.label.terminalSafe), asked by \(who)"
            var didSave = false
            // Every save of the command is one undo step (a command may save twice), heard at once.
            guard let served = owner.served(step: step, onSave: { didSave = true }) else { return .error("the screen's session has no folder yet") }
            (status, out, err) = run(command, served)
            read = status == 0 && !didSave
        }
        if session != before { selectTrack(selectedTrack) }
        let said = (status == 0 ? out : err).split(separator: "\n").first.map(String.init) ?? (status == 0 ? "done" : "failed")
        let trimmed = said.hasPrefix("tapedeck: ") ? String(said.dropFirst(10)) : said
        // Who asked first: a long answer is cut at the line's end, the asker never.
        if !read || session != before { say("\(who): \(trimmed)", error: status != 0) }
        return ScreenModel.commandReply(status: status, out: out, err: err)
    }

    /// What the screen reads of `undo`'s value: whether it lists (`undo S --list`).
    private struct UndoShape: Decodable { var list: Bool? }

    /// A command line's answer: its status and what it printed, as one JSON line.
    static func commandReply(status: Int32, out: String, err: String) -> RemoteReply {
        let object: [String: Any] = ["status": Int(status), "out": out, "err": err]
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.withoutEscapingSlashes]) else {
            return .error("cannot encode the reply")
        }
        return .json(String(decoding: data, as: UTF8.self))
    }
}
