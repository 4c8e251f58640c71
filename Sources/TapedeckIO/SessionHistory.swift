import Foundation
import TapedeckCore
#if canImport(Glibc)
import Glibc
#endif

/// The session's undo history on disk, `SESSION/history/`: one step per save, so that
/// `tapedeck undo S` reverts the last change whichever process made it, a day later too.
///
/// Each save (``SessionFolder/save(_:)``) keeps the `session.json` it replaces as a step,
/// named after what changed it (the command line: `marker add 1:00 Chorus`). The step costs
/// no copy: it is a second name for the old file, as the backup is. `index.json` lists the
/// undo and redo steps, oldest first; a save after an undo drops the redo steps, as in every
/// editor. At most ``limit`` undo steps are kept. Keeping history never fails a save: a step
/// that cannot be kept (a full disk, no hard links and no room for a copy) is left out.
///
/// The screen keeps its own finer undo in memory (every key an edit); its saves are steps
/// here like any other.
public enum SessionHistory {
    /// Undo steps kept on disk.
    public static let limit = 50

    struct Step: Codable, Equatable {
        var file: String
        var name: String
    }

    struct Index: Codable {
        var undo: [Step] = []
        var redo: [Step] = []
    }

    /// The steps `undo` and `redo` would take, newest first: their names. Throws when the
    /// history cannot be the session's (``check(_:)``).
    public static func steps(_ folder: SessionFolder) throws(SessionError) -> (undo: [String], redo: [String]) {
        try check(folder)
        let index = read(folder)
        return (index.undo.reversed().map(\.name), index.redo.reversed().map(\.name))
    }

    /// `undo --list`'s text for these steps (newest first), whoever keeps them: the folder's
    /// history, or the screen's own undo while it holds the session open.
    public static func listText(undo: [String], redo: [String]) -> String {
        let lines = undo.enumerated().map { "  undo \($0.offset + 1)  \($0.element)" }
            + redo.enumerated().map { "  redo \($0.offset + 1)  \($0.element)" }
        return lines.isEmpty ? "no history (steps are kept from the first save that changes the session)" : lines.joined(separator: "\n")
    }

    /// The name a save gets when its caller names none: this process's command line without
    /// the program and the session's own path (`marker add 1:00 Chorus`). The screen names
    /// its own saves, and a command handed to it (``SessionStore``).
    static func commandLineLabel(_ folder: SessionFolder) -> String {
        let words = CommandLine.arguments.dropFirst().filter { $0 != folder.path && $0 != folder.path + "/" }
        let text = words.joined(separator: " ")
        return String((text.isEmpty ? "save" : text).prefix(200))
    }

    /// Before a save replaces `session.json`: keeps it as an undo step named `name` and drops
    /// the redo steps (unless the save is itself an undo or redo). Best effort.
    static func keep(_ folder: SessionFolder, name: String, clearingRedo: Bool = true) {
        guard FileSystem.exists(folder.sessionFile) else { return }
        let dir = folder.path + "/history"
        guard makeFolder(folder) else { return }
        var index = read(folder)
        guard let file = preserve(folder.sessionFile, in: dir, index: index) else { return }
        index.undo.append(Step(file: file, name: name))
        var dropped: [Step] = []
        if clearingRedo { dropped += index.redo; index.redo = [] }
        if index.undo.count > limit {
            dropped += index.undo.prefix(index.undo.count - limit)
            index.undo.removeFirst(index.undo.count - limit)
        }
        guard write(index, folder) else { unlink(dir + "/" + file); return }
        for step in dropped { unlink(dir + "/" + step.file) }
    }

    /// The session `undo` (or `redo`) would restore and the step's name, without changing
    /// anything; nil when there is no step. Throws when the step's file cannot be read.
    static func peek(_ folder: SessionFolder, undo: Bool) throws(SessionError) -> (Session, String)? {
        let index = read(folder)
        guard let step = undo ? index.undo.last : index.redo.last else { return nil }
        let path = folder.path + "/history/" + step.file
        let bytes: [UInt8]
        do { bytes = try FileSystem.readAll(path: path, limitBytes: Int64(SessionLimits.maximumSessionFileBytes)) } catch {
            throw SessionError(path: path, reason: "the history step '\(step.name)' cannot be read: \(error.reason)")
        }
        return (try SessionFolder.decode(Data(bytes), path: path), step.name)
    }

    /// After `session.json` was replaced by the step `peek` gave: moves the step across (the
    /// replaced file becomes a step on the other side) and saves the index.
    static func moved(_ folder: SessionFolder, undo: Bool, replacedFile: String?) {
        var index = read(folder)
        guard let step = undo ? index.undo.popLast() : index.redo.popLast() else { return }
        unlink(folder.path + "/history/" + step.file)
        if let replacedFile {
            let other = Step(file: replacedFile, name: step.name)
            if undo { index.redo.append(other) } else { index.undo.append(other) }
        }
        _ = write(index, folder)
    }

    /// Keeps the current `session.json` under a new name in the history folder; the name.
    static func preserveCurrent(_ folder: SessionFolder) -> String? {
        let dir = folder.path + "/history"
        guard makeFolder(folder) else { return nil }
        return preserve(folder.sessionFile, in: dir, index: read(folder))
    }

