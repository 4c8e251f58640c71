import Foundation
import XCTest
import TapedeckUI
@testable import TapedeckCommands

/// The documentation against the command table and itself: every command has its page in
/// docs/commands, equal to what `tapedeck docs` prints now (so an option changed without
/// `make docs` fails here); every option is on its page and its man page; every relative link
/// in README.md, ARCHITECTURE.md, BENCHMARKS.md and docs/ resolves, anchors to a heading; the
/// README stays short.
final class DocumentationTests: XCTestCase {
    /// The package root: this file is Tests/CLITests/DocumentationTests.swift.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let commandsFolder = root.appendingPathComponent("docs/commands")

    func testEveryCommandHasItsPageAndEachPageIsWhatTheGeneratorPrintsNow() throws {
        let expected = DocsCommand.pages(man: false)
        let committed = Set(try FileManager.default.contentsOfDirectory(atPath: DocumentationTests.commandsFolder.path))
        XCTAssertEqual(committed, Set(expected.map(\.name)),
                       "docs/commands holds exactly one page per command and README.md (run 'make docs')")
        for page in expected {
            let text = try? String(contentsOf: DocumentationTests.commandsFolder.appendingPathComponent(page.name), encoding: .utf8)
            XCTAssertEqual(text, page.text, "docs/commands/\(page.name) differs from the command table: run 'make docs' and commit it")
        }
    }

    func testEveryOptionOfEveryCommandIsOnItsPage() throws {
        for command in CommandList.all {
            guard let page = try? String(contentsOf: DocumentationTests.commandsFolder.appendingPathComponent(CommandDocs.fileName(command.spec)),
                                         encoding: .utf8) else {
                XCTFail("docs/commands/\(CommandDocs.fileName(command.spec)) is missing (run 'make docs')")
                continue
            }
            for form in command.spec.synopsis {
                XCTAssertTrue(page.contains("tapedeck " + form), "\(command.name): synopsis '\(form)' missing")
            }
            for option in command.spec.options {
                XCTAssertTrue(page.contains(CommandDocs.cell(HelpText.optionLabel(option))), "\(command.name): page lacks \(option.primaryName)")
                XCTAssertTrue(page.contains(CommandDocs.cell(option.fullHelp)), "\(command.name): page lacks the help of \(option.primaryName)")
            }
            // The prose is help's prose, paragraph by paragraph.
            for line in command.spec.details.split(separator: "\n") where !line.isEmpty {
                XCTAssertTrue(page.contains(line), "\(command.name): page lacks '\(line)'")
            }
            for example in command.spec.examples {
                XCTAssertTrue(page.contains(example), "\(command.name): page lacks the example '\(example)'")
            }
        }
        let index = try String(contentsOf: DocumentationTests.commandsFolder.appendingPathComponent("README.md"), encoding: .utf8)
        for command in CommandList.all {
            XCTAssertTrue(index.contains("[\(command.name)](\(command.name).md)"), "the index lacks \(command.name)")
        }
    }

    func testEachCommandsManPageListsExactlyItsOptionsAndRendersWithoutWarnings() throws {
        for command in CommandList.all {
            let text = ManPage.commandPage(command.spec)
            XCTAssertTrue(text.contains(".TH TAPEDECK\\-\(command.name.uppercased()) 1"), command.name)
            var names = Set<String>()
            let lines = text.split(separator: "\n").map(String.init)
            for (i, line) in lines.enumerated() where line == ".TP" && i + 1 < lines.count {
                var label = lines[i + 1]
                while let start = label.range(of: "\\fB"), let end = label.range(of: "\\fR", range: start.upperBound..<label.endIndex) {
                    names.insert(label[start.upperBound..<end.lowerBound].replacingOccurrences(of: "\\-", with: "-"))
                    label = String(label[end.upperBound...])
                }
            }
            XCTAssertEqual(names, Set(command.spec.optionNames), "tapedeck-\(command.name).1")
            let page = try CommandTableTests.write(text, name: ManPage.commandPageName(command.spec), removedAfter: self)
            let out = try CommandTableTests.run("/bin/sh", ["-c", "groff -man -Tutf8 -ww -z '\(page)' 2>&1"])
            XCTAssertEqual(out, "", "groff warnings in tapedeck-\(command.name).1")
        }
    }

    func testTheReadmeIsShort() throws {
        let readme = try String(contentsOf: DocumentationTests.root.appendingPathComponent("README.md"), encoding: .utf8)
        XCTAssertLessThanOrEqual(readme.count, 22_000, "README.md is a front page: move the detail into docs/")
        for needed in ["make run", "make test", "docs/tutorial.md", "docs/keys.md", "docs/commands/README.md"] {
            XCTAssertTrue(readme.contains(needed), "README.md lacks \(needed)")
        }
    }

    func testEveryRelativeLinkResolvesToAFileAndEveryAnchorToAHeading() throws {
        let files = DocumentationTests.markdownFiles()
        XCTAssertTrue(files.contains { $0.hasSuffix("/docs/tutorial.md") }, "the tutorial is missing")
        var checked = 0
        for file in files {
            let text = try String(contentsOfFile: file, encoding: .utf8)
            for link in DocumentationTests.links(in: text) {
                if link.contains("://") || link.hasPrefix("mailto:") { continue }
                let parts = link.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
                let target = parts[0].isEmpty ? file
                    : URL(fileURLWithPath: file).deletingLastPathComponent().appendingPathComponent(parts[0]).standardized.path
                XCTAssertTrue(FileManager.default.fileExists(atPath: target), "\(file): link '\(link)' leads nowhere")
                checked += 1
                guard parts.count == 2, target.hasSuffix(".md"), let linked = try? String(contentsOfFile: target, encoding: .utf8) else { continue }
                XCTAssertTrue(DocumentationTests.anchors(of: linked).contains(parts[1]), "\(file): no heading '#\(parts[1])' in \(target)")
            }
        }
        XCTAssertGreaterThan(checked, 50, "the links were found")
    }

