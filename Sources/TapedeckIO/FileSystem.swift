#if canImport(Glibc)
import Glibc
#endif

/// Size and modification time of a file: enough to notice that it changed since a peak file
/// (or anything else derived from it) was made.
public struct FileStamp: Equatable, Sendable {
    /// Size in bytes.
    public var sizeBytes: Int64
    /// Modification time in nanoseconds since 1970.
    public var modificationNanoseconds: Int64

    /// Creates a stamp from known values.
    public init(sizeBytes: Int64, modificationNanoseconds: Int64) {
        self.sizeBytes = sizeBytes
        self.modificationNanoseconds = modificationNanoseconds
    }

    /// The stamp of the regular file at `path`, or nil when it is missing or not a file.
    public static func of(path: String) -> FileStamp? {
        var st = stat()
        guard stat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return nil }
        let nanos = Int64(st.st_mtim.tv_sec) &* 1_000_000_000 &+ Int64(st.st_mtim.tv_nsec)
        return FileStamp(sizeBytes: Int64(st.st_size), modificationNanoseconds: nanos)
    }
}

/// Small POSIX helpers, so the target needs no Foundation. Every failure becomes an
/// ``AudioFileError`` naming the file.
enum FileSystem {
    /// Whether anything (file, folder, link target) exists at `path`.
    static func exists(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0
    }

    /// Whether anything at all is at `path`, a dangling link included (`lstat`).
    static func isPresent(_ path: String) -> Bool {
        var st = stat()
        return lstat(path, &st) == 0
    }

    /// Whether `path` is a folder.
    static func isFolder(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR
    }

    /// The text of `errno`, e.g. `No such file or directory`.
    static func errnoText(_ code: Int32 = errno) -> String {
        String(cString: strerror(code))
    }

    /// Reads a whole (small) file. Refuses files above `limitBytes` so a wrong path cannot
    /// make us allocate gigabytes.
    static func readAll(path: String, limitBytes: Int64) throws(AudioFileError) -> [UInt8] {
        if let why = RegularFile.refusal(path: path) { throw AudioFileError(path: path, reason: why) }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw AudioFileError(path: path, reason: "cannot open: \(errnoText())") }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw AudioFileError(path: path, reason: "cannot read: \(errnoText())") }
        if (st.st_mode & S_IFMT) == S_IFDIR { throw AudioFileError(path: path, reason: "is a folder, not a file") }
        let size = Int64(st.st_size)
        guard size <= limitBytes else { throw AudioFileError(path: path, reason: "is too large (\(size) bytes)") }
        var bytes = [UInt8](repeating: 0, count: Int(size))
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeMutableBytes { raw in
                read(fd, raw.baseAddress! + done, raw.count - done)
            }
            if n < 0 {
                if errno == EINTR { continue }
                throw AudioFileError(path: path, reason: "cannot read: \(errnoText())")
            }
            if n == 0 { break }
            done += n
        }
        if done < bytes.count { bytes.removeSubrange(done...) }
        return bytes
    }

    /// Reads at most the first `count` bytes of `path` (fewer when the file is shorter);
    /// nil when it cannot be opened.
    static func readPrefix(path: String, count: Int) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let n = bytes.withUnsafeMutableBytes { raw in read(fd, raw.baseAddress! + done, raw.count - done) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            done += n
        }
        bytes.removeSubrange(done...)
        return bytes
    }

    /// Writes `bytes` to `path` through `path.tmp` and a rename, so a reader (or a crash)
    /// sees either the old file or the new one, never half of one. Not fsynced: for files
    /// that can be rebuilt (peaks); see ``DurableFile`` for those that cannot.
    static func writeAtomically(_ bytes: [UInt8], to path: String) throws(AudioFileError) {
        let tmp = path + ".tmp"
        do { try DurableFile.writeNew(bytes, to: tmp, sync: false) } catch {
            throw AudioFileError(path: path, reason: error.reason)
        }
        if rename(tmp, path) != 0 {
            let code = errno
            unlink(tmp)
            throw AudioFileError(path: path, reason: "cannot write: \(errnoText(code))")
        }
    }

    /// Opens a new file for writing: created exclusively (`O_CREAT|O_EXCL`), never through a
    /// link (`O_NOFOLLOW`), so it cannot be a file someone else is writing, nor one a planted
    /// link points at. Returns the descriptor, or minus the errno.
    static func createExclusive(_ path: String, mode: mode_t = 0o644) -> Int32 {
        let fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)
        return fd >= 0 ? fd : -errno
    }

    /// Why a file at `path` could not be created, in words a user can act on.
    static func createProblem(path: String, code: Int32, fallback: String? = nil) -> String {
        if code == EEXIST {
            var st = stat()
            let isLink = lstat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFLNK
            return isLink ? "a link is in its place (Tapedeck never writes through one)" : "it already exists"
        }
        if code == ELOOP { return "a link is in its place (Tapedeck never writes through one)" }
        if code == ENOSPC || code == EDQUOT { return DurableFile.writeProblem(code) }
        let dir = parentFolder(of: path)
        if !exists(dir) { return "folder \(dir) does not exist" }
        if !isFolder(dir) { return "\(dir) is not a folder" }
        if access(dir, W_OK) != 0 { return "permission denied in \(dir)" }
        if isFolder(path) { return "it is a folder" }
        if let fallback { return fallback }
        return errnoText(code)
    }
}

