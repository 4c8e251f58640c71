import Foundation
import TapedeckCore

/// `tapedeck-fuzz`: seeded, reproducible fuzzing of every parser Tapedeck has, run by
/// `make fuzz` (10^5 cases per parser) and, over a fixed corpus, by `make test`.
///
///     tapedeck-fuzz [all|time|chain|session|keys|theme|audio|midi|cli|socket|paths ...] [--cases N] [--seed S] [--findings DIR]
///     tapedeck-fuzz corpus DIR        every file of DIR/PARSER/ through its parser
///
/// Reports crashes (a worker killed by a signal), hangs (10 s without progress) and unclear
/// messages (more than one line, raw control characters, no field or value named), one line
/// each, and exits 1 when there is any. A finding's input is saved as
/// `DIR/PARSER-SEED-INDEX.KIND`; `tapedeck-fuzz PARSER --seed SEED --from INDEX --cases 1`
/// runs it again.
enum Targets {
    nonisolated(unsafe) static let all: [any FuzzTarget.Type] = [TimeTarget.self, ChainTarget.self, SessionTarget.self, KeysTarget.self,
                                             ThemeTarget.self, AudioTarget.self, MIDITarget.self, CLITarget.self,
                                             SocketTarget.self, PathsTarget.self]

    static func make(_ name: String) throws -> any FuzzTarget {
        guard let type = all.first(where: { $0.name == name }) else { throw FuzzUsage("unknown parser '\(name)'") }
        return try type.init()
    }
}

struct FuzzUsage: Error, CustomStringConvertible {
    var description: String
    init(_ text: String) { description = text }
}

/// Emits one protocol line to the supervisor.
func emit(_ line: String) {
    var text = line + "\n"
    text.withUTF8 { buf in _ = write(1, buf.baseAddress, buf.count) }
}

/// Worker mode: runs cases and says which one it starts before running it.
func runWorker(_ args: [String]) throws {
    guard let name = args.first else { throw FuzzUsage("worker needs a parser") }
    let seed = UInt64(option(args, "--seed") ?? "1") ?? 1
    let from = Int(option(args, "--from") ?? "0") ?? 0
    let count = Int(option(args, "--cases") ?? "1") ?? 1
    let target = try Targets.make(name)
    let corpusFiles = option(args, "--corpus").map { corpusInputs($0, parser: name) }
    for index in from..<(from + count) {
        // Said before the input is made: a generator that runs away is this case's hang too.
        emit("S \(index)")
        let input: [UInt8]
        if let files = corpusFiles {
            guard index < files.count else { break }
            input = files[index]
        } else {
            input = target.input(seed: seed, index: index)
        }
        if let problem = target.check(input, index: index) {
            emit("U \(index) \(SafeText.escaped(problem))")
        }
    }
    emit("D")
}

/// The files of `DIR/PARSER/`, sorted by name.
func corpusInputs(_ dir: String, parser: String) -> [[UInt8]] {
    let folder = dir + "/" + parser
    let names = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted()
    return names.compactMap { FileManager.default.contents(atPath: folder + "/" + $0).map { [UInt8]($0) } }
}

func option(_ args: [String], _ name: String) -> String? {
    guard let i = args.firstIndex(of: name), i + 1 < args.count else { return nil }
    return args[i + 1]
}

func runSupervisor(_ args: [String]) throws -> Int32 {
    var names: [String] = Array(args.prefix(while: { !$0.hasPrefix("--") }))
    var corpus: String?
    if names.first == "corpus" {
        guard names.count == 2 else { throw FuzzUsage("corpus needs a folder") }
        corpus = names[1]
        names = ["all"]
    }
    if names.isEmpty || names == ["all"] { names = Targets.all.map { $0.name } }
    let seed = UInt64(option(args, "--seed") ?? "") ?? UInt64(Date().timeIntervalSince1970)
    let cases = Int(option(args, "--cases") ?? "") ?? 100_000
    let from = Int(option(args, "--from") ?? "0") ?? 0
    let findingsFolder = option(args, "--findings") ?? "fuzz-findings"
    var total: [Supervisor.Finding] = []
    for name in names {
        guard Targets.all.contains(where: { $0.name == name }) else { throw FuzzUsage("unknown parser '\(name)' (have: \(Targets.all.map { $0.name }.joined(separator: ", ")))") }
        let count = corpus.map { corpusInputs($0, parser: name).count } ?? (name == CLITarget.name ? max(1, cases / 10) : cases)
        let started = Date()
        let supervisor = Supervisor(target: name, seed: seed, findingsFolder: findingsFolder, corpus: corpus)
        var found = from == 0 ? supervisor.run(count: count) { _ in } : []
        if from > 0 {
            // Replaying from a case: run the window asked for.
            found = SupervisorWindow(supervisor: supervisor, from: from, count: count).run()
        }
        total += found
        let seconds = Date().timeIntervalSince(started)
        print("\(name): \(count) cases, seed \(seed), \(String(format: "%.1f", seconds)) s: "
              + (found.isEmpty ? "nothing found" : "\(found.count) finding\(found.count == 1 ? "" : "s")"))
        for f in found { print("  \(f.kind) at case \(f.index): \(f.detail)") }
    }
    if !total.isEmpty && corpus == nil { print("inputs saved in \(findingsFolder)/; replay one with: tapedeck-fuzz PARSER --seed \(seed) --from INDEX --cases 1") }
    print("\(total.isEmpty ? names.count : 0) passed, \(total.isEmpty ? 0 : names.count) failed")
    return total.isEmpty ? 0 : 1
}

/// A supervisor run over cases `from..<from+count`.
struct SupervisorWindow {
    let supervisor: Supervisor
    let from: Int
    let count: Int

    func run() -> [Supervisor.Finding] {
        supervisor.run(count: from + count, start: from) { _ in }
    }
}

let arguments = Array(CommandLine.arguments.dropFirst())
do {
    if arguments.first == "worker" {
        try runWorker(Array(arguments.dropFirst()))
        exit(0)
    }
    exit(try runSupervisor(arguments))
} catch {
    FileHandle.standardError.write(Data("tapedeck-fuzz: \(error)\n".utf8))
    exit(64)
}
