import Foundation
import XCTest
import TapedeckCore
import TapedeckIO
import TapedeckRemote

/// Nothing a user types can destroy a session (issue 40, item 1): every option that names a
/// path Tapedeck writes, against every file and folder a session owns — named directly, and
/// through a link elsewhere that leads there. Each is refused in one line and leaves the
/// session exactly as it was, byte for byte.
final class WriteGuardTableTests: XCTestCase {
    private struct Fixture {
        var dir: String
        var folder: SessionFolder
        /// Files the session owns (existing ones first), relative to it.
        var files: [String]
        /// Of those, the ones that exist (a link can lead there).
        var existing: [String]
        /// Its folders, relative to it ("" is the session folder itself).
        var folders: [String]
    }

    /// A session with a recording on track 1, a MIDI track playing a MIDI region through a
    /// sampler whose sample was copied into samples/, peaks, its history, a plugin state and
    /// a cached render.
    private func fixture() throws -> Fixture {
        let dir = try Tapedeck.temporaryFolder(self).path
        let folder = try Safety.session(in: dir)
        try Signals.write([Signals.sine(hertz: 110, amplitude: 0.4, frames: 4800)], to: dir + "/drums.wav", encoding: .int16)
        let notes = MIDISequence(events: [MIDISequence.Event(frame: 0, status: 0x90, data1: 60, data2: 100),
                                          MIDISequence.Event(frame: 24000, status: 0x80, data1: 60)], lengthFrames: 48000)
        try StandardMIDIFile.file(of: notes, tempoMap: Session().tempoMap, name: "Keys").write(to: dir + "/keys.mid")
        let imported = try Tapedeck.run(["import", folder.path, dir + "/keys.mid"])
        XCTAssertEqual(imported.status, 0, imported.stderr)
        let chain = try Tapedeck.run(["chain", folder.path, "2", "sampler:file=\(dir)/drums.wav"])
        XCTAssertEqual(chain.status, 0, chain.stderr)
        XCTAssertEqual(try Tapedeck.run(["marker", folder.path, "add", "0:00", "Intro"]).status, 0)
        for (sub, file) in [("plugins", "state/state.ttl"), ("cache", "render.wav")] {
            try FileManager.default.createDirectory(atPath: folder.path + "/" + sub + "/" + ((file as NSString).deletingLastPathComponent),
                                                    withIntermediateDirectories: true)
            FileManager.default.createFile(atPath: folder.path + "/" + sub + "/" + file, contents: Data("kept".utf8))
        }
        let midi = try XCTUnwrap(try FileManager.default.contentsOfDirectory(atPath: folder.path + "/midi").first { $0.hasSuffix(".mid") })
        let existing = ["session.json", "session.json.bak", "session.lock", "history/index.json", "audio/tone.wav", "midi/" + midi,
                        "samples/drums.wav", "peaks/tone.wav.peak", "plugins/state/state.ttl", "cache/render.wav"]
        for file in existing { XCTAssertTrue(FileManager.default.fileExists(atPath: folder.path + "/" + file), file) }
        return Fixture(dir: dir, folder: folder, files: existing + ["audio/new.wav", "history/000999.json", "peaks/new.peak"],
                       existing: existing, folders: ["", "audio", "history", "midi", "samples", "peaks", "plugins", "cache"])
    }

    /// Every file under the session: its inode and bytes (the lock's inode only: each lock
    /// holder writes its pid into it).
    private func state(_ folder: SessionFolder) -> [String: String] {
        var out: [String: String] = [:]
        let root = folder.path
        for case let relative as String in FileManager.default.enumerator(atPath: root) ?? FileManager.DirectoryEnumerator() {
            var st = stat()
            guard lstat(root + "/" + relative, &st) == 0 else { continue }
            let bytes = relative == "session.lock" || st.st_mode & S_IFMT == S_IFDIR ? ""
                : (FileManager.default.contents(atPath: root + "/" + relative)?.base64EncodedString() ?? "?")
            out[relative] = "\(st.st_ino) \(st.st_mode) \(bytes)"
        }
        return out
    }

