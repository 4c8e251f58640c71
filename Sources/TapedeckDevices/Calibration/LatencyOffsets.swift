import TapedeckIO
import TapedeckEngine
#if canImport(Glibc)
import Glibc
#endif

/// The per-device round-trip corrections `tapedeck calibrate` measured: frames the true
/// round trip is longer (or, negative, shorter) than what ALSA reports. Recorded audio is
/// placed using ``DeviceConfiguration/roundTripLatencyFrames`` plus this offset.
///
/// Kept in `$XDG_CONFIG_HOME/tapedeck/latency` (default `~/.config/tapedeck/latency`), one
/// `device = frames` line per device, `#` comments allowed. A device name may itself hold
/// `=` (`filetap:IN=…,OUT=…`), so the number is what follows the **last** `=`.
public struct LatencyOffsets: Equatable, Sendable {
    /// Extra frames per ALSA device name.
    public var frames: [String: Int64]

    /// Creates a set of offsets.
    public init(frames: [String: Int64] = [:]) { self.frames = frames }

    /// Why the file could not be read or written; one line for the user.
    public struct Problem: Error, Equatable, Sendable, CustomStringConvertible {
        /// The file concerned.
        public var path: String
        /// What is wrong.
        public var reason: String
        public var description: String { "\(path): \(reason)" }
    }

    /// `$XDG_CONFIG_HOME/tapedeck/latency`, or `$HOME/.config/tapedeck/latency`.
    public static var defaultPath: String {
        if let x = getenv("XDG_CONFIG_HOME"), x[0] != 0 { return String(cString: x) + "/tapedeck/latency" }
        let home = getenv("HOME").map { String(cString: $0) } ?? "."
        return home + "/.config/tapedeck/latency"
    }

    /// The offset for `device` (0 when it was never calibrated).
    public func offset(forDevice device: String) -> Int64 { frames[device] ?? 0 }

    /// Reads `path`; a missing file is an empty set (nothing calibrated yet). A line that is
    /// not `device = frames` throws, naming the file and line.
    public static func load(path: String = defaultPath) throws(Problem) -> LatencyOffsets {
        guard let text = try readText(path) else { return LatencyOffsets() }
        return try parse(text, path: path)
    }

    /// Parses the file's text; `path` only names it in errors.
    public static func parse(_ text: String, path: String) throws(Problem) -> LatencyOffsets {
        var out = LatencyOffsets()
        for (i, raw) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            let line = raw.trimmingWhitespace
            if line.isEmpty || line.hasPrefix("#") { continue }
            guard let eq = line.lastIndex(of: "="), let value = Int64(line[line.index(after: eq)...].trimmingWhitespace) else {
                throw Problem(path: path, reason: "line \(i + 1): '\(line)' is not 'device = frames'")
            }
            let device = line[..<eq].trimmingWhitespace
            guard !device.isEmpty else { throw Problem(path: path, reason: "line \(i + 1): no device name before '='") }
            guard abs(value) <= 10_000_000 else { throw Problem(path: path, reason: "line \(i + 1): \(value) frames is not a latency") }
            out.frames[device] = value
        }
        return out
    }

    /// The file's text: a comment, then the devices in name order.
    public var text: String {
        var lines = ["# Tapedeck: round-trip latency beyond what ALSA reports, in frames, per device.",
                     "# Written by 'tapedeck calibrate'; 'device = frames'."]
        for name in frames.keys.sorted() { lines.append("\(name) = \(frames[name]!)") }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Writes the offsets to `path` atomically (temporary file, fsync, rename), creating the
    /// folders on the way.
    public func save(path: String = LatencyOffsets.defaultPath) throws(Problem) {
        for name in frames.keys where name.contains("\n") || name.trimmingWhitespace != name || name.isEmpty {
            throw Problem(path: path, reason: "device name '\(name)' cannot be stored (empty, newline or outer spaces)")
        }
        // Through the one write guard: a config path that leads into a session (its history,
        // its session.json…) is refused before any folder is made.
        do { try WriteGuard.check(path, as: "calibrate", kind: .file) } catch { throw Problem(path: path, reason: error.reason) }
        try LatencyOffsets.makeFolders(forFile: path)
        // Created exclusively and never through a link, like every file Tapedeck writes.
        let temporary = path + ".tmp-\(getpid())"
        do { try DurableFile.writeNew(Array(text.utf8), to: temporary) } catch {
            throw Problem(path: path, reason: error.reason)
        }
        guard rename(temporary, path) == 0 else {
            let why = String(cString: strerror(errno))
            unlink(temporary)
            throw Problem(path: path, reason: "cannot write: \(why)")
        }
    }

    /// Loads `path`, sets `device`'s offset and saves it back, keeping the other devices.
    public static func store(_ frames: Int64, forDevice device: String, path: String = defaultPath) throws(Problem) {
        var all = try load(path: path)
        all.frames[device] = frames
        try all.save(path: path)
    }

    private static func readText(_ path: String) throws(Problem) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ENOENT { return nil }
            throw Problem(path: path, reason: "cannot read: \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n < 0 { throw Problem(path: path, reason: "cannot read: \(String(cString: strerror(errno)))") }
            if n == 0 { break }
            bytes += chunk[0..<n]
            if bytes.count > 1 << 20 { throw Problem(path: path, reason: "too large for a latency file") }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func makeFolders(forFile path: String) throws(Problem) {
        var folder = ""
        let parts = path.split(separator: "/", omittingEmptySubsequences: false).dropLast()
        for (i, part) in parts.enumerated() {
            folder += (i == 0 ? "" : "/") + part
            if folder.isEmpty { continue }
            if mkdir(folder, 0o755) != 0 && errno != EEXIST {
                throw Problem(path: path, reason: "cannot create folder \(folder): \(String(cString: strerror(errno)))")
            }
        }
    }
}

extension StringProtocol {
    /// Without leading and trailing spaces and tabs (and a Windows line end's `\r`).
    var trimmingWhitespace: String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(self[first...last])
    }
}
