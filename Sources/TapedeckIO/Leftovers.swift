import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What a killed command leaves behind under names that carry its process id
/// (`.x.flac.normalize-PID/`, `.NAME.partial-PID.tapedeck`): the next run removes those whose
/// process is gone, and leaves alone those of a process still running, which still owns them.
public enum Leftovers {
    /// Whether a process with this id is running (one we may not signal still is).
    public static func isAlive(_ pid: pid_t) -> Bool {
        pid > 0 && (kill(pid, 0) == 0 || errno == EPERM)
    }

    /// Removes every entry of `folder` named `prefix` + a process id + `suffix` whose process
    /// is no longer running (not this process's own). Best effort: what cannot be removed
    /// stays, and the caller's own name never collides with it (it carries the caller's pid).
    public static func removeDead(in folder: String, prefix: String, suffix: String = "") {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder.isEmpty ? "." : folder) else { return }
        for name in names where name.hasPrefix(prefix) && name.hasSuffix(suffix) && name.count > prefix.count + suffix.count {
            let middle = name.dropFirst(prefix.count).dropLast(suffix.count)
            guard let pid = pid_t(middle), pid != getpid(), !isAlive(pid) else { continue }
            try? FileManager.default.removeItem(atPath: (folder.isEmpty ? "." : folder) + "/" + name)
        }
    }
}
