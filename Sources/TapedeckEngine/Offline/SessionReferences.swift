import Foundation
import TapedeckCore
import TapedeckDSP
import TapedeckIO

/// Every file and folder a session plays from, wherever it lies: region files (audio and
/// MIDI), frozen renders, files chain nodes name (a sampler's sample, a SoundFont) and saved
/// plugin states. Exports and stems are checked against these so that nothing a chain or
/// region plays is ever written over (issue 24).
public enum SessionReferences {
    /// Absolute paths (not yet resolved) of everything `session` in `folder` refers to.
    /// A chain that does not parse refers to nothing here: the session loader has refused it.
    public static func paths(of session: Session, folder: SessionFolder) -> [String] {
        var out: [String] = []
        for track in session.tracks {
            out += track.regions.map { folder.absolutePath(of: $0.file) }
            if let frozen = track.frozen { out.append(folder.absolutePath(of: frozen.file)) }
        }
        let files = SessionNodeFiles(folder: folder.path)
        for text in SessionPluginStates.chainTexts(of: session) {
            guard let chain = try? Chain(parsing: text) else { continue }
            for entry in chain.entries {
                for setting in entry.texts {
                    if case .success(let path) = files.resolve(setting.value) { out.append(path) }
                }
            }
            out += chain.stateReferences.map { folder.pluginStateFolder + "/" + $0 }
        }
        return out
    }

    /// Why writing the export `output` (a file, or a stems folder when `isFolder`) could
    /// destroy part of `session`: the session's own folders, or any file it refers to.
    public static func exportProblem(_ output: String, session: Session, folder: SessionFolder, isFolder: Bool = false) -> String? {
        folder.exportProblem(output, session: session, isFolder: isFolder, referenced: paths(of: session, folder: folder))
    }
}
