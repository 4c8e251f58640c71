import Foundation
import Synchronization
import TapedeckCore

/// Why a session could not be created, opened or saved. The description is one line for the
/// user: the file, and the exact field or reason.
public struct SessionError: Error, CustomStringConvertible, Equatable, Sendable {
    /// The file or folder concerned.
    public var path: String
    /// What is wrong; for a bad field it starts with the field's path, e.g. `tracks[1].pan`.
    public var reason: String

    /// When the session is held open by a running Tapedeck that takes edits (the screen),
    /// that process: the command line hands the edit to it (see ``SessionOwner``).
    public var ownerPid: Int32?

    /// With ``ownerPid``: the command only reads the session, so the owner is asked to answer
    /// it from the session as it stands; when it cannot, the command reads the file itself.
    public var ownerAnswersRead: Bool

    /// With ``ownerAnswersRead``: whether the owner serves a control socket this process can
    /// reach. False for a holder that cannot be asked (a plain command such as a long import,
    /// or a screen whose socket is in another user's runtime folder): the command then reads
    /// the file and says first that it is the saved one.
    public var ownerListens: Bool

    /// Creates an error for `path`.
    public init(path: String, reason: String, ownerPid: Int32? = nil, ownerAnswersRead: Bool = false, ownerListens: Bool = true) {
        self.path = path
        self.reason = reason
        self.ownerPid = ownerPid
        self.ownerAnswersRead = ownerAnswersRead
        self.ownerListens = ownerListens
    }

    /// `PATH: REASON`, the path with control characters escaped.
    public var description: String { "\(path.terminalSafe): \(reason)" }
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

    /// Whether `path` is named as a session folder is (`NAME.tapedeck`, with or without a
    /// trailing slash), whether or not it exists yet.
    public static func isNamed(_ path: String) -> Bool {
        path.hasSuffix(".tapedeck") || path.hasSuffix(".tapedeck/")
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

    /// The lock file every writer holds (``SessionLock``).
    public var lockFile: String { path + "/session.lock" }

    /// Whether a session, or what is left of one, is here: `session.json`, its backup, or an
    /// `audio/` folder. A folder with any of them is never treated as a new, empty session,
    /// so nothing can replace a session that could not be read with an empty one.
    public var exists: Bool {
        FileSystem.exists(sessionFile) || FileSystem.exists(backupFile) || FileSystem.isFolder(audioFolder)
    }

    /// Creates the folder and its sub-folders and saves `session`. Refuses to overwrite an
    /// existing session, or to create one in a folder that already holds files. Returns the
    /// session lock it took, so a caller that goes on owning the new session (the screen)
    /// keeps holding it with no moment in which another writer could take it.
    @discardableResult
    public func create(_ session: Session) throws(SessionError) -> SessionLock {
        if exists { throw SessionError(path: path, reason: existingReason) }
        try makeFolder(path)
        // Two `new` at once: the lock decides which one creates the session.
        let lock = try SessionLock.acquire(self)
        if exists { throw SessionError(path: path, reason: existingReason) }
        let strangers = ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).filter { $0 != "session.lock" }
        if !strangers.isEmpty {
            throw SessionError(path: path, reason: "the folder is not empty (it holds \(strangers.sorted().prefix(3).map(\.terminalSafe).joined(separator: ", "))); choose a new folder for a new session")
        }
        for dir in [audioFolder, peaksFolder, exportsFolder] { try makeFolder(dir) }
        try save(session)
        return lock
    }

    private var existingReason: String {
        FileSystem.exists(sessionFile) || FileSystem.exists(backupFile) ? "a session already exists here"
            : "what is left of a session is here (audio/ without session.json); a new session is never created over it"
    }

    private func makeFolder(_ dir: String) throws(SessionError) {
        if FileSystem.isFolder(dir) { return }
        do {
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        } catch {
            // Foundation's wording loses the reason; mkdir(2)'s errno says it in words a
            // user can act on ("Permission denied", "Read-only file system", …).
            let why = mkdir(dir, 0o755) != 0 ? String(cString: strerror(errno)) : SessionFolder.reason(error)
            throw SessionError(path: dir, reason: "cannot create folder: \(why)")
        }
    }

