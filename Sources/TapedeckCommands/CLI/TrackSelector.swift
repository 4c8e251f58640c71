import Foundation
import TapedeckCore

/// Reads a track as users name it on the command line: a 1-based number or a track's name,
/// matched ignoring case; an unknown name suggests the nearest one.
///
/// Buses are strips in the same list (numbered with the tracks), so every command that takes
/// a track also finds a bus; commands that put material on a track or record onto it ask for
/// ``material(of:in:command:doing:)`` instead, which refuses a bus with one line.
enum TrackSelector {
    /// The index of the track `text` names in `session`; a usage error names what is wrong.
    static func index(of text: String, in session: Session, command: String) throws(UsageError) -> Int {
        do { return try session.trackIndex(named: text) } catch {
            throw UsageError("\(command): \(error.description)")
        }
    }

    /// The index of the track `text` names, refusing a bus: `doing` ends the line, saying what
    /// a bus lacks for it (`has no regions`, `has no input to record`).
    static func material(of text: String, in session: Session, command: String, doing why: String) throws(UsageError) -> Int {
        let i = try index(of: text, in: session, command: command)
        try refuseBus(i, in: session, command: command, why)
        return i
    }

    /// Refuses strip `index` when it is a bus: `command: Reverb is a bus: a bus WHY`.
    static func refuseBus(_ index: Int, in session: Session, command: String, _ why: String) throws(UsageError) {
        let t = session.tracks[index]
        guard t.isBus else { return }
        throw UsageError("\(command): \(t.name.terminalSafe) is a bus: a bus \(why)")
    }

    /// The index of the bus `text` names: its name (any case) or its strip number. A track's
    /// name is refused as not a bus; an unknown name suggests the nearest bus.
    static func bus(of text: String, in session: Session, command: String) throws(UsageError) -> Int {
        if let b = session.busIndex(named: text.trimmingCharacters(in: .whitespaces)) { return b }
        let busNames = session.buses.map(\.track.name)
        if let i = try? session.trackIndex(named: text) {
            if session.tracks[i].isBus { return i }
            throw UsageError("\(command): \(session.tracks[i].name.terminalSafe) is a track, not a bus"
                             + (busNames.isEmpty ? " (the session has no buses: tapedeck bus SESSION add NAME)" : " (buses: \(busNames.joined(separator: ", ")))"))
        }
        if busNames.isEmpty {
            throw UsageError("\(command): no bus named '\(text)' (the session has no buses: tapedeck bus SESSION add NAME)")
        }
        throw UsageError("\(command): no bus named '\(text)'\(NameMatch.suggestion(text.trimmingCharacters(in: .whitespaces), in: busNames))")
    }

    /// Refuses `name` for strip `index` (-1: a new strip) with the session's own line
    /// (``Session/stripNameProblem(_:index:bus:)``, the check the screen makes too).
    static func checkName(_ name: String, index: Int, bus: Bool, in session: Session, command: String) throws(UsageError) {
        if let problem = session.stripNameProblem(name, index: index, bus: bus) { throw UsageError("\(command): \(problem)") }
    }

    /// Runs an edit, saying a refusal (``EditRefusal``: a routing cycle, a taken name, a
    /// bus with no input) as `command`'s usage error, before anything is saved. Other errors
    /// pass as they are.
    @discardableResult
    static func refusing<T>(_ command: String, _ body: () throws -> T) throws -> T {
        do { return try body() } catch let refusal as any EditRefusal { throw UsageError("\(command): \(refusal.description)") }
    }
}