    /// Runs `args`, asserting a refusal in one line that mentions `mentions`, and nothing
    /// changed in the session.
    private func assertRefused(_ f: Fixture, _ args: [String], environment: [String: String] = [:], status: Int32 = 64,
                               mentions: [String], _ context: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let before = state(f.folder)
        let r = try Tapedeck.run(args, environment: RecordSupport.environment.merging(environment) { $1 }, timeout: 60)
        XCTAssertEqual(r.status, status, "\(context): \(r.stdout)\(r.stderr)", file: file, line: line)
        XCTAssertEqual(r.stderr.split(separator: "\n").count, 1, "\(context): one line: \(r.stderr)", file: file, line: line)
        for m in mentions { XCTAssertTrue(r.stderr.contains(m), "\(context): '\(m)' in \(r.stderr)", file: file, line: line) }
        let after = state(f.folder)
        XCTAssertEqual(after, before, "\(context): the session is as it was (changed: \(Set(after.keys).symmetricDifference(before.keys).sorted() + after.keys.filter { before[$0] != nil && before[$0] != after[$0] }))",
                       file: file, line: line)
    }

    /// Every option naming a file, against every file the session owns (and, through a link
    /// with the option's own extension, every existing one): refused, nothing changed.
    func testEveryOptionNamingAFileIsRefusedEveryFileASessionOwns() throws {
        let f = try fixture()
        let s = f.folder.path
        let options: [(what: String, ext: String, args: (String) -> [String])] = [
            ("export: -o", "wav", { ["export", s, "-o", $0] }),
            ("export: --chapters", "json", { ["export", s, "-o", f.dir + "/mix.wav", "--chapters", $0] }),
            ("export: --chapters", "txt", { ["export", s, "-o", f.dir + "/mix.wav", "--chapters", $0] }),
            ("export: -o", "mid", { ["export", s, "--midi", "-o", $0] }),
            ("automation: --output", "csv", { ["automation", s, "1", "gain", "csv", "--output", $0] }),
            ("record: --out", "wav", { ["record", "--out", $0, "--device", "filetap:IN=/dev/zero,OUT=/dev/null", "--duration", "0.1"] }),
        ]
        try FileManager.default.createDirectory(atPath: f.dir + "/via", withIntermediateDirectories: true)
        var n = 0
        for option in options {
            for target in f.files {
                let command = option.what.split(separator: ":").first.map(String.init)! + ":"
                // Named as it is: refused (by the guard, or first by the option's own extension).
                try assertRefused(f, option.args(s + "/" + target), mentions: [command], "\(option.what) \(target)")
                guard f.existing.contains(target) else { continue }
                // Through a link elsewhere with the option's extension: only the guard sees it.
                n += 1
                let alias = f.dir + "/via/\(n).\(option.ext)"
                symlink(s + "/" + target, alias)
                try assertRefused(f, option.args(alias), mentions: [option.what, "s.tapedeck"], "\(option.what) \(alias) → \(target)")
            }
            // A second name of a played file (a hard link) is the file, for the options that
            // know the session in question.
            if option.what != "record: --out" {
                n += 1
                let hard = f.dir + "/via/\(n).\(option.ext)"
                link(s + "/audio/tone.wav", hard)
                try assertRefused(f, option.args(hard), mentions: [option.what, "audio/tone.wav"], "\(option.what) hard link")
            }
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: f.dir + "/mix.wav"), "a refused export writes nothing")
    }

    /// Every option naming a folder files are written into, against every folder the session
    /// keeps (named directly and through a link): refused, nothing created or changed.
    func testEveryOptionNamingAFolderIsRefusedEveryFolderASessionKeeps() throws {
        let f = try fixture()
        let s = f.folder.path
        // `calibrate` writes XDG_CONFIG_HOME/tapedeck/latency: the config folder is its folder.
        let clicks = f.dir + "/clicks.raw"
        var input = [Int32](repeating: 0, count: 48000 * 3)
        var at = 4800
        for gap in [0.0, 0.21, 0.26, 0.19, 0.31, 0.23, 0.28, 0.2] {
            at += Int((gap * 48000).rounded())
            input[at + 512] = 16384
        }
        RecordSupport.writeRaw(input, bits: 16, to: clicks)
        let calibrate = ["calibrate", "--device", "filetap:IN=\(clicks),OUT=/dev/null", "--period", "256", "--periods", "2", "--device-format", "s16"]
        let options: [(what: String, args: (String) -> [String], env: (String) -> [String: String], status: Int32)] = [
            ("export: --stems", { ["export", s, "-o", f.dir + "/mix.wav", "--stems", $0] }, { _ in [:] }, 64),
            ("record: --mirror", { ["record", s, "--track", "1", "--mirror", $0, "--device", "filetap:IN=/dev/zero,OUT=/dev/null",
                                    "--duration", "0.1"] }, { _ in [:] }, 64),
            ("demo: --synthesize", { ["demo", "--synthesize", $0] }, { _ in [:] }, 64),
            ("bench: --folder", { ["bench", "mixdown", "--runs", "1", "--folder", $0] }, { _ in [:] }, 64),
            ("calibrate", { _ in calibrate }, { ["XDG_CONFIG_HOME": $0] }, 64),
        ]
        try FileManager.default.createDirectory(atPath: f.dir + "/via", withIntermediateDirectories: true)
        var n = 0
        for option in options {
            // A config folder at the session's top is no folder of its own (tapedeck/latency).
            for target in f.folders where !(option.what == "calibrate" && target.isEmpty) {
                let path = target.isEmpty ? s : s + "/" + target
                let shown = target.isEmpty ? "the session folder" : target + "/"
                try assertRefused(f, option.args(path), environment: option.env(path), status: option.status,
                                  mentions: [option.what, "s.tapedeck"], "\(option.what) \(shown)")
                n += 1
                let alias = f.dir + "/via/folder-\(n)"
                symlink(path, alias)
                try assertRefused(f, option.args(alias), environment: option.env(alias), status: option.status,
                                  mentions: [option.what, "s.tapedeck"], "\(option.what) \(alias) → \(shown)")
            }
        }
    }

    /// The files of a session open in another Tapedeck are refused wherever they lie (here its
    /// audio/ is a link to another disk, which no session folder holds), and a write handed to
    /// the screen itself goes through the same guard.
    func testASessionOpenInTheScreenIsProtectedWhereverItsFilesLieAndInsideTheScreen() throws {
        let dir = try Tapedeck.temporaryFolder(self).path
        let run = dir + "/run"
        try FileManager.default.createDirectory(atPath: run, withIntermediateDirectories: true)
        let env = ["XDG_RUNTIME_DIR": run]
        let other = try Safety.session(in: dir)
        let open = SessionFolder(path: dir + "/t.tapedeck")
        XCTAssertEqual(try Tapedeck.run(["new", open.path]).status, 0)
        let disk = dir + "/disk2/t-audio"
        try FileManager.default.createDirectory(atPath: disk, withIntermediateDirectories: true)
        try FileManager.default.removeItem(atPath: open.audioFolder)
        symlink(disk, open.audioFolder)
        XCTAssertEqual(try Tapedeck.run(["import", open.path, dir + "/tone.wav"]).status, 0)
        XCTAssertTrue(FileManager.default.fileExists(atPath: disk + "/tone.wav"))
        // Not open anywhere: the other disk's folder is nobody's.
        let before = try Tapedeck.run(["export", other.path, "-o", disk + "/free.wav"], environment: env)
        XCTAssertEqual(before.status, 0, before.stderr)
        unlink(disk + "/free.wav")

        let screen = try ScreenTmux(self, folder: dir, args: [open.path, "--device", "offline"], environment: env, width: 120)
        screen.waitFor("tone")
        let recording = try Data(contentsOf: URL(fileURLWithPath: disk + "/tone.wav"))
        for (args, what) in [(["export", other.path, "-o", disk + "/free.wav"], "export: -o"),
                             (["export", other.path, "-o", disk + "/tone.wav"], "export: -o"),
                             (["automation", other.path, "1", "gain", "csv", "--output", disk + "/x.csv"], "automation: --output")] {
            let r = try Tapedeck.run(args, environment: env)
            Safety.assertRefused(r, status: 64, mentions: [what, "t.tapedeck"])
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: disk).sorted(), ["tone.wav"])
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: disk + "/tone.wav")), recording)

        // Handed to the screen (its own run of the command line), the same guard answers.
        let socket = try XCTUnwrap(try FileManager.default.contentsOfDirectory(atPath: run + "/tapedeck").first { $0.hasSuffix(".sock") })
        let json = Safety.sessionBytes(open)
        // The typed `automation S 1 gain csv --output S/session.json` (its Codable value).
        let value = try JSONSerialization.data(withJSONObject: ["folder": open.path, "track": "1", "parameter": "gain",
                                                                "action": ["csv": ["_0": open.sessionFile]]] as [String: Any])
        let line = RemoteCommand.typed(TypedCommand(name: "automation", value: String(decoding: value, as: UTF8.self), workingFolder: dir,
                                                    label: "automation 1 gain csv --output \(open.sessionFile)")).line
        let reply = try XCTUnwrap(ControlProbe.ask(run + "/tapedeck/" + socket, line, timeout: 10), "the screen answered")
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(reply.utf8)) as? [String: Any], reply)
        XCTAssertEqual(object["status"] as? Int, 64, reply)
        XCTAssertTrue((object["err"] as? String ?? "").contains("automation: --output '\(open.sessionFile)' is session.json of the session t.tapedeck"), reply)
        XCTAssertEqual(Safety.sessionBytes(open), json, "the open session's file is as it was")
    }
}
