import Foundation
import TapedeckCore
import TapedeckIO

/// Output paths (issue 40): whatever path an option that writes is given (`-o`, `--output`,
/// `--chapters`, …), a write the one write guard lets through never changes a session. Each
/// case is a real write (``WriteGuard/write(_:to:as:sessions:)``) of a mutated path, relative
/// to a folder holding a session and links and hard links into it; the session's every file
/// (name, inode, size, time, bytes) is compared before and after, and a refusal must be one
/// clear line naming the path.
struct PathsTarget: FuzzTarget {
    static let name = "paths"
    let root: String
    let folder: SessionFolder
    let protected: ProtectedSession
    /// What the session folder holds before any case: the oracle.
    let fingerprint: [String: String]
    /// The names the fixture keeps at the top of `root` (anything else a case made goes).
    let kept: Set<String>
    let seeds = ["s.tapedeck/session.json", "s.tapedeck/session.json.bak", "s.tapedeck/session.lock", "s.tapedeck/history/index.json",
                 "s.tapedeck/audio/a.wav", "s.tapedeck/audio/new.wav", "s.tapedeck/peaks/a.wav.peak", "s.tapedeck/exports/mix.csv",
                 "s.tapedeck/mix.csv", "s.tapedeck/../out.csv", "alias/session.json", "alias/audio/../session.json",
                 "audio-link/a.wav", "hard.wav", "json-link", "out.csv", "new/dir/out.csv", "s.tapedeck", "s.tapedeck/",
                 "./s.tapedeck/./session.json", "s.tapedeck//audio//a.wav", "s.tapedeck/history", "alias"]
    let mutator = Mutator(tokens: ["/", "..", ".", "s.tapedeck", "session.json", ".bak", ".tmp", "audio", "history", "peaks",
                                   "alias", "audio-link", "json-link", "hard.wav", "//", "index.json", "a.wav", "~", "-", " "]
                                  .map { Array($0.utf8) })

    init() throws {
        // On a tmpfs when there is one: each case's write is fsynced, which a disk makes slow.
        let base = access("/dev/shm", W_OK | X_OK) == 0 ? "/dev/shm/" : NSTemporaryDirectory()
        // Workers of earlier runs (or killed ones) left their fixtures: gone once they are.
        Leftovers.removeDead(in: String(base.dropLast()), prefix: "tapedeck-fuzz-paths-")
        root = base + "tapedeck-fuzz-paths-\(getpid())"
        try? FileManager.default.removeItem(atPath: root)
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        folder = SessionFolder(path: root + "/s.tapedeck")
        var session = Session()
        session.tracks = [Track(name: "A", regions: [Region(file: "audio/a.wav", timelineStartFrame: 0, lengthFrames: 4800)])]
        do {
            try folder.create(session)
            try FuzzAudio.writeSeedFiles(into: folder.audioFolder, frames: 4800)
            session.markers = [Marker(name: "Intro", frame: 0)]
            try folder.save(session)
        } catch { throw FuzzUsage("paths: cannot make the session: \(error)") }
        protected = ProtectedSession(folder: folder, session: session)
        symlink(folder.path, root + "/alias")
        symlink(folder.audioFolder, root + "/audio-link")
        symlink(folder.sessionFile, root + "/json-link")
        link(folder.audioFolder + "/a.wav", root + "/hard.wav")
        fingerprint = PathsTarget.fingerprint(folder.path)
        kept = ["s.tapedeck", "alias", "audio-link", "json-link", "hard.wav"]
    }

    func input(seed: UInt64, index: Int) -> [UInt8] {
        mutator.mutate(oneOf: seeds, stream: Self.name, seed: seed, index: index).filter { $0 != 0 }
    }

    func check(_ input: [UInt8], index: Int) -> String? {
        let text = Oracle.text(input)
        // Relative to the fixture, as a user in that folder types it (an absolute path too).
        let path = root + "/" + text
        defer { tidy() }
        do {
            try WriteGuard.write(Array("fuzz\n".utf8), to: path, as: "paths", sessions: [protected])
        } catch let refusal as WriteRefusal {
            if let problem = Oracle.unclear(refusal.description, naming: ["'\(path.terminalSafe)'"]) { return problem }
        } catch {
            // Not a refusal: the write itself failed (no such folder, a folder in the way).
            if let problem = Oracle.unclear("\(error)") { return problem }
        }
        // Every entry the session had is as it was; a new one only where a user's file may
        // go (beside session.json under a name that is not the session's, or in exports/).
        let now = PathsTarget.fingerprint(folder.path)
        var wrong = fingerprint.keys.filter { now[$0] != fingerprint[$0] }
        wrong += now.keys.filter { name in
            guard fingerprint[name] == nil else { return false }
            let first = name.split(separator: "/").first.map(String.init) ?? name
            return first.hasPrefix("session.json") || first == "session.lock" || !(name == first || first == "exports")
        }
        if !wrong.isEmpty {
            return "writing '\(text.terminalSafe)' changed the session: \(wrong.sorted().prefix(4).joined(separator: ", ").terminalSafe)"
        }
        return nil
    }

    /// Removes what a case wrote beside the fixture (it was allowed: it lies outside the session).
    private func tidy() {
        for name in (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? [] where !kept.contains(name) {
            try? FileManager.default.removeItem(atPath: root + "/" + name)
        }
        for sub in ["", "/exports"] {
            let dir = folder.path + sub
            for name in (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? [] where fingerprint[String((sub + "/" + name).dropFirst())] == nil {
                try? FileManager.default.removeItem(atPath: dir + "/" + name)
            }
        }
    }

    /// Every entry under `dir`: inode and mode, and for a file (or link) its size and
    /// modification time — a replaced file has another inode, one written in place another
    /// time. (A folder's own time changes with what is made and removed in it: its entries
    /// say that.)
    static func fingerprint(_ dir: String) -> [String: String] {
        var out: [String: String] = [:]
        for case let relative as String in FileManager.default.enumerator(atPath: dir) ?? FileManager.DirectoryEnumerator() {
            var st = stat()
            guard lstat(dir + "/" + relative, &st) == 0 else { continue }
            out[relative] = st.st_mode & S_IFMT == S_IFDIR ? "\(st.st_ino) \(st.st_mode)"
                : "\(st.st_ino) \(st.st_mode) \(st.st_size) \(st.st_mtim.tv_sec).\(st.st_mtim.tv_nsec)"
        }
        return out
    }
}
