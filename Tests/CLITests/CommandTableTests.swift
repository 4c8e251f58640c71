import Foundation
import XCTest
@testable import TapedeckCommands

/// The one source of truth: every command's option table against what its parser reads, the
/// man page, and the bash, zsh and fish completions. Each test fails when an option exists in
/// one and not the other.
final class CommandTableTests: XCTestCase {
    /// A command line each command's `init` accepts without touching any file; every option
    /// is read whether or not it is given, so parsing it shows which options the code reads.
    static let minimalArguments: [String: [String]] = [
        "open": ["song.tapedeck"], "new": ["song"], "import": ["s.tapedeck", "a.wav"],
        "export": ["s.tapedeck", "-o", "x.wav"], "info": ["x.wav"], "nodes": [], "chain": ["s.tapedeck", "1"],
        "takes": ["s.tapedeck", "1"], "demo": ["d.tapedeck"], "record": ["--out", "x.wav"],
        "calibrate": [], "play": ["x.wav"], "devices": [], "recover": ["s.tapedeck"], "bench": ["mixdown"],
        "completions": ["bash"], "man": [], "docs": ["d"], "track": ["s.tapedeck", "1"], "region": ["s.tapedeck", "1"],
        "marker": ["s.tapedeck"], "session": ["s.tapedeck"], "undo": ["s.tapedeck"], "redo": ["s.tapedeck"], "tempo": ["s.tapedeck"], "meter": ["s.tapedeck"], "loop": ["s.tapedeck"], "punch": ["s.tapedeck"], "learn": ["s.tapedeck"],
        "ctl": ["status"], "bus": ["s.tapedeck"], "send": ["s.tapedeck", "1"], "automation": ["s.tapedeck", "1"],
    ]

    func testEveryCommandReadsExactlyTheOptionsItsTableDeclares() throws {
        XCTAssertEqual(Set(CommandList.all.map { $0.spec.name }), Set(CommandTableTests.minimalArguments.keys),
                       "every command needs a minimal command line here")
        for command in CommandList.all {
            var arguments = Arguments(CommandTableTests.minimalArguments[command.name] ?? [], spec: command.spec)
            _ = try command.init(arguments: &arguments)
            XCTAssertEqual(arguments.undeclared, [], "\(command.name) reads options its table lacks")
            XCTAssertEqual(arguments.asked, Set(command.spec.options.map(\.primaryName)),
                           "\(command.name): the table and the parser disagree")
            XCTAssertNoThrow(try arguments.finish())
        }
    }

    func testOptionNamesAreUniqueWithinEachCommand() {
        for command in CommandList.all {
            let names = command.spec.optionNames
            XCTAssertEqual(names.count, Set(names).count, "\(command.name) declares an option twice")
        }
    }

    func testManPageListsExactlyEachCommandsOptions() {
        let sections = CommandTableTests.manSections(ManPage.text(CommandList.all))
        XCTAssertEqual(Set(sections.keys), Set(CommandList.all.map { $0.spec.name }))
        for command in CommandList.all {
            XCTAssertEqual(sections[command.name] ?? [], Set(command.spec.optionNames), "man page, \(command.name)")
        }
    }

    func testBashCompletionOffersExactlyEachCommandsOptions() {
        let script = Completions.bash(CommandList.all.map { $0.spec })
        for command in CommandList.all {
            // The `-*` branch of the command's case arm lists every option.
            let arm = CommandTableTests.between(script, "\n    \(command.name))\n", "\n        ;;")
            let words = CommandTableTests.between(arm, "== -* ]]; then COMPREPLY=($(compgen -W \"", "\"").split(separator: " ").map(String.init)
            XCTAssertEqual(Set(words), Set(command.spec.optionNames), "bash, \(command.name)")
        }
    }

    func testZshCompletionOffersExactlyEachCommandsOptions() {
        let script = Completions.zsh(CommandList.all.map { $0.spec })
        for command in CommandList.all {
            let arm = CommandTableTests.between(script, "\n  (\(command.name))\n", "\n    ;;")
            var names = Set<String>()
            for line in arm.split(separator: "\n") where line.hasPrefix("      ") {
                let item = line.trimmingCharacters(in: .whitespaces)
                if item.hasPrefix("'(") || item.hasPrefix("{") || item.hasPrefix("-") {
                    // `'(-o --output)'{-o,--output}'[…]…'` or `--bits'[…]…'`
                    let spec = item.hasPrefix("'(") ? String(item.drop { $0 != "{" }) : item
                    let head = spec.hasPrefix("{") ? String(spec.dropFirst().prefix { $0 != "}" }) : String(spec.prefix { $0 != "'" })
                    names.formUnion(head.split(separator: ",").map(String.init))
                }
            }
            XCTAssertEqual(names, Set(command.spec.optionNames), "zsh, \(command.name)")
        }
    }

    func testFishCompletionOffersExactlyEachCommandsOptions() {
        let script = Completions.fish(CommandList.all.map { $0.spec })
        for command in CommandList.all {
            var names = Set<String>()
            for line in script.split(separator: "\n") where line.contains("'__fish_seen_subcommand_from \(command.name)'") {
                let words = line.split(separator: " ").map(String.init)
                for (i, w) in words.enumerated() where i + 1 < words.count {
                    if w == "-l" { names.insert("--" + words[i + 1]) }
                    if w == "-s" { names.insert("-" + words[i + 1]) }
                }
            }
            XCTAssertEqual(names, Set(command.spec.optionNames), "fish, \(command.name)")
        }
    }