    /// docs/keys.md (the README's link for every key) shows every key the screen ships with:
    /// a key added to KeyMap.defaults without its row fails here.
    func testTheKeysPageShowsEveryDefaultKey() throws {
        let page = try String(contentsOf: DocumentationTests.root.appendingPathComponent("docs/keys.md"), encoding: .utf8)
        var shown = Set<String>()
        for line in page.split(separator: "\n") where line.hasPrefix("| ") {
            // | key | action | key | action |: the key cells are the first and the third.
            let cells = line.replacingOccurrences(of: "\\|", with: "\u{1}").split(separator: "|", omittingEmptySubsequences: false)
            for index in [1, 3] where index < cells.count {
                let parts = cells[index].split(separator: "`", omittingEmptySubsequences: false)
                for (i, part) in parts.enumerated() where i % 2 == 1 {
                    shown.insert(part.replacingOccurrences(of: "\u{1}", with: "|"))
                }
            }
        }
        XCTAssertGreaterThan(shown.count, 50, "the key table was read")
        for (action, keys) in KeyMap.defaults {
            for key in keys {
                XCTAssertTrue(shown.contains(key.name), "docs/keys.md lacks \(key.name) (\(action.rawValue))")
            }
        }
    }

    /// ARCHITECTURE.md follows the code: it names every target Package.swift declares, and
    /// every source file it points at exists (a rename or a removed target fails here).
    func testArchitectureNamesEveryTargetAndOnlyFilesThatExist() throws {
        let architecture = try String(contentsOf: DocumentationTests.root.appendingPathComponent("ARCHITECTURE.md"), encoding: .utf8)
        let package = try String(contentsOf: DocumentationTests.root.appendingPathComponent("Package.swift"), encoding: .utf8)
        let targets = try DocumentationTests.matches(#"\.(?:target|executableTarget|systemLibrary)\(name: "([^"]+)""#, in: package)
        XCTAssertGreaterThan(targets.count, 20, "the targets were read from Package.swift")
        for target in targets {
            XCTAssertTrue(architecture.contains("`\(target)`"), "ARCHITECTURE.md does not name the target \(target)")
        }
        var sources: Set<String> = ["Package.swift"]
        let e = FileManager.default.enumerator(atPath: DocumentationTests.root.appendingPathComponent("Sources").path)
        while let p = e?.nextObject() as? String { sources.insert((p as NSString).lastPathComponent) }
        let cited = try DocumentationTests.matches(#"([A-Za-z0-9_+]+\.(?:swift|c|h))`"#, in: architecture)
        XCTAssertGreaterThan(cited.count, 10, "the cited files were found")
        for file in cited {
            XCTAssertTrue(sources.contains(file), "ARCHITECTURE.md cites \(file), which is not in Sources/")
        }
    }

    // MARK: helpers

    /// The first capture group of every match of `pattern`.
    static func matches(_ pattern: String, in text: String) throws -> [String] {
        let regex = try NSRegularExpression(pattern: pattern)
        return regex.matches(in: text, range: NSRange(text.startIndex..., in: text)).compactMap {
            Range($0.range(at: 1), in: text).map { String(text[$0]) }
        }
    }

    /// README.md, ARCHITECTURE.md, BENCHMARKS.md and every .md under docs/.
    static func markdownFiles() -> [String] {
        var out = ["README.md", "ARCHITECTURE.md", "BENCHMARKS.md"].map { root.appendingPathComponent($0).path }
        let docs = root.appendingPathComponent("docs")
        let e = FileManager.default.enumerator(atPath: docs.path)
        while let p = e?.nextObject() as? String {
            if p.hasSuffix(".md") { out.append(docs.appendingPathComponent(p).path) }
        }
        return out
    }

    /// The targets of `[text](target)` links outside code blocks and code spans.
    static func links(in text: String) -> [String] {
        var out: [String] = []
        var fenced = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") { fenced.toggle(); continue }
            if fenced { continue }
            let prose = line.replacingOccurrences(of: "`[^`]*`", with: "", options: .regularExpression)
            var rest = Substring(prose)
            while let open = rest.range(of: "](") {
                let after = rest[open.upperBound...]
                guard let close = after.firstIndex(of: ")") else { break }
                out.append(String(after[..<close]))
                rest = after[close...]
            }
        }
        return out
    }

    /// The anchors GitHub gives a page's headings: lower case, punctuation dropped, spaces as
    /// hyphens, a repeated one numbered (`-1`, `-2`).
    static func anchors(of text: String) -> Set<String> {
        var seen: [String: Int] = [:]
        var out = Set<String>()
        var fenced = false
        for line in text.split(separator: "\n") {
            if line.hasPrefix("```") { fenced.toggle(); continue }
            guard !fenced, line.hasPrefix("#") else { continue }
            let title = line.drop { $0 == "#" }.trimmingCharacters(in: .whitespaces)
            let slug = String(title.lowercased().unicodeScalars.filter {
                CharacterSet.alphanumerics.contains($0) || $0 == "-" || $0 == "_" || $0 == " "
            }.map(Character.init)).replacingOccurrences(of: " ", with: "-")
            let n = seen[slug, default: 0]
            out.insert(n == 0 ? slug : "\(slug)-\(n)")
            seen[slug] = n + 1
        }
        return out
    }
}
