import TapedeckCore
#if canImport(Glibc)
import Glibc
#endif

/// Where an export may write: never into the session's own working folders, never over a
/// file the session plays.
extension SessionFolder {
    /// Why writing the export `output` (a file, or a stems folder when `isFolder`) could
    /// destroy part of `session`, or nil when it cannot: inside `audio/`, `peaks/` or
    /// `cache/` (links resolved), or the very file of one of its regions.
    public func exportProblem(_ output: String, session: Session, isFolder: Bool = false) -> String? {
        let folderOfOutput = isFolder ? output : parentFolder(of: output)
        if let dir = SessionFolder.resolved(folderOfOutput) {
            for (name, protected) in [("audio", audioFolder), ("peaks", peaksFolder), ("cache", path + "/cache")] {
                if let p = SessionFolder.resolved(protected), SessionFolder.isInside(dir, p) {
                    return "is inside the session's \(name)/ folder, where Tapedeck keeps its recordings and their data; export to exports/ or elsewhere"
                }
            }
        }
        guard !isFolder, let target = FileStamp.identity(of: output) else { return nil }
        for (t, track) in session.tracks.enumerated() {
            for region in track.regions where FileStamp.identity(of: absolutePath(of: region.file)) == target {
                return "is \(region.file.terminalSafe), the audio of a region on track \(t + 1); export never replaces a recording"
            }
        }
        return nil
    }
}

extension FileStamp {
    /// The device and inode of the file `path` leads to, which two names of one file share.
    public static func identity(of path: String) -> [UInt64]? {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        return [UInt64(st.st_dev), UInt64(st.st_ino)]
    }
}
