import Foundation
import Synchronization
import TapedeckCore
import TapedeckDSP
import TapedeckIO

/// Every file and folder a session plays from, wherever it lies: region files (audio and
/// MIDI), frozen renders, files chain nodes name (a sampler's sample, a SoundFont) and saved
/// plugin states. Every write is checked against these (``WriteGuard``) so that nothing a
/// chain or region plays is ever written over (issues 24 and 40).
public enum SessionReferences {
    /// Absolute paths (not yet resolved) of everything `session` in `folder` refers to, its
    /// chains as `chains` read them (the owner's; without one they are read here, once).
    /// A chain that does not parse refers to nothing here: the session loader has refused it.
    public static func paths(of session: Session, folder: SessionFolder, chains: SessionChains? = nil) -> [String] {
        var out: [String] = []
        for track in session.tracks {
            out += track.regions.map { folder.absolutePath(of: $0.file) }
            if let frozen = track.frozen { out.append(folder.absolutePath(of: frozen.file)) }
        }
        return out + chainPaths(of: kept(chains, session), folder: folder)
    }

    /// `chains` brought up to `session`, or the session's chains read once, here.
    private static func kept(_ chains: SessionChains?, _ session: Session) -> SessionChains {
        var chains = chains ?? SessionChains()
        chains.update(to: session)
        return chains
    }

    /// The files and plugin-state folders `chains` (a session's, up to it) name, absolute.
    static func chainPaths(of chains: SessionChains, folder: SessionFolder) -> [String] {
        var out: [String] = []
        let files = SessionNodeFiles(folder: folder.path)
        for slot in chains.allSlots {
            guard let chain = slot.value else { continue }
            for entry in chain.entries {
                for setting in entry.texts {
                    if case .success(let path) = files.resolve(setting.value) { out.append(path) }
                }
            }
            out += chain.stateReferences.map { folder.pluginStateFolder + "/" + $0 }
        }
        return out
    }

    /// `session` in `folder` as ``WriteGuard`` protects it: its folder, its region files and
    /// frozen renders, and every file its chains name, as `chains` read them (the owner's;
    /// without one they are read here, once for the operation).
    public static func protected(_ session: Session, folder: SessionFolder, chains: SessionChains? = nil) -> ProtectedSession {
        // The regions and frozen renders are the protected session's own (each file once).
        ProtectedSession(folder: folder, session: session, referenced: chainPaths(of: kept(chains, session), folder: folder))
    }

    /// The session at `path` on disk as ``WriteGuard`` protects it, when it can be read (an
    /// open session another Tapedeck holds: see ``WriteGuard/openSessions``). Read again only
    /// when its `session.json` changed: one export checks several paths, and a session at the
    /// limits takes a good part of a second to read.
    public static func protected(path: String) -> ProtectedSession? {
        let folder = SessionFolder(path: path)
        let stamp = FileStamp.of(path: folder.sessionFile)
        if let stamp, let kept = cache.withLock({ $0[folder.path] }), kept.stamp == stamp { return kept.protected }
        guard let session = folder.loadQuietly() else { return nil }
        let made = protected(session, folder: folder)
        if let stamp { cache.withLock { $0[folder.path] = (stamp, made) } }
        return made
    }

    private static let cache = Mutex<[String: (stamp: FileStamp, protected: ProtectedSession)]>([:])
}
