import Foundation
import TapedeckCore

/// Why a session could not be created, opened or saved. The description is one line for the
/// user: the file, and the exact field or reason.
public struct SessionError: Error, CustomStringConvertible, Equatable, Sendable {
    /// The file or folder concerned.
    public var path: String
    /// What is wrong; for a bad field it starts with the field's path, e.g. `tracks[1].pan`.
    public var reason: String

    /// Creates an error for `path`.
    public init(path: String, reason: String) {
        self.path = path
        self.reason = reason
    }

    public var description: String { "\(path): \(reason)" }
}

/// A session on disk: a folder `NAME.tapedeck/` holding `session.json`, `audio/`, `peaks/` and
/// `exports/`. Region file names in the model are relative to this folder.
public struct SessionFolder: Sendable {
    /// The folder's path, ending in `.tapedeck`.
    public let path: String

    /// The session folder at `path`; `.tapedeck` is appended when missing.
    public init(path: String) {
        var p = path
        while p.count > 1 && p.hasSuffix("/") { p.removeLast() }
        self.path = p.hasSuffix(".tapedeck") ? p : p + ".tapedeck"
    }

    /// `session.json`.
    public var sessionFile: String { path + "/session.json" }
    /// The one backup kept by ``save(_:)``: the previous `session.json`.
    public var backupFile: String { path + "/session.json.bak" }
    /// Where recorded and imported audio lives.
    public var audioFolder: String { path + "/audio" }
    /// Where peak files live.
    public var peaksFolder: String { path + "/peaks" }
    /// Default folder for exports.
    public var exportsFolder: String { path + "/exports" }
    /// Where plugin state is saved: one folder per saved state (`@state=NAME` in a chain),
    /// created when the first one is saved.
    public var pluginStateFolder: String { path + "/plugins" }

    /// Absolute path of a region file named relative to the session.
    public func absolutePath(of relative: String) -> String {
        relative.hasPrefix("/") ? relative : path + "/" + relative
    }

    /// The peak file for a session audio file (`audio/x.wav` → `peaks/x.wav.peak`).
    public func peakPath(forAudio relative: String) -> String {
        let name = relative.split(separator: "/").last.map(String.init) ?? relative
        return peaksFolder + "/" + PeakFile.fileName(forAudioFileName: name)
    }

    /// Whether a session folder exists here.
    public var exists: Bool { FileManager.default.fileExists(atPath: sessionFile) }

    /// Creates the folder and its sub-folders and saves `session`. Refuses to overwrite an
    /// existing session.
    public func create(_ session: Session) throws(SessionError) {
        if exists { throw SessionError(path: path, reason: "a session already exists here") }
        for dir in [path, audioFolder, peaksFolder, exportsFolder] {
            do {
                try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            } catch {
                // Foundation's wording loses the reason; mkdir(2)'s errno says it in words a
                // user can act on ("Permission denied", "Read-only file system", …).
                let why = mkdir(dir, 0o755) != 0 ? String(cString: strerror(errno)) : SessionFolder.reason(error)
                throw SessionError(path: dir, reason: "cannot create folder: \(why)")
            }
        }
        try save(session)
    }

    /// Saves atomically: writes a temporary file, fsyncs it, keeps the previous file as the one
    /// backup, renames the new file into place and fsyncs the folder. A crash at any moment
    /// leaves either the old or the new session readable.
    public func save(_ session: Session) throws(SessionError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let data: Data
        do { data = try encoder.encode(session) } catch {
            throw SessionError(path: sessionFile, reason: "cannot encode: \(error)")
        }
        let tmp = sessionFile + ".tmp"
        try writeDurably(data, to: tmp)
        if FileManager.default.fileExists(atPath: sessionFile) {
            if rename(sessionFile, backupFile) != 0 {
                throw SessionError(path: backupFile, reason: "cannot keep the backup: \(String(cString: strerror(errno)))")
            }
        }
        if rename(tmp, sessionFile) != 0 {
            throw SessionError(path: sessionFile, reason: "cannot replace: \(String(cString: strerror(errno)))")
        }
        let dirFD = open(path, O_RDONLY | O_DIRECTORY)
        if dirFD >= 0 { fsync(dirFD); close(dirFD) }
    }

