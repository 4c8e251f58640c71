import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// Drives `tapedeck` inside a private tmux server: one socket per test, spawned with an
/// emptied signal mask (test threads block signals, and a tmux server that cannot see
/// SIGCHLD hangs), its output to files, never pipes.
final class ScreenTmux {
    let socket: String
    let folder: String
    private var killed = false

    /// Starts `tapedeck ARGS` in a `width` × `height` tmux window with `environment` added.
    init(_ test: XCTestCase, folder: String, args: [String], environment: [String: String] = [:],
         width: Int = 100, height: Int = 30) throws {
        self.folder = folder
        socket = folder + "/tmux.sock"
        let conf = folder + "/tmux.conf"
        try "set -g default-terminal tmux-256color\nset -g status off\nset -g remain-on-exit off\n"
            .write(toFile: conf, atomically: true, encoding: .utf8)
        var env = ["LANG": "C.UTF-8", "XDG_CONFIG_HOME": folder + "/config"]
        for (k, v) in environment { env[k] = v }
        // `swift test` sets NO_COLOR for its children; a test that wants it says so.
        let command = (["env", "-u", "NO_COLOR"] + env.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
                       + [Tapedeck.binary] + args).map(ScreenTmux.quote).joined(separator: " ")
        let status = ScreenTmux.spawn(["tmux", "-f", conf, "-S", socket, "new-session", "-d", "-s", "t",
                                       "-x", "\(width)", "-y", "\(height)", command], output: "/dev/null")
        XCTAssertEqual(status, 0, "tmux new-session")
        test.addTeardownBlock { [self] in kill() }
    }

    /// The pane's text (with escape sequences for colours when `colors`).
    func capture(colors: Bool = false) -> String {
        let out = folder + "/capture-\(UUID().uuidString)"
        defer { unlink(out) }
        _ = ScreenTmux.spawn(["tmux", "-S", socket, "capture-pane", "-p"] + (colors ? ["-e"] : []) + ["-t", "t"], output: out)
        return (try? String(contentsOfFile: out, encoding: .utf8)) ?? ""
    }

    /// Sends tmux key names (`Space`, `q`, `C-s`, `?`).
    func send(_ keys: String...) {
        _ = ScreenTmux.spawn(["tmux", "-S", socket, "send-keys", "-t", "t"] + keys, output: "/dev/null")
    }

    /// Resizes the window (the program gets KEY_RESIZE).
    func resize(width: Int, height: Int) {
        _ = ScreenTmux.spawn(["tmux", "-S", socket, "resize-window", "-t", "t", "-x", "\(width)", "-y", "\(height)"], output: "/dev/null")
    }

    /// Whether the tmux session still exists (it ends when tapedeck exits).
    var isRunning: Bool {
        ScreenTmux.spawn(["tmux", "-S", socket, "has-session", "-t", "t"], output: "/dev/null") == 0
    }

    /// Polls the pane until `condition` holds, for at most `timeout` seconds; returns the
    /// last capture, and fails the test when it never held. Once it holds, the screen is
    /// given a moment to finish drawing (a loaded machine let tests catch a view half drawn,
    /// its first line there and the rest not yet): the capture returned is the first one
    /// that repeats the one before it, up to half a second on, as long as it still holds.
    @discardableResult
    func waitFor(_ what: String, timeout: Double = 5, colors: Bool = false, file: StaticString = #filePath, line: UInt = #line,
                 _ condition: (String) -> Bool) -> String {
        let deadline = Date().addingTimeInterval(timeout)
        var text = ""
        while Date() < deadline {
            text = capture(colors: colors)
            if condition(text) { return settled(text, colors: colors, condition) }
            usleep(50_000)
        }
        XCTFail("timed out waiting for \(what); the screen was:\n\(text)", file: file, line: line)
        return text
    }

    /// `text` once the screen stops changing (or half a second on), if `condition` still holds.
    private func settled(_ text: String, colors: Bool, _ condition: (String) -> Bool) -> String {
        var last = text
        for _ in 0..<10 {
            usleep(50_000)
            let next = capture(colors: colors)
            guard condition(next) else { return last }
            if next == last { return next }
            last = next
        }
        return last
    }

    /// Waits for `needle` to appear on screen.
    @discardableResult
    func waitFor(_ needle: String, timeout: Double = 5, file: StaticString = #filePath, line: UInt = #line) -> String {
        waitFor("'\(needle)'", timeout: timeout, file: file, line: line) { $0.contains(needle) }
    }

    /// The process id of the program in the pane.
    var panePID: Int32? {
        let out = folder + "/pid-\(UUID().uuidString)"
        defer { unlink(out) }
        _ = ScreenTmux.spawn(["tmux", "-S", socket, "display-message", "-p", "-t", "t", "#{pane_pid}"], output: out)
        return (try? String(contentsOfFile: out, encoding: .utf8)).flatMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
    }

    /// User plus system CPU time of `pid` so far, in clock ticks (from /proc).
    /// A fresh folder holding the demo session (`demo.tapedeck`) and an empty config folder
    /// (`config/tapedeck`, the tests' XDG_CONFIG_HOME); removed when the test ends.
    static func demoFolder(_ test: XCTestCase) throws -> (folder: String, session: String) {
        let folder = try Tapedeck.temporaryFolder(test).path
        let session = folder + "/demo.tapedeck"
        let result = try Tapedeck.run(["demo", session, "--samples", Tapedeck.packageRoot.appendingPathComponent("Samples").path])
        XCTAssertEqual(result.status, 0, result.stderr)
        try FileManager.default.createDirectory(atPath: folder + "/config/tapedeck", withIntermediateDirectories: true)
        return (folder, session)
    }

    static func cpuTicks(_ pid: Int32) -> Int? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // After the command name: state is field 3, utime 14 and stime 15 (1-based).
        guard fields.count > 13, let user = Int(fields[11]), let system = Int(fields[12]) else { return nil }
        return user + system
    }

    /// Ends the tmux server (and tapedeck with it).
    func kill() {
        guard !killed else { return }
        killed = true
        _ = ScreenTmux.spawn(["tmux", "-S", socket, "kill-server"], output: "/dev/null")
        unlink(socket)
    }

    static func quote(_ s: String) -> String {
        "'" + s.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    /// Runs a program to completion with an emptied signal mask and default signal actions,
    /// stdin from /dev/null, stdout to `output`, stderr discarded; returns its exit status.
    @discardableResult
    static func spawn(_ argv: [String], output: String) -> Int32 {
        var attr = posix_spawnattr_t()
        posix_spawnattr_init(&attr)
        defer { posix_spawnattr_destroy(&attr) }
        var empty = sigset_t()
        sigemptyset(&empty)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attr, &empty)
        posix_spawnattr_setsigdefault(&attr, &all)
        posix_spawnattr_setflags(&attr, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let cArgs = argv.map { strdup($0) } + [nil]
        defer { cArgs.forEach { free($0) } }
        var pid: pid_t = 0
        let rc = posix_spawnp(&pid, argv[0], &actions, &attr, cArgs, environ)
        guard rc == 0 else { return -1 }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return (status & 0x7f) == 0 ? (status >> 8) & 0xff : -1
    }
}
