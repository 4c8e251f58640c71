import XCTest

/// Issue 42, item 3: chains are parsed once, at the edge. A session's stored chain text is
/// read only by ``SessionChains`` (each owner keeps one; a lookup takes a `Chain` or a
/// `SessionChains`, never the text); `Chain(parsing:)` is otherwise called only on text a
/// user has just typed or handed in. A new call on stored text fails here with its place.
final class ChainParseSitesTests: XCTestCase {
    /// The package root: this file is Tests/TapedeckDSPTests/ChainParseSitesTests.swift.
    private static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Every file allowed to parse chain text, how many calls it makes, and why it may.
    private static let edges: [String: (calls: Int, why: String)] = [
        "Sources/TapedeckDSP/SessionChains.swift": (1, "the one place a session's stored chain text is read"),
        "Sources/TapedeckUI/ScreenModel+Dialogs.swift": (1, "the chain dialog's typed text"),
        "Sources/TapedeckCommands/Commands/ChainCommand.swift": (1, "the chain command's CHAIN argument"),
        "Sources/TapedeckCommands/Commands/ExportCommand.swift": (1, "export --fx"),
        "Sources/TapedeckCommands/Commands/PlayCommand.swift": (1, "play --fx"),
        "Sources/TapedeckCommands/Commands/RecordCommand.swift": (1, "record --fx"),
        "Sources/TapedeckCommands/Commands/BenchCommand.swift": (1, "bench --chain, refused early with its caret"),
        "Sources/TapedeckBench/BenchStrips.swift": (1, "bench's own chain text"),
        "Sources/TapedeckFuzz/Targets/ChainTarget.swift": (2, "the fuzzer's input, and its round trip"),
    ]

    func testOnlyEdgesParseChainText() throws {
        let sources = Self.root.appendingPathComponent("Sources")
        let files = try XCTUnwrap(FileManager.default.enumerator(atPath: sources.path)).compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") }
        XCTAssertGreaterThan(files.count, 100, "the sources were found")
        let call = try Regex(#"Chain(\.init)?\(\s*parsing:"#)
        var found: [String: [Int]] = [:]
        for file in files {
            let text = try String(contentsOf: sources.appendingPathComponent(file), encoding: .utf8)
            for (n, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
            where !line.trimmingCharacters(in: .whitespaces).hasPrefix("//") && line.contains(call) {
                found["Sources/" + file, default: []].append(n + 1)
            }
        }
        for (file, lines) in found.sorted(by: { $0.key < $1.key }) {
            guard let edge = Self.edges[file] else {
                XCTFail("\(file):\(lines.map(String.init).joined(separator: ",")) parses chain text: take the chain from the owner's SessionChains instead")
                continue
            }
            XCTAssertEqual(lines.count, edge.calls, "\(file) (\(edge.why)) parses at lines \(lines): a new call there reads stored text?")
        }
        for file in Self.edges.keys where found[file] == nil {
            XCTFail("\(file) no longer parses chain text: take it off the list")
        }
    }
}