    func testBashCompletesCommandsOptionsAndChoices() throws {
        let script = try CommandTableTests.write(Completions.bash(CommandList.all.map { $0.spec }), name: "tapedeck.bash", removedAfter: self)
        let cases: [(String, [String])] = [
            ("tapedeck ex", ["export"]),
            ("tapedeck export song.tapedeck --qu", ["--quality"]),
            ("tapedeck export song.tapedeck --markers ", ["named", "all"]),
            ("tapedeck record --monitor ", ["off", "input", "auto"]),
            ("tapedeck help rec", ["record", "recover"]),
            ("tapedeck song.tapedeck --th", ["--theme", "--threads"]),
        ]
        for (line, expected) in cases {
            var words = line.split(separator: " ").map { "'\($0)'" }
            if line.hasSuffix(" ") { words.append("''") }
            let program = "source '\(script)'; COMP_WORDS=(\(words.joined(separator: " "))); COMP_CWORD=\(words.count - 1); _tapedeck; printf '%s\\n' \"${COMPREPLY[@]}\""
            let out = try CommandTableTests.run("/bin/bash", ["--norc", "-c", program])
            XCTAssertEqual(Set(out.split(separator: "\n").map(String.init)), Set(expected), line)
        }
    }

    func testFishAndZshLoadTheirScripts() throws {
        let fish = try CommandTableTests.write(Completions.fish(CommandList.all.map { $0.spec }), name: "tapedeck.fish", removedAfter: self)
        let out = try CommandTableTests.run("/usr/bin/fish", ["--no-config", "-c", "source '\(fish)'; complete -C 'tapedeck export x --normal'; complete -C 'tapedeck export x --bits '"])
        let offered = out.split(separator: "\n").map { String($0.prefix { $0 != "\t" }) }
        XCTAssertEqual(offered, ["--normalize", "16", "24", "32f"])
        let zsh = try CommandTableTests.write(Completions.zsh(CommandList.all.map { $0.spec }), name: "_tapedeck", removedAfter: self)
        _ = try CommandTableTests.run("/usr/bin/zsh", ["-n", zsh])
    }

    func testManPageRendersWithoutWarnings() throws {
        let page = try CommandTableTests.write(ManPage.text(CommandList.all), name: "tapedeck.1", removedAfter: self)
        let out = try CommandTableTests.run("/bin/sh", ["-c", "groff -man -Tutf8 -ww -z '\(page)' 2>&1"])
        XCTAssertEqual(out, "", "groff warnings")
    }

    func testHelpShowsEveryOptionOfTheTable() {
        for command in CommandList.all {
            let text = HelpText.usage(command.spec)
            for option in command.spec.options {
                XCTAssertTrue(text.contains(HelpText.optionLabel(option)), "\(command.name) help lacks \(option.primaryName)")
            }
        }
    }

    func testUnknownOptionNamesTheNearestSpelling() throws {
        var arguments = Arguments(["x.wav", "--devcie", "hw:1"], spec: PlayCommand.spec)
        _ = try PlayCommand(arguments: &arguments)
        XCTAssertThrowsError(try arguments.finish()) { error in
            XCTAssertTrue("\(error)".contains("unknown option '--devcie' (did you mean --device?"), "\(error)")
        }
    }

    func testAChoiceOutsideTheTableIsAUsageError() {
        var arguments = Arguments(["s.tapedeck", "-o", "x.wav", "--markers", "every"], spec: ExportCommand.spec)
        XCTAssertThrowsError(try ExportCommand(arguments: &arguments)) { error in
            XCTAssertEqual("\(error)", "export: --markers 'every' must be named or all")
        }
    }

    // MARK: helpers

    /// The option names of each `.SS` section, read back from the `.TP` labels.
    static func manSections(_ page: String) -> [String: Set<String>] {
        var sections: [String: Set<String>] = [:]
        var current: String?
        let lines = page.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        for (i, line) in lines.enumerated() {
            if line.hasPrefix(".SS ") { current = String(line.dropFirst(4)); sections[current!] = [] }
            if line.hasPrefix(".SH ") { current = nil }
            guard line == ".TP", let name = current, i + 1 < lines.count else { continue }
            var label = lines[i + 1]
            while let start = label.range(of: "\\fB"), let end = label.range(of: "\\fR", range: start.upperBound..<label.endIndex) {
                sections[name]!.insert(label[start.upperBound..<end.lowerBound].replacingOccurrences(of: "\\-", with: "-"))
                label = String(label[end.upperBound...])
            }
        }
        return sections
    }

    static func between(_ text: String, _ start: String, _ end: String) -> String {
        guard let a = text.range(of: start), let b = text.range(of: end, range: a.upperBound..<text.endIndex) else { return "" }
        return String(text[a.upperBound..<b.lowerBound])
    }

    /// Writes `text` to a file `name` in a fresh temporary folder, removed when `test` ends
    /// (each run of the suite left dozens of them in /tmp).
    static func write(_ text: String, name: String, removedAfter test: XCTestCase) throws -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("tapedeck-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        test.addTeardownBlock { try? FileManager.default.removeItem(at: dir) }
        let url = dir.appendingPathComponent(name)
        try text.write(to: url, atomically: true, encoding: .utf8)
        return url.path
    }

    /// Runs a program to the end; fails the test on a non-zero exit.
    static func run(_ program: String, _ args: [String], file: StaticString = #filePath, line: UInt = #line) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = args
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let out = String(decoding: data, as: UTF8.self)
        XCTAssertEqual(process.terminationStatus, 0, "\(program) \(args): \(out)", file: file, line: line)
        return out
    }
}
