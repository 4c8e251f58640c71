import Foundation
import TapedeckCore
import TapedeckIO

/// The real `tapedeck` binary with mutated times, chains and numbers in its options: the
/// command line end to end, exit codes and messages included. Slower than the in-process
/// targets (a process per case), so it runs fewer cases.
struct CLITarget: FuzzTarget {
    static let name = "cli"
    let root: String
    let binary: String
    let commands: [[String]]
    let mutator = Mutator(tokens: ["|", ":", ".", "-", "f", "s", "ms", "=", ",", "1/8", "db", "99999999999999"].map { Array($0.utf8) })

    init() throws {
        binary = FuzzBinary.tapedeck
        // A worker killed at the end of a run cannot remove its folder: the next run does.
        Leftovers.removeDead(in: FileManager.default.temporaryDirectory.path, prefix: "tapedeck-fuzz-cli-")
        root = FileManager.default.temporaryDirectory.appendingPathComponent("tapedeck-fuzz-cli-\(getpid())").path
        try? FileManager.default.removeItem(atPath: root)
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        try FuzzAudio.writeSeedFiles(into: root, frames: 4800)
        let s = root + "/s.tapedeck"
        _ = FuzzBinary.run([binary, "new", s], in: root)
        _ = FuzzBinary.run([binary, "import", s, root + "/a.wav"], in: root)
        // VALUE is the mutated part; everything else is a well-formed command.
        commands = [["import", s, root + "/a.wav", "--track", "1", "--at", "VALUE"],
                    ["export", s, "-o", root + "/x.wav", "--range", "VALUE"],
                    ["export", s, "-o", root + "/x.wav", "--range", "0-0.1", "--speed", "VALUE"],
                    ["export", s, "-o", root + "/x.wav", "--range", "0-0.1", "--fx", "VALUE"],
                    ["record", "--out", root + "/r.wav", "--device", "no-such-device", "--duration", "VALUE"],
                    ["chain", s, "1", "VALUE"],
                    ["new", root + "/n-VALUE", "--tempo", "VALUE"],
                    ["info", s], ["takes", s, "1", "--choose", "VALUE"],
                    // Output paths (issue 40): whatever PATH is, the session stays as it was.
                    ["automation", s, "1", "gain", "csv", "--output", "PATH"],
                    ["export", s, "-o", "PATH", "--range", "0-0.1"],
                    ["export", s, "-o", root + "/x.wav", "--range", "0-0.1", "--chapters", "PATH"]]
        symlink(s, root + "/alias")
    }

    /// Paths into the session, through a link to it, and beside it, for the PATH commands.
    static let pathSeeds = ["s.tapedeck/session.json", "s.tapedeck/session.json.bak", "s.tapedeck/history/index.json",
                            "s.tapedeck/audio/a.wav", "alias/session.json", "s.tapedeck/exports/x.wav", "x.csv", "s.tapedeck/x.json",
                            "alias/audio/../session.json", "s.tapedeck/peaks/a.wav.peak"]

    func input(seed: UInt64, index: Int) -> [UInt8] {
        var rng = FuzzRandom(seed: seed, stream: Self.name, index: index)
        let command = rng.below(commands.count)
        let seedValues = commands[command].contains("PATH") ? Self.pathSeeds
            : ["1.1.1", "2s", "0-1", "1:00-", "0.5", "hpf:80,reverb", "gain:-6", "120", "1.2", "3|2|480", "90000f"]
        let value = mutator.mutate(Array(rng.pick(seedValues).utf8), &rng)
        return [UInt8(command)] + value.filter { $0 != 0 }
    }

    func check(_ input: [UInt8], index: Int) -> String? {
        guard let first = input.first else { return nil }
        let value = Oracle.text(Array(input.dropFirst()))
        let template = commands[Int(first) % commands.count]
        // A path is relative to the fixture's folder (the binary runs in the fuzzer's own).
        let args = template.map { $0.replacingOccurrences(of: "VALUE", with: value).replacingOccurrences(of: "PATH", with: root + "/" + value) }
        let session = root + "/s.tapedeck"
        let before = template.contains("PATH") ? PathsTarget.fingerprint(session) : [:]
        guard let r = FuzzBinary.run([binary] + args, in: root) else { return "tapedeck \(args.joined(separator: " ").terminalSafe) ran past 9 s" }
        if template.contains("PATH") {
            let after = PathsTarget.fingerprint(session)
            // Only a new file of the user's own beside session.json or in exports/ may appear.
            let changed = before.keys.filter { after[$0] != before[$0] } + after.keys.filter { name in
                let top = name.split(separator: "/").first.map(String.init) ?? name
                return before[name] == nil && (top.hasPrefix("session.json") || top == "session.lock" || !(name == top || top == "exports"))
            }
            for name in after.keys where before[name] == nil { try? FileManager.default.removeItem(atPath: session + "/" + name) }
            if !changed.isEmpty { return "tapedeck \(args.joined(separator: " ").terminalSafe) changed the session: \(changed.sorted().prefix(3).joined(separator: ", ").terminalSafe)" }
        }
        if r.signal != 0 { return "tapedeck \(args.joined(separator: " ").terminalSafe) died of signal \(r.signal)" }
        guard [0, 1, 64, 65].contains(r.status) else { return "exit \(r.status) for \(args.joined(separator: " ").terminalSafe)" }
        if r.status != 0 {
            let lines = r.stderr.hasPrefix("tapedeck: chain error") || r.stderr.contains(": chain error at column") ? 3 : 1
            if let bad = Oracle.unclear(r.stderr.hasSuffix("\n") ? String(r.stderr.dropLast()) : r.stderr, lines: lines) { return bad }
        }
        if r.stdout.unicodeScalars.contains(where: { $0 != "\n" && SafeText.needsEscape($0) }) { return "raw control character on stdout" }
        return nil
    }
}

/// Runs the `tapedeck` binary built beside this one.
enum FuzzBinary {
    static var tapedeck: String {
        let me = (CommandLine.arguments.first.map { URL(fileURLWithPath: $0).deletingLastPathComponent().path }) ?? "."
        return me + "/tapedeck"
    }

    struct Outcome {
        var status: Int32
        var signal: Int32
        var stdout: String
        var stderr: String
    }

    /// Runs `argv` with its output in files; nil when it does not end within 9 s (then it is
    /// killed).
    static func run(_ argv: [String], in dir: String) -> Outcome? {
        let out = dir + "/stdout.txt", err = dir + "/stderr.txt"
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, out, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, err, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        let cArgs = argv.map { strdup($0) } + [nil]
        defer { cArgs.forEach { free($0) } }
        var pid: pid_t = 0
        guard posix_spawn(&pid, argv[0], &actions, nil, cArgs, environ) == 0 else { return nil }
        var status: Int32 = 0
        for _ in 0..<900 {
            if waitpid(pid, &status, WNOHANG) == pid {
                let signal = status & 0x7f
                return Outcome(status: (status >> 8) & 0xff, signal: signal,
                               stdout: (try? String(contentsOfFile: out, encoding: .utf8)) ?? "",
                               stderr: (try? String(contentsOfFile: err, encoding: .utf8)) ?? "")
            }
            usleep(10_000)
        }
        kill(pid, SIGKILL)
        waitpid(pid, &status, 0)
        return nil
    }
}
