import Foundation
import TapedeckEngine

/// `record --mirror DIR`: the folder every take is copied into as it records. Refused before
/// anything records when it cannot be: no such folder, not a folder, not writable, or (for a
/// take outside a session) a file of the take's name already there.
enum MirrorOption {
    /// `text` as a folder path (a trailing slash dropped), or the reason it cannot be a mirror.
    static func check(_ text: String, command: String = "record") throws(UsageError) -> String {
        guard !text.isEmpty else { throw UsageError("\(command): --mirror needs a folder") }
        let folder = text.count > 1 && text.hasSuffix("/") ? String(text.dropLast()) : text
        var st = stat()
        guard stat(folder, &st) == 0 else {
            throw UsageError("\(command): --mirror \(text): \(String(cString: strerror(errno))) (the mirror folder must exist: it is usually another disk, mounted)")
        }
        guard (st.st_mode & S_IFMT) == S_IFDIR else { throw UsageError("\(command): --mirror \(text): not a folder") }
        guard access(folder, W_OK | X_OK) == 0 else { throw UsageError("\(command): --mirror \(text): \(String(cString: strerror(errno)))") }
        return folder
    }

    /// Refuses a take outside a session (`--out F`) whose mirror copy's name (or first
    /// piece's, when split) is already in `mirror`: a mirror never writes over a file.
    static func checkFree(out: String, mirror: String, split: Bool) throws(UsageError) {
        let file = split ? TakePieces.firstPieceName(out) : out
        let name = file.split(separator: "/").last.map(String.init) ?? file
        var st = stat()
        if lstat(mirror + "/" + name, &st) == 0 {
            throw UsageError("record: --mirror: \(mirror)/\(name) is already there (a mirror never writes over a file; give another --out or folder)")
        }
    }
}
