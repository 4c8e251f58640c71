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

    /// What the saves of this process are called in the history; nil: the command line.
    /// (The screen names its saves; a command handed to the screen names it for the command.)
    nonisolated(unsafe) public static var label: String?

    struct Step: Codable, Equatable {
        var file: String
        var name: String
    }

    struct Index: Codable {
        var undo: [Step] = []
        var redo: [Step] = []
    }

    /// The steps `undo` and `redo` would take, newest first: their names.
    public static func steps(_ folder: SessionFolder) -> (undo: [String], redo: [String]) {
        let index = read(folder)
        return (index.undo.reversed().map(\.name), index.redo.reversed().map(\.name))
    }

    /// The name a save of this process gets: ``label``, else the command line without the
    /// program and the session's own path (`marker add 1:00 Chorus`).
    static func currentLabel(_ folder: SessionFolder) -> String {
        if let label { return label }
        let words = CommandLine.arguments.dropFirst().filter { $0 != folder.path && $0 != folder.path + "/" }
        let text = words.joined(separator: " ")
        return String((text.isEmpty ? "save" : text).prefix(200))
    }

    /// Before a save replaces `session.json`: keeps it as an undo step named `name` and drops
    /// the redo steps (unless the save is itself an undo or redo). Best effort.
    static func keep(_ folder: SessionFolder, name: String, clearingRedo: Bool = true) {
        guard FileSystem.exists(folder.sessionFile) else { return }
        let dir = folder.path + "/history"
        if !FileSystem.isFolder(dir) && mkdir(dir, 0o755) != 0 { return }
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
        if !FileSystem.isFolder(dir) && mkdir(dir, 0o755) != 0 { return nil }
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

    private static func read(_ folder: SessionFolder) -> Index {
        let path = folder.path + "/history/index.json"
        guard let bytes = try? FileSystem.readAll(path: path, limitBytes: 1 << 20),
              let index = try? JSONDecoder().decode(Index.self, from: Data(bytes)) else { return Index() }
        // A step's file is a plain name in the history folder, never a path elsewhere.
        func sane(_ s: Step) -> Bool { !s.file.isEmpty && !s.file.contains("/") && !s.file.hasPrefix(".") }
        return Index(undo: index.undo.filter(sane), redo: index.redo.filter(sane))
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
