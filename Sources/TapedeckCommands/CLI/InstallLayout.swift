import Foundation

/// Where Tapedeck's shipped data lives: `PREFIX/share/tapedeck/` beside the installed
/// binary's `PREFIX/bin/` (found from the running binary, so an install anywhere — including
/// a DESTDIR or a Debian package — finds its own files), or, for a binary built and run inside
/// the source tree (under its `.build/`), the source tree's own folders.
enum InstallLayout {
    /// Candidate folders for `share/tapedeck/NAME` (e.g. `themes`), most specific first;
    /// `sourceName` is the same data's folder in the source tree (`Themes`).
    static func dataFolders(_ name: String, sourceName: String) -> [String] {
        guard let exe = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") else { return [] }
        let prefix = URL(fileURLWithPath: exe).deletingLastPathComponent().deletingLastPathComponent()
        var folders = [prefix.appendingPathComponent("share/tapedeck/" + name).path]
        // An installed copy never looks into the tree it was built from.
        let sourceRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        if exe.hasPrefix(sourceRoot.appendingPathComponent(".build").path) {  // .build/ or .build-*/
            folders.append(sourceRoot.appendingPathComponent(sourceName).path)
        }
        return folders
    }
}
