import Foundation
import XCTest
import TapedeckCore
import TapedeckIO

/// The same edit made with the screen open and without it gives the same session (issue 42):
/// a property test over the command table. Every command `tapedeck help` lists is either an
/// edit of a session (handed to the screen when it holds the session open) or named here as
/// something else, so a command added to the table is tried the day it is added. Each edit's
/// own examples (`tapedeck help COMMAND`, the lines the man page and docs show) run in turn on
/// two copies of one session, one with the screen open on it: after each, both give the same
/// status and the same `session.json`.
final class EditParityTests: XCTestCase {
    /// The commands that edit a session in place.
    static let edits = ["import", "chain", "learn", "track", "bus", "send", "automation", "region", "marker", "session",
                        "tempo", "meter", "loop", "punch", "takes", "undo", "redo"]
    /// Everything else in the table: no session edit to compare (it opens, creates, reads,
    /// renders elsewhere, records, or does not touch a session).
    static let others = ["open", "new", "export", "info", "nodes", "demo", "record", "calibrate", "play", "ctl", "devices",
                         "recover", "bench", "completions", "man", "docs"]

    func testEveryEditInTheCommandTableGivesTheSameSessionWithTheScreenOpenAndWithout() throws {
        let table = try commandTable()
        XCTAssertEqual(Set(table), Set(Self.edits + Self.others),
                       "every command in the table is an edit compared here or named as something else")
        let dir = try Tapedeck.temporaryFolder(self)
        let run = dir.path + "/run"
        try FileManager.default.createDirectory(atPath: run, withIntermediateDirectories: true)
        let env = ["XDG_RUNTIME_DIR": run]
        let alone = dir.path + "/alone", open = dir.path + "/open"
        for folder in [alone, open] { try makeFixture(in: folder) }

        let screen = try ScreenTmux(self, folder: dir.path, args: [open + "/song.tapedeck", "--device", "offline"], environment: env,
                                    width: 120)
        screen.waitFor("vocal")
        var tried = 0
        var differences: [String] = []
        examples: for command in Self.edits {
            for example in try examples(of: command) {
                let words = example.map { $0 == "song.tapedeck" || $0 == "field.tapedeck" ? "song.tapedeck" : $0 }
                let a = try Tapedeck.run(words, environment: env, currentDirectory: alone, timeout: 300)
                let b = try Tapedeck.run(words, environment: env, currentDirectory: open, timeout: 300)
                tried += 1
                let line = words.joined(separator: " ")
                if a.status != b.status {
                    differences.append("\(line): status \(a.status) alone, \(b.status) with the screen open (\(b.stderr.trimmingCharacters(in: .whitespacesAndNewlines)))")
                }
                let left = try canonical(alone), right = try canonical(open)
                if left != right {
                    differences.append("\(line): session.json differs with the screen open:\n\(firstDifference(left, right))")
                    // What follows would start from two different sessions.
                    break examples
                }
            }
        }
        XCTAssertGreaterThanOrEqual(tried, 40, "the examples of every edit ran")
        XCTAssertEqual(differences, [], "\(differences.count) of \(tried) edits differ:\n" + differences.joined(separator: "\n"))
    }

    // MARK: - The table and its examples

    /// The command names `tapedeck help` lists.
    private func commandTable() throws -> [String] {
        let help = try Tapedeck.run(["help"])
        XCTAssertEqual(help.status, 0, help.stderr)
        let body = help.stdout.components(separatedBy: "commands:\n").last ?? ""
        return body.split(separator: "\n").prefix { $0.hasPrefix("  ") }.compactMap { $0.split(separator: " ").first.map(String.init) }
    }