    /// Saves atomically, so that at every instant a complete `session.json` exists: writes
    /// `session.json.tmp` (created exclusively, never through a link) and fsyncs it, makes the
    /// current `session.json` the backup `session.json.bak` (a second name for the same file,
    /// so the backup costs no space and works on a full disk), renames the new file over
    /// `session.json` and fsyncs the folder. A session that breaks ``SessionLimits`` or any
    /// other rule of ``SessionValidator`` is refused, never written. Takes the session lock
    /// for the save (see ``SessionLock``).
    /// The replaced `session.json` becomes an undo step of ``SessionHistory`` named `label`
    /// (nil: this process's command line), unless `keepingHistory` is false: an undo or redo
    /// moves its steps itself.
    public func save(_ session: Session, label: String? = nil, keepingHistory: Bool = true) throws(SessionError) {
        // Every region on disk has its id (the command line names regions by it).
        var session = session
        session.identifyRegions()
        if let problem = SessionValidator.problem(in: session) {
            throw SessionError(path: sessionFile, reason: "not saved: \(problem)")
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let data: Data
        do { data = try encoder.encode(session) } catch {
            throw SessionError(path: sessionFile, reason: "cannot encode: \(error)")
        }
        let lock = try SessionLock.acquire(self)
        defer { withExtendedLifetime(lock) {} }
        let tmp = sessionFile + ".tmp"
        do { try DurableFile.writeNew([UInt8](data), to: tmp) } catch {
            throw SessionError(path: sessionFile, reason: "not saved (\(error.reason)); the session on disk is unchanged")
        }
        keepBackup()
        if keepingHistory && changes(data) { SessionHistory.keep(self, name: label ?? SessionHistory.commandLineLabel(self)) }
        TestHooks.killIfAsked(at: "save-rename")
        if rename(tmp, sessionFile) != 0 {
            let why = FileSystem.errnoText()
            unlink(tmp)
            throw SessionError(path: sessionFile, reason: "cannot replace: \(why); the session on disk is unchanged")
        }
        TestHooks.killIfAsked(at: "save-renamed")
        DurableFile.syncFolder(path)
    }

    /// Whether `data` differs from the `session.json` on disk (a save of the same session is
    /// no step to undo).
    private func changes(_ data: Data) -> Bool {
        var st = stat()
        guard stat(sessionFile, &st) == 0, Int(st.st_size) == data.count else { return true }
        guard let bytes = try? FileSystem.readAll(path: sessionFile, limitBytes: Int64(data.count) + 1) else { return true }
        return bytes.count != data.count || !bytes.elementsEqual(data)
    }

    /// Reverts the last saved change (or, `redo`, brings back the last one reverted), from
    /// the history kept in the folder (``SessionHistory``), whichever process made it.
    /// Returns the step's name, nil when there is nothing to undo (or redo).
    public func undoLastSave(redo: Bool = false) throws(SessionError) -> String? {
        let lock = try SessionLock.acquire(self)
        defer { withExtendedLifetime(lock) {} }
        try SessionHistory.check(self)
        guard let (session, name) = try SessionHistory.peek(self, undo: !redo) else { return nil }
        let replaced = SessionHistory.preserveCurrent(self)
        try save(session, keepingHistory: false)
        SessionHistory.moved(self, undo: !redo, replacedFile: replaced)
        return name
    }

    /// Makes the current `session.json` the backup, when it is a readable session (a damaged
    /// one must not push out a good backup). Never fails the save: an old backup is still one.
    private func keepBackup() {
        guard (try? readSession(sessionFile)) != nil else { return }
        let tmp = backupFile + ".tmp"
        unlink(tmp)
        if link(sessionFile, tmp) != 0 {
            // No hard links here (FAT, some network shares): copy it instead.
            guard let bytes = try? FileSystem.readAll(path: sessionFile, limitBytes: Int64(SessionLimits.maximumSessionFileBytes)),
                  (try? DurableFile.writeNew(bytes, to: tmp)) != nil else { unlink(tmp); return }
        }
        // When the backup already is this file (a save killed after this step), rename does
        // nothing and leaves the temporary name behind: drop it either way.
        _ = rename(tmp, backupFile)
        unlink(tmp)
    }

    /// Loads and validates `session.json`. Every problem names the exact field. When
    /// `session.json` is missing or cannot be read as JSON at all (a crash of an older
    /// Tapedeck, a damaged disk), the backup `session.json.bak` is loaded instead and
    /// a notice says so (see ``collectNotices()``); a session whose JSON reads but breaks a rule is reported,
    /// not replaced by its backup.
    public func load() throws(SessionError) -> Session {
        guard FileSystem.isFolder(path) else {
            throw SessionError(path: path, reason: FileSystem.exists(path) ? "is not a session folder" : "no such session folder")
        }
        // A read with the session open on the screen is answered by the screen (SessionOwner).
        try SessionOwner.handReadToOwner(self)
        let session: Session
        do {
            session = try readSession(sessionFile)
        } catch let failure {
            guard failure.isUnreadable else { throw failure.error }
            guard let backup = try? readSession(backupFile) else {
                throw SessionError(path: sessionFile, reason: failure.error.reason + ", and there is no readable backup (session.json.bak)")
            }
            SessionFolder.notice("\(sessionFile.terminalSafe): \(failure.error.reason); opened the backup session.json.bak (the save before the last); the next save writes session.json again")
            session = backup
        }
        try checkLinks(session)
        try SessionHistory.check(self)
        // A session from before region ids (or edited by hand) gets them as it is read.
        var identified = session
        identified.identifyRegions()
        return identified
    }

    /// Why reading a session file failed, and whether the file was unreadable as a whole.
    private struct ReadFailure: Error {
        var error: SessionError
        var isUnreadable: Bool
    }

    private func readSession(_ file: String) throws(ReadFailure) -> Session {
        let bytes: [UInt8]
        do { bytes = try FileSystem.readAll(path: file, limitBytes: Int64(SessionLimits.maximumSessionFileBytes)) } catch {
            let reason = FileSystem.exists(file) ? error.reason : "missing"
            throw ReadFailure(error: SessionError(path: file, reason: reason), isUnreadable: true)
        }
        if bytes.isEmpty { throw ReadFailure(error: SessionError(path: file, reason: "empty"), isUnreadable: true) }
        do { return try SessionFolder.decode(Data(bytes), path: file) } catch {
            throw ReadFailure(error: error, isUnreadable: error.reason.hasPrefix("not valid JSON"))
        }
    }

    /// Refuses region files that are links leading out of the session folder: a session must
    /// never make Tapedeck read (or a recovery write) a file elsewhere. An `audio/` folder
    /// that is itself a link (audio kept on another disk) is the user's choice and allowed.
    private func checkLinks(_ session: Session) throws(SessionError) {
        guard let root = SessionFolder.resolved(path) else { return }
        let audioRoot = SessionFolder.resolved(audioFolder)
        var checked: [String: Bool] = [:]
        for (t, track) in session.tracks.enumerated() {
            for (r, region) in track.regions.enumerated() {
                if let ok = checked[region.file] {
                    if ok { continue }
                } else {
                    // A missing file is reported when it is played; only links are judged here.
                    guard let target = SessionFolder.resolved(absolutePath(of: region.file)) else { checked[region.file] = true; continue }
                    let inside = SessionFolder.isInside(target, root) || audioRoot.map { SessionFolder.isInside(target, $0) } == true
                    checked[region.file] = inside
                    if inside { continue }
                }
                let target = SessionFolder.resolved(absolutePath(of: region.file)) ?? "?"
                throw SessionError(path: sessionFile, reason: "tracks[\(t)].regions[\(r)].file: '\(region.file.terminalSafe)' is a link to \(target.terminalSafe), outside the session folder; region files must lie inside it")
            }
        }
    }

    static func resolved(_ path: String) -> String? {
        guard let p = realpath(path, nil) else { return nil }
        defer { free(p) }
        return String(cString: p)
    }

    static func isInside(_ path: String, _ folder: String) -> Bool {
        path == folder || path.hasPrefix(folder.hasSuffix("/") ? folder : folder + "/")
    }

    /// Notices about loads (the backup was opened) go to stderr as one line each, unless
    /// ``collectNotices()`` was called: then they wait for ``takeNotices()``.
    private static let notices = Mutex<(collecting: Bool, lines: [String])>((false, []))

    /// From now on keep load notices for ``takeNotices()`` instead of printing them (the
    /// screen shows them on its message line, where stderr would be overdrawn).
    public static func collectNotices() { notices.withLock { $0.collecting = true } }

    /// The notices kept since the last call.
    public static func takeNotices() -> [String] {
        notices.withLock { state in
            defer { state.lines = [] }
            return state.lines
        }
    }

    static func notice(_ text: String) {
        let printed = notices.withLock { state -> Bool in
            if state.collecting { state.lines.append(text) }
            return !state.collecting
        }
        guard printed else { return }
        let line = Array("tapedeck: \(text)\n".utf8)
        _ = line.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
    }

    /// Decodes and validates session JSON; errors name `path` and the field.
    public static func decode(_ data: Data, path: String) throws(SessionError) -> Session {
        // A valid file — nearly every open — is parsed once, by the typed decoder. The checks
        // below parse it a second time into Foundation objects (about 300 MB and two thirds
        // of the time for a session at the region limit) only to name what is wrong; they
        // run when anything is, so every refusal still gets exactly their message. Nothing
        // they refuse gets through here: a fraction or a string in a whole-number field fails
        // the typed decoding, a count or size past a limit fails the validator, and the
        // version is checked on the decoded value.
        if let session = try? JSONDecoder().decode(Session.self, from: data),
           (1...Session.currentSchemaVersion).contains(session.schemaVersion),
           SessionValidator.problem(in: session) == nil {
            return session
        }
        return try describedDecode(data, path: path)
    }

    /// The careful decoding: each check in the order that gives the clearest message.
    private static func describedDecode(_ data: Data, path: String) throws(SessionError) -> Session {
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
        if let problem = countProblem(in: object) ?? wholeNumberProblem(in: object, at: "") {
            throw SessionError(path: path, reason: problem)
        }
        let session: Session
        do { session = try JSONDecoder().decode(Session.self, from: data) } catch let error as DecodingError {
            throw SessionError(path: path, reason: describe(error, in: top))
        } catch {
            throw SessionError(path: path, reason: "\(error)".terminalSafe)
        }
        if let problem = SessionValidator.problem(in: session) {
            throw SessionError(path: path, reason: problem)
        }
        return session
    }

    /// Too many tracks, regions or markers, found before the slow typed decoding (a file with
    /// 10^5 tracks would otherwise take its time to be refused).
    private static func countProblem(in object: [String: Any]) -> String? {
        let tracks = object["tracks"] as? [Any] ?? []
        if tracks.count > SessionLimits.maximumTracks { return "tracks: \(tracks.count) tracks, at most \(SessionLimits.maximumTracks)" }
        let regions = tracks.reduce(0) { $0 + ((($1 as? [String: Any])?["regions"] as? [Any])?.count ?? 0) }
        if regions > SessionLimits.maximumRegions { return "tracks: \(regions) regions in all, at most \(SessionLimits.maximumRegions)" }
        let markers = (object["markers"] as? [Any])?.count ?? 0
        if markers > SessionLimits.maximumMarkers { return "markers: \(markers) markers, at most \(SessionLimits.maximumMarkers)" }
        let changes = ((object["tempoChanges"] as? [Any])?.count ?? 0) + ((object["meterChanges"] as? [Any])?.count ?? 0)
        if changes > SessionLimits.maximumMarkers {
            return "tempoChanges: \(changes) tempo and meter changes, at most \(SessionLimits.maximumMarkers)"
        }
        return nil
    }

    /// Fields that hold whole numbers (frames, counts, indices).
    private static let wholeNumberKeys: Set<String> = [
        "sampleRate", "beatsPerBar", "beatUnit", "frame", "startFrame", "endFrame", "timelineStartFrame", "sourceOffsetFrame",
        "lengthFrames", "fadeInFrames", "fadeOutFrames", "takeGroup", "takeNumber", "group", "take", "inputChannels", "bar",
        "timeOfDayOrigin",
    ]

    /// The first whole-number field holding a fraction or a number too large for any frame
    /// count, named by its path. Foundation's decoder reports these without a path, as "not
    /// valid JSON", so they are found here first.
    private static func wholeNumberProblem(in node: Any, at path: String, key: String? = nil) -> String? {
        if let object = node as? [String: Any] {
            for k in object.keys.sorted() {
                if let p = wholeNumberProblem(in: object[k]!, at: path.isEmpty ? k : path + "." + k, key: k) { return p }
            }
        } else if let list = node as? [Any] {
            for (i, element) in list.enumerated() {
                if let p = wholeNumberProblem(in: element, at: "\(path)[\(i)]", key: key) { return p }
            }
        } else if let key, wholeNumberKeys.contains(key), let number = node as? NSNumber, !(node is Bool) {
            let value = number.doubleValue
            if value != value.rounded() { return "\(path.terminalSafe): \(number.stringValue) is not a whole number" }
            if abs(value) > 9.0e15 { return "\(path.terminalSafe): \(number.stringValue) is far too large" }
        }
        return nil
    }

    private static func describe(_ error: DecodingError, in top: Any) -> String {
        func field(_ path: [CodingKey]) -> String {
            var text = ""
            for key in path {
                if let i = key.intValue { text += "[\(i)]" } else { text += (text.isEmpty ? "" : ".") + key.stringValue }
            }
            return text.isEmpty ? "(top level)" : text.terminalSafe
        }
        /// The JSON value at `path` in the parsed document, shown short, for the message.
        func found(_ path: [CodingKey]) -> String? {
            var node: Any? = top
            for key in path {
                if let i = key.intValue { node = (node as? [Any]).flatMap { i < $0.count ? $0[i] : nil } }
                else { node = (node as? [String: Any])?[key.stringValue] }
            }
            guard let node else { return nil }
            if let n = node as? NSNumber { return n.stringValue }
            if let text = node as? String { return "'\(String(text.prefix(40)).terminalSafe)'" }
            if node is [Any] { return "a list" }
            if node is [String: Any] { return "an object" }
            if node is NSNull { return "null" }
            return nil
        }
        switch error {
        case .keyNotFound(let key, let ctx):
            let parent = field(ctx.codingPath)
            return "\(parent == "(top level)" ? "" : parent + ".")\(key.stringValue.terminalSafe): missing"
        case .typeMismatch(let type, let ctx):
            return "\(field(ctx.codingPath)): expected \(typeName(type))" + (found(ctx.codingPath).map { ", found \($0)" } ?? "")
        case .valueNotFound(let type, let ctx):
            return "\(field(ctx.codingPath)): expected \(typeName(type)), found null"
        case .dataCorrupted(let ctx):
            // A number that does not fit its field (10.5 frames, 1e30 frames) comes out of
            // Foundation as "not valid JSON"; say what is really wrong with it.
            if let value = found(ctx.codingPath), let number = Double(value) {
                return "\(field(ctx.codingPath)): \(value) is not a whole number" + (number.rounded() == number ? " in range" : "")
            }
            return "\(field(ctx.codingPath)): \(ctx.debugDescription.terminalSafe)"
        @unknown default:
            return "\(error)".terminalSafe
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
