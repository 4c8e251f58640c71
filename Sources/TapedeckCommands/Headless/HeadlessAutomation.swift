import TapedeckCore
import TapedeckIO
import TapedeckSession
import TapedeckTransport

/// Automation a headless pass wrote: MIDI-learned controllers moved over lanes in touch,
/// latch or write while `record --play` or `play` rolled. Gathered while the pass runs and
/// saved into the session when it ends by the session's owner, as the screen's are.
struct HeadlessAutomation {
    /// Everything written so far, in the order the passes ended.
    private(set) var writes: [AutomationWrite] = []

    /// Takes what the transport handed since the last call (each snapshot hands what ended).
    /// Control thread.
    mutating func collect(from transport: Transport) {
        writes += transport.collectMIDIChanges().automationWrites
    }

    /// Says which lanes were written: a line on stderr, or a JSON event.
    static func say(_ names: [String], json: Bool) {
        guard !names.isEmpty else { return }
        if json {
            StatusLine.emitLine(["event": "automation", "lanes": names])
        } else {
            Terminal.err("automation written: \(names.joined(separator: ", "))\n")
        }
    }

    /// Saves the writes into the session in `folder`, taking its lock for the save (a
    /// session another process holds is not written behind its back: the line says who holds
    /// it and that the pass was not kept). The names of the lanes written.
    func save(to folder: SessionFolder) throws -> [String] {
        guard !writes.isEmpty else { return [] }
        do {
            let lock = try SessionLock.acquire(folder)
            defer { withExtendedLifetime(lock) {} }
            // The session's owner for the save, as the screen's writes its lanes.
            let owner = OwnedSession(document: SessionDocument(session: try folder.load()), folder: folder, link: nil)
            let names = owner.writeAutomation(writes)
            if owner.isDirty { try owner.save(label: nil) }
            return names
        } catch {
            throw RecordFailure(message: "automation written while playing was not saved: \(error)")
        }
    }
}