    private static func preserve(_ source: String, in dir: String, index: Index) -> String? {
        let used = Set((index.undo + index.redo).map(\.file))
        var n = (index.undo + index.redo).compactMap { Int($0.file.prefix { $0.isNumber }) }.max() ?? 0
        var name: String
        repeat {
            n += 1
            name = String(format: "%06d.json", n)
        } while used.contains(name) || FileSystem.exists(dir + "/" + name)
        let target = dir + "/" + name
        if link(source, target) == 0 { return name }
        // No hard links here (FAT, some network shares): a copy.
        guard let bytes = try? FileSystem.readAll(path: source, limitBytes: Int64(SessionLimits.maximumSessionFileBytes)),
              (try? DurableFile.writeNew(bytes, to: target, sync: false)) != nil else { unlink(target); return nil }
        return name
    }

    /// Why the session's `history` cannot be its undo history, or nil when it can (a folder
    /// of the session's own, or not there yet): a link (steps would be written and read
    /// elsewhere) or something that is not a folder (edits would keep no history, silently).
    /// The session is refused with this, as a region file that is a link is.
    public static func folderProblem(_ folder: SessionFolder) -> String? {
        let dir = folder.path + "/history"
        var st = stat()
        guard lstat(dir, &st) == 0 else { return nil }
        switch st.st_mode & S_IFMT {
        case S_IFDIR: return nil
        case S_IFLNK:
            let target = SessionFolder.resolved(dir).map { " to \($0.terminalSafe)" } ?? " that leads nowhere"
            return "is a link\(target); the undo history must be a folder inside the session (Tapedeck never keeps it through a link): move it back or remove the link"
        default:
            return "is not a folder; the undo history must be a folder inside the session: move that file away"
        }
    }

    /// Refuses a session whose `history` is a link or not a folder (``folderProblem(_:)``).
    public static func check(_ folder: SessionFolder) throws(SessionError) {
        if let why = folderProblem(folder) { throw SessionError(path: folder.path + "/history", reason: why) }
    }

    /// Makes `history/` when missing; false when it cannot be the history (``folderProblem(_:)``).
    private static func makeFolder(_ folder: SessionFolder) -> Bool {
        if folderProblem(folder) != nil { return false }
        let dir = folder.path + "/history"
        var st = stat()
        return lstat(dir, &st) == 0 || mkdir(dir, 0o755) == 0
    }

    private static func read(_ folder: SessionFolder) -> Index {
        guard folderProblem(folder) == nil else { return Index() }
        let path = folder.path + "/history/index.json"
        let bytes = try? FileSystem.readAll(path: path, limitBytes: 1 << 20)
        guard let bytes, let index = try? JSONDecoder().decode(Index.self, from: Data(bytes)) else {
            // Steps with no readable index: the history is rebuilt from them, never forgotten.
            return rebuilt(folder, damaged: bytes != nil || FileSystem.isPresent(path))
        }
        // A step's file is a plain name in the history folder, never a path elsewhere.
        func sane(_ s: Step) -> Bool { !s.file.isEmpty && !s.file.contains("/") && !s.file.hasPrefix(".") }
        return Index(undo: index.undo.filter(sane), redo: index.redo.filter(sane))
    }

    /// The history read back from its step files when `index.json` is damaged (or missing
    /// beside steps): every step an undo step, oldest first by the time it was saved (the
    /// newest ``limit``), named by that time (their names were in the index). Said as a
    /// notice; under the session lock also saved as the new index (the damaged one kept as
    /// `index.json.damaged`), so it is said once.
    private static func rebuilt(_ folder: SessionFolder, damaged: Bool) -> Index {
        let dir = folder.path + "/history"
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).filter { name in
            name.hasSuffix(".json") && name != "index.json" && !name.hasPrefix(".") && name.dropLast(5).allSatisfy(\.isNumber)
        }
        guard !names.isEmpty else { return Index() }
        let stamped = names.compactMap { name -> (name: String, nanos: Int64)? in
            guard let stamp = FileStamp.of(path: dir + "/" + name) else { return nil }
            return (name, stamp.modificationNanoseconds)
        }.sorted { ($0.nanos, $0.name) < ($1.nanos, $1.name) }.suffix(limit)
        let index = Index(undo: stamped.map { step in
            Step(file: step.name, name: "the save of \(LocalTimestamp.string("%Y-%m-%d %H:%M:%S", at: Date(timeIntervalSince1970: Double(step.nanos) / 1e9))) (its name was in the lost index)")
        })
        let path = dir + "/index.json"
        // Only a writer (the lock's holder) mends the index; a reader just reads the steps.
        if SessionLock.isHeld(folder) {
            if damaged { _ = rename(path, path + ".damaged") }
            _ = write(index, folder)
        }
        SessionFolder.notice("\(path.terminalSafe): \(damaged ? "unreadable" : "missing"); the undo history was rebuilt from its \(index.undo.count) step file\(index.undo.count == 1 ? "" : "s") (their names are lost\(damaged ? "; the damaged index is kept as index.json.damaged" : ""))")
        return index
    }

    private static func write(_ index: Index, _ folder: SessionFolder) -> Bool {
        let path = folder.path + "/history/index.json"
        guard let data = try? JSONEncoder().encode(index) else { return false }
        let tmp = path + ".tmp"
        unlink(tmp)
        guard (try? DurableFile.writeNew([UInt8](data), to: tmp, sync: false)) != nil else { unlink(tmp); return false }
        guard rename(tmp, path) == 0 else { unlink(tmp); return false }
        return true
    }
}