/// The folder holding `path` (`.` for a bare name).
func parentFolder(of path: String) -> String {
    guard let slash = path.lastIndex(of: "/") else { return "." }
    let dir = String(path[..<slash])
    return dir.isEmpty ? "/" : dir
}

/// The last component of `path`.
func lastComponent(of path: String) -> String {
    guard let slash = path.lastIndex(of: "/") else { return path }
    return String(path[path.index(after: slash)...])
}

/// Files that must survive a crash or a power cut whole: written under a temporary name,
/// fsynced, renamed into place, and the folder fsynced. Every temporary file is created
/// exclusively and never through a link.
public enum DurableFile {
    /// Creates `path` afresh holding `bytes`, fsynced unless `sync` is false. A file left at
    /// `path` by a process that died is removed first (it is a temporary name that only the
    /// session's lock holder writes); a link there is removed, never followed.
    public static func writeNew(_ bytes: [UInt8], to path: String, sync: Bool = true) throws(AudioFileError) {
        unlink(path)
        let fd = FileSystem.createExclusive(path)
        guard fd >= 0 else {
            throw AudioFileError(path: path, reason: "cannot create: \(FileSystem.createProblem(path: path, code: -fd))")
        }
        var done = 0
        var failure: Int32 = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { raw in write(fd, raw.baseAddress! + done, raw.count - done) }
            if n < 0 {
                if errno == EINTR { continue }
                failure = errno
                break
            }
            done += n
        }
        if failure == 0 && sync && fsync(fd) != 0 { failure = errno }
        if close(fd) != 0 && failure == 0 { failure = errno }
        if failure != 0 {
            unlink(path)
            throw AudioFileError(path: path, reason: "cannot write: \(writeProblem(failure))")
        }
    }

    /// Replaces `path` with `bytes` atomically and durably: `path.tmp`, fsync, rename, fsync
    /// of the folder. At every moment `path` is the old file or the new one.
    public static func replace(_ path: String, with bytes: [UInt8]) throws(AudioFileError) {
        let tmp = path + ".tmp"
        try writeNew(bytes, to: tmp)
        if rename(tmp, path) != 0 {
            let code = errno
            unlink(tmp)
            throw AudioFileError(path: path, reason: "cannot replace: \(FileSystem.errnoText(code))")
        }
        syncFolder(parentFolder(of: path))
    }

    /// Fsyncs a folder, so renames and new names in it survive a power cut.
    public static func syncFolder(_ path: String) {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if fd >= 0 { fsync(fd); close(fd) }
    }

    /// `errno` in words, with a full disk called that.
    public static func writeProblem(_ code: Int32) -> String {
        code == ENOSPC || code == EDQUOT ? "the disk is full (\(FileSystem.errnoText(code)))" : FileSystem.errnoText(code)
    }
}

/// Fault injection for the crash tests: `TAPEDECK_TEST_KILL_AT=POINT` makes the process kill
/// itself with SIGKILL when it reaches `POINT` (e.g. `save-rename`, just before a save's
/// rename; `save-renamed`, just after), exactly as a power cut or `kill -9` would there.
public enum TestHooks {
    /// Dies by SIGKILL when the environment asks for `point`; otherwise does nothing.
    public static func killIfAsked(at point: String) {
        guard let wanted = getenv("TAPEDECK_TEST_KILL_AT"), String(cString: wanted) == point else { return }
        kill(getpid(), SIGKILL)
    }
}

/// Files Tapedeck reads from a user's path must be regular files: opening a FIFO waits for
/// a writer for ever, and a device or socket is no audio file either.
public enum RegularFile {
    /// Why `path` is refused (e.g. `is a FIFO (named pipe), not a file`), or nil when it is
    /// a regular file, a folder, or missing (those have their own messages). Uses `stat`
    /// only, so it never opens (and never blocks on) anything.
    public static func refusal(path: String) -> String? {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        switch st.st_mode & S_IFMT {
        case S_IFREG, S_IFDIR: return nil
        case S_IFIFO: return "is a FIFO (named pipe), not a file: refused (reading it would wait for a writer)"
        case S_IFCHR: return "is a character device, not a file: refused"
        case S_IFBLK: return "is a block device, not a file: refused"
        case S_IFSOCK: return "is a socket, not a file: refused"
        default: return "is not a regular file: refused"
        }
    }
}