    /// The `example:` lines of `tapedeck help COMMAND`, as words after `tapedeck` (shell quotes
    /// taken off); lines that redirect or pipe are left out.
    private func examples(of command: String) throws -> [[String]] {
        let help = try Tapedeck.run(["help", command])
        XCTAssertEqual(help.status, 0, help.stderr)
        return help.stdout.split(separator: "\n").compactMap { raw -> [String]? in
            let line = raw.trimmingCharacters(in: .whitespaces)
            guard line.hasPrefix("example: tapedeck "), !line.contains(">"), !line.contains("|") else { return nil }
            // Split as the screen's dialogs split a typed line (shell quotes taken off).
            let words = CommandWords.split(String(line.dropFirst("example: tapedeck ".count)))
            XCTAssertNotNil(words, "\(line): a quote left open")
            return words
        }
    }

    // MARK: - The session both sides start from

    /// `song.tapedeck` with what the examples name: tracks vocal, drums, piano (MIDI), keys
    /// (MIDI) and two more, buses Reverb and Group, two vocal regions and a drum region, a
    /// marker "chorus"; and in the folder the files the examples import.
    private func makeFixture(in folder: String) throws {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let tone = Signals.sine(hertz: 220, amplitude: 0.4, frames: 48000)
        for name in ["drums.wav", "vocal.wav", "recorder-a.wav", "recorder-b.wav", "kick.wav"] {
            try Signals.write([tone], to: folder + "/" + name)
        }
        try Signals.write([tone], to: folder + "/bass.flac", container: .flac, encoding: .int16)
        let csv = folder + "/tune.csv"
        try """
        0, 0, Header, 0, 1, 480
        1, 0, Start_track
        1, 0, Note_on_c, 0, 60, 100
        1, 480, Note_off_c, 0, 60, 0
        1, 480, End_track
        0, 0, End_of_file

        """.write(toFile: csv, atomically: true, encoding: .utf8)
        let midi = try Tapedeck.run([folder + "/tune.csv", folder + "/tune.mid"], executable: "/usr/bin/csvmidi")
        XCTAssertEqual(midi.status, 0, midi.stderr)
        let steps: [[String]] = [
            ["new", "song.tapedeck"],
            ["track", "song.tapedeck", "add", "vocal"], ["track", "song.tapedeck", "add", "drums"],
            ["track", "song.tapedeck", "add", "piano", "--midi"], ["track", "song.tapedeck", "add", "keys", "--midi"],
            ["bus", "song.tapedeck", "add", "Reverb"], ["bus", "song.tapedeck", "add", "Group"],
            ["import", "song.tapedeck", "vocal.wav", "--track", "vocal"],
            ["import", "song.tapedeck", "vocal.wav", "--track", "vocal", "--at", "0:02"],
            ["import", "song.tapedeck", "drums.wav", "--track", "drums"],
            ["marker", "song.tapedeck", "add", "0:30", "chorus"],
        ]
        for step in steps {
            let r = try Tapedeck.run(step, currentDirectory: folder, timeout: 120)
            XCTAssertEqual(r.status, 0, "\(step.joined(separator: " ")): \(r.stderr)")
        }
    }

    /// The session file as a canonical JSON text (keys sorted), for comparing two copies.
    private func canonical(_ folder: String) throws -> String {
        let data = try Data(contentsOf: URL(fileURLWithPath: folder + "/song.tapedeck/session.json"))
        let object = try JSONSerialization.jsonObject(with: data)
        let text = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .prettyPrinted])
        return String(decoding: text, as: UTF8.self)
    }

    /// The first line where two texts differ, with its neighbours.
    private func firstDifference(_ a: String, _ b: String) -> String {
        let x = a.split(separator: "\n", omittingEmptySubsequences: false), y = b.split(separator: "\n", omittingEmptySubsequences: false)
        let i = (0..<min(x.count, y.count)).first { x[$0] != y[$0] } ?? min(x.count, y.count)
        let from = max(0, i - 3)
        return "alone:\n" + x[from..<min(x.count, i + 3)].joined(separator: "\n")
            + "\nwith the screen open:\n" + y[from..<min(y.count, i + 3)].joined(separator: "\n")
    }
}
