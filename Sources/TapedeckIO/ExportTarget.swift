import Foundation
import TapedeckCore
#if canImport(Glibc)
import Glibc
#endif

/// Where an export may write: never into the session's own working folders, never over a
/// file the session plays.
extension SessionFolder {
    /// Why writing the export `output` (a file, or a stems folder when `isFolder`) could
    /// destroy part of `session`, or nil when it cannot: inside one of the session's folders
    /// of recordings, their data, samples, MIDI or plugin state (links resolved), the very
    /// file of one of its regions or of `referenced` (every file a chain names, by its
    /// device and inode, so `..` and links are seen through), inside a referenced folder (a
    /// plugin state), or, for stems, the folder one of those files is in.
    public func exportProblem(_ output: String, session: Session, isFolder: Bool = false, referenced: [String] = []) -> String? {
        let folderOfOutput = isFolder ? output : parentFolder(of: output)
        let resolvedFolder = SessionFolder.resolved(folderOfOutput)
        if let dir = resolvedFolder {
            for (name, protected) in [("audio", audioFolder), ("peaks", peaksFolder), ("cache", path + "/cache"),
                                      ("samples", path + "/samples"), ("midi", path + "/midi"), ("plugins", pluginStateFolder)] {
                if let p = SessionFolder.resolved(protected), SessionFolder.isInside(dir, p) {
                    return "is inside the session's \(name)/ folder, where Tapedeck keeps its recordings and the files it plays; export to exports/ or elsewhere"
                }
            }
        }
        // Each distinct file is looked at once (the first region that plays it names it):
        // a session at the region limit plays 100,000 regions from a few files, and a stat
        // and a description for every region was a third of an export's start.
        var all: [(file: String, what: () -> String)] = []
        var seen: Set<String> = []
        for (t, track) in session.tracks.enumerated() {
            for region in track.regions {
                let file = absolutePath(of: region.file)
                guard seen.insert(file).inserted else { continue }
                all.append((file, { "\(region.file.terminalSafe), the \(region.isMIDI ? "MIDI" : "audio") of a region on track \(t + 1)" }))
            }
        }
        for file in referenced where seen.insert(file).inserted {
            all.append((file, { "\(file.terminalSafe), a file the session plays" }))
        }
        if isFolder {
            // Stems are named after tracks: a folder holding a played file could be written over.
            guard let dir = resolvedFolder else { return nil }
            var parents: Set<String> = []
            for (file, what) in all where parents.insert(parentFolder(of: file)).inserted {
                if let parent = SessionFolder.resolved(parentFolder(of: file)), parent == dir {
                    return "holds \(what()); stems never go beside what the session plays"
                }
            }
            return nil
        }
        let target = FileStamp.identity(of: output)
        let resolvedOutput = resolvedFolder.map { $0 + "/" + ((output as NSString).lastPathComponent) }
        for (file, what) in all {
            if let target, FileStamp.identity(of: file) == target {
                return "is \(what()); export never replaces what the session plays"
            }
            if let out = resolvedOutput, FileSystem.isFolder(file), let p = SessionFolder.resolved(file), SessionFolder.isInside(out, p) {
                return "is inside \(what()); export never writes there"
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
