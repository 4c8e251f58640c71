import Foundation
import XCTest
import TapedeckCore
import TapedeckIO
import TapedeckRemote
@testable import TapedeckCommands

/// A command handed to the session's owner travels typed (``HandedCommand``): every command
/// the owner takes is in the one command table and `Codable`, and each `example:` line of
/// each, parsed as the asker parses it, comes through the socket's line and the owner's
/// decoding as the same value.
final class HandedCommandTests: XCTestCase {
    /// Every name the owner takes, with its type from ``CommandList``.
    private var handed: [(name: String, type: any HandedCommand.Type)] {
        OwnerForwarding.commandNames.union(OwnerForwarding.readNames).sorted().compactMap { name in
            (CommandList.all.first { $0.name == name } as? any HandedCommand.Type).map { (name, $0) }
        }
    }

    func testEveryCommandTheOwnerTakesIsTypedInTheCommandTable() {
        let names = OwnerForwarding.commandNames.union(OwnerForwarding.readNames)
        XCTAssertEqual(Set(handed.map(\.name)), names, "each is in CommandList and Codable")
    }

    func testEveryExampleRoundTripsThroughTheWire() throws {
        let cwd = FileManager.default.currentDirectoryPath
        var tried = 0
        for (name, kind) in handed {
            let examples = kind.spec.examples.filter { !$0.contains(">") && !$0.contains("|") }
            XCTAssertFalse(examples.isEmpty, "\(name) has examples")
            for example in examples {
                // Split as the screen's dialogs split a typed line (shell quotes taken off).
                guard let all = CommandWords.split(example) else { XCTFail("\(example): a quote left open"); continue }
                let words = Array(all.dropFirst(2))  // after `tapedeck NAME`
                let session = words.first ?? ""
                let typed = try OwnerForwarding.typed(kind, words, session: session)
                XCTAssertEqual(typed.name, name)
                XCTAssertEqual(typed.workingFolder, cwd)
                // The line the socket carries, read as the owner's server reads it.
                guard case .success(.typed(let received)) = RemoteCommand.parse(RemoteCommand.typed(typed).line) else {
                    XCTFail("\(example): the line is not a typed command"); continue
                }
                XCTAssertEqual(received, typed, example)
                // Decoded by name from the table, encoded again: the same value.
                switch OwnerForwarding.decode(received) {
                case .success(let value):
                    XCTAssertEqual(ObjectIdentifier(type(of: value)), ObjectIdentifier(kind), example)
                    XCTAssertEqual(try OwnerForwarding.encode(value), typed.value, example)
                case .failure(let why):
                    XCTFail("\(example): \(why)")
                }
                // Paths travel absolute: the session as the owner (elsewhere) must read it.
                if session.hasSuffix(".tapedeck") {
                    XCTAssertTrue(typed.value.contains("\"\(cwd)/\(session)\""), "\(example): \(typed.value)")
                }
                // The label is how it was typed (no session folder exists here to leave out).
                XCTAssertEqual(typed.label, ([name] + OwnerForwarding.absolutePaths(words, spec: kind.spec)).joined(separator: " "), example)
                tried += 1
            }
        }
        XCTAssertGreaterThanOrEqual(tried, 30, "the examples of every handed command were typed")
    }

    /// The owner's undo step is named after the command as typed, without the session it
    /// holds (the screen knows which).
    func testTheLabelLeavesTheHeldSessionOut() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("handed-\(getpid())").path
        let session = dir + "/s.tapedeck"
        try FileManager.default.createDirectory(atPath: session, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let typed = try OwnerForwarding.typed(MarkerCommand.self, [session + "/", "add", "1:00", "Chorus"], session: session)
        XCTAssertEqual(typed.label, "marker add 1:00 Chorus")
        XCTAssertTrue(typed.value.contains("\"folder\":\"\(session)\""), typed.value)
    }

    /// The owner answers a name it does not take, or a value that is not its command's, in
    /// one line, with the usage status; it runs nothing.
    func testTheOwnerRefusesWhatItCannotDecodeInOneLine() {
        guard case .failure(let unknown) = OwnerForwarding.decode(TypedCommand(name: "export", value: "{}", workingFolder: "/", label: "export")) else {
            return XCTFail("export is not handed over")
        }
        XCTAssertTrue(unknown.description.contains(OwnerForwarding.notTakenText), unknown.description)
        let bad = TypedCommand(name: "marker", value: "{\"folder\":\"/s.tapedeck\",\"edit\":{\"add\":{\"time\":\"1:00\"}}}",
                               workingFolder: "/", label: "marker add 1:00")
        guard case .failure(let malformed) = OwnerForwarding.decode(bad) else { return XCTFail("a value without the marker's name decoded") }
        XCTAssertEqual(malformed.description.split(separator: "\n").count, 1, malformed.description)
        XCTAssertTrue(malformed.description.contains("edit.add.name: missing"), malformed.description)
        XCTAssertTrue(malformed.description.contains(OwnerForwarding.malformedText), malformed.description)
    }

    /// A value the parser would never give (a hand-made `cmd` line) is refused in one line
    /// before it runs: the screen once trapped on a region number of -5, which `run` indexes
    /// by. Every example above decodes, so the check never refuses what the command line gives.
    func testTheOwnerRefusesValuesTheParserNeverGivesInOneLine() {
        let s = "\"folder\":\"/s.tapedeck\""
        let crafted: [(name: String, value: String, says: String)] = [
            ("region", "{\(s),\"trackText\":\"1\",\"number\":-5,\"edit\":{\"duplicate\":{}}}", "number -5 is below 1"),
            ("region", "{\(s),\"trackText\":\"1\",\"number\":1,\"edit\":{\"rate\":{\"_0\":0}}}", "rate 0.0 is outside 1/32...32"),
            ("region", "{\(s),\"trackText\":\"1\",\"regionID\":0,\"number\":0,\"edit\":{\"delete\":{}}}", "regionID 0 is below 1"),
            ("track", "{\(s),\"target\":\"1\",\"gain\":1e300,\"midi\":false}", "gain 1e+300"),
            ("track", "{\(s),\"target\":\"1\",\"input\":[0],\"midi\":false}", "input [0]"),
            ("send", "{\(s),\"stripText\":\"1\",\"busText\":\"Verb\",\"pan\":5,\"remove\":false,\"json\":false}", "pan 5.0 is outside -1...1"),
            ("learn", "{\(s),\"controller\":999,\"target\":{\"kind\":\"master\"},\"inputChain\":false,\"clear\":false}", "--cc 999 is outside 0...127"),
            ("learn", "{\(s),\"target\":{\"kind\":\"master\"},\"inputChain\":false,\"clear\":false}", "give the controller with --cc"),
            ("takes", "{\(s),\"trackText\":\"1\",\"choose\":{\"group\":0,\"take\":1}}", "choose.group 0 is below 1"),
            ("info", "{\"target\":\"/s.tapedeck\",\"width\":1000000000,\"json\":false}", "width 1000000000 is outside 30...1000"),
        ]
        for c in crafted {
            switch OwnerForwarding.decode(TypedCommand(name: c.name, value: c.value, workingFolder: "/", label: c.name)) {
            case .success(let value):
                XCTFail("\(c.name) \(c.value) decoded as \(value)")
            case .failure(let why):
                XCTAssertTrue(why.description.contains(c.says), "\(c.name): \(why.description)")
                XCTAssertEqual(why.description.split(separator: "\n").count, 1, why.description)
            }
        }
    }
}
