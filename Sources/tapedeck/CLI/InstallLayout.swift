import Foundation

/// Where Tapedeck's shipped data lives: `PREFIX/share/tapedeck/` beside the installed
/// binary's `PREFIX/bin/` (found from the running binary, so an install anywhere — including
/// a DESTDIR or a Debian package — finds its own files), then the source tree, for builds run
/// from it.
enum InstallLayout {
    /// Candidate folders for `share/tapedeck/NAME` (e.g. `themes`), most specific first;
    /// `sourceName` is the same data's folder in the source tree (`Themes`).
    static func dataFolders(_ name: String, sourceName: String) -> [String] {
        var folders: [String] = []
        if let exe = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            let prefix = URL(fileURLWithPath: exe).deletingLastPathComponent().deletingLastPathComponent()
            folders.append(prefix.appendingPathComponent("share/tapedeck/" + name).path)
        }
        let sourceRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        folders.append(sourceRoot.appendingPathComponent(sourceName).path)
        return folders
    }
}