    /// Loads and validates `session.json`. Every problem names the exact field.
    public func load() throws(SessionError) -> Session {
        var st = stat()
        if stat(path, &st) != 0 { throw SessionError(path: path, reason: "no such session folder") }
        guard let data = FileManager.default.contents(atPath: sessionFile) else {
            throw SessionError(path: sessionFile, reason: "missing or unreadable")
        }
        return try SessionFolder.decode(data, path: sessionFile)
    }

    /// Decodes and validates session JSON; errors name `path` and the field.
    public static func decode(_ data: Data, path: String) throws(SessionError) -> Session {
        // Check the version first, so a newer file gets a version message, not a field error.
        let top: Any
        do { top = try JSONSerialization.jsonObject(with: data) } catch {
            throw SessionError(path: path, reason: "not valid JSON (\(jsonReason(error)))")
        }
        guard let object = top as? [String: Any] else {
            throw SessionError(path: path, reason: "the top level must be a JSON object")
        }
        guard let version = object["schemaVersion"] as? Int else {
            throw SessionError(path: path, reason: "schemaVersion: missing or not a whole number")
        }
        if version > Session.currentSchemaVersion {
            throw SessionError(path: path, reason: "schemaVersion: \(version) is newer than this Tapedeck reads (\(Session.currentSchemaVersion)); update Tapedeck")
        }
        if version < 1 { throw SessionError(path: path, reason: "schemaVersion: \(version) is not a valid version") }
        let session: Session
        do { session = try JSONDecoder().decode(Session.self, from: data) } catch let error as DecodingError {
            throw SessionError(path: path, reason: describe(error))
        } catch {
            throw SessionError(path: path, reason: "\(error)")
        }
        if let problem = SessionValidator.problem(in: session) {
            throw SessionError(path: path, reason: problem)
        }
        return session
    }

    private func writeDurably(_ data: Data, to file: String) throws(SessionError) {
        let fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        if fd < 0 { throw SessionError(path: file, reason: "cannot write: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        let ok = data.withUnsafeBytes { raw -> Bool in
            var offset = 0
            while offset < raw.count {
                let n = Glibc.write(fd, raw.baseAddress! + offset, raw.count - offset)
                if n <= 0 { return false }
                offset += n
            }
            return true
        }
        if !ok || fsync(fd) != 0 {
            let reason = String(cString: strerror(errno))
            unlink(file)
            throw SessionError(path: file, reason: "cannot write: \(reason)")
        }
    }

    private static func describe(_ error: DecodingError) -> String {
        func field(_ path: [CodingKey]) -> String {
            var text = ""
            for key in path {
                if let i = key.intValue { text += "[\(i)]" } else { text += (text.isEmpty ? "" : ".") + key.stringValue }
            }
            return text.isEmpty ? "(top level)" : text
        }
        switch error {
        case .keyNotFound(let key, let ctx):
            let parent = field(ctx.codingPath)
            return "\(parent == "(top level)" ? "" : parent + ".")\(key.stringValue): missing"
        case .typeMismatch(let type, let ctx):
            return "\(field(ctx.codingPath)): expected \(typeName(type))"
        case .valueNotFound(let type, let ctx):
            return "\(field(ctx.codingPath)): expected \(typeName(type)), found null"
        case .dataCorrupted(let ctx):
            return "\(field(ctx.codingPath)): \(ctx.debugDescription)"
        @unknown default:
            return "\(error)"
        }
    }

    private static func typeName(_ type: Any.Type) -> String {
        switch type {
        case is Int.Type, is Int64.Type: "a whole number"
        case is Double.Type: "a number"
        case is Bool.Type: "true or false"
        case is String.Type: "a string"
        default: type is any Collection.Type ? "a list" : "an object"
        }
    }

    private static func jsonReason(_ error: Error) -> String {
        let ns = error as NSError
        if let detail = ns.userInfo[NSDebugDescriptionErrorKey] as? String { return detail }
        return ns.localizedDescription
    }

    static func reason(_ error: Error) -> String {
        let ns = error as NSError
        if let underlying = ns.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain {
            return String(cString: strerror(Int32(underlying.code)))
        }
        return ns.localizedDescription
    }
}
