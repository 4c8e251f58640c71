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
    /// sees either the old file or the new one, never half of one.
    static func writeAtomically(_ bytes: [UInt8], to path: String) throws(AudioFileError) {
        let tmp = path + ".tmp"
        let fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            let code = errno
            throw AudioFileError(path: path, reason: "cannot create: \(createProblem(path: path, code: code))")
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
        if close(fd) != 0 && failure == 0 { failure = errno }
        if failure == 0 && rename(tmp, path) != 0 { failure = errno }
        if failure != 0 {
            unlink(tmp)
            throw AudioFileError(path: path, reason: "cannot write: \(errnoText(failure))")
        }
    }

    /// Why a file at `path` could not be created, in words a user can act on.
    static func createProblem(path: String, code: Int32, fallback: String? = nil) -> String {
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
