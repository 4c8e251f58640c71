import CSndfile
import Glibc

/// Opening a writer's file and naming why a write failed.
extension AudioFileWriter {
    /// The descriptor for a new file at `path`, created as `creation` says.
    static func openFile(_ path: String, _ creation: Creation) throws(AudioFileError) -> Int32 {
        if creation == .reserved {
            let fd = open(path, O_RDWR | O_TRUNC | O_NOFOLLOW | O_CLOEXEC)
            guard fd >= 0 else {
                let code = errno
                throw AudioFileError(path: path, reason: "cannot open: \(FileSystem.createProblem(path: path, code: code))")
            }
            return fd
        }
        if creation == .replacingLeftover { unlink(path) }
        let fd = FileSystem.createExclusive(path)
        guard fd >= 0 else {
            throw AudioFileError(path: path, reason: "cannot create: \(FileSystem.createProblem(path: path, code: -fd))")
        }
        return fd
    }

    static func writeFailureReason(handle: OpaquePointer) -> String {
        let err = errno
        if err == ENOSPC || err == EDQUOT { return DurableFile.writeProblem(err) }
        if err == EFBIG { return "the file size limit was reached" }
        let message = String(cString: sf_strerror(handle))
        if err != 0 { return "write failed: \(String(cString: strerror(err))) (\(message))" }
        return "write failed: \(message)"
    }
}
