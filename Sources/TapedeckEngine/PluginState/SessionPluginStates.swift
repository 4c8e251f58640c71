import Foundation
import TapedeckCore
import TapedeckDSP
import TapedeckIO

/// Plugin state and a session on disk: which chains a session holds, saving the state of a
/// running chain into the session, and removing state folders nothing refers to any more.
///
/// The order a host follows when it saves (control thread): for every live chain,
/// ``ChainInstance/capturingState(in:)`` with ``TapedeckIO/SessionFolder/pluginStateFolder``;
/// put each returned chain's text into the session; save the session; then
/// ``removeUnreferenced(in:)``.
public enum SessionPluginStates {
    /// Deletes the state folders in `folder`'s plugin-state folder that neither the saved
    /// session nor its backup refers to; returns their names. Call it after a save. When a
    /// chain in either file cannot be read, nothing is deleted (a state might be lost).
    @discardableResult
    public static func removeUnreferenced(in folder: SessionFolder) -> [String] {
        var chains: [Chain] = []
        for path in [folder.sessionFile, folder.backupFile] {
            guard let data = FileManager.default.contents(atPath: path) else { continue }
            guard let session = try? SessionFolder.decode(data, path: path) else { return [] }
            // The file just read is the edge: its chains are read once, as every owner reads them.
            for slot in SessionChains(session).allSlots {
                guard let chain = slot.value else { return [] }
                chains.append(chain)
            }
        }
        return PluginStateFolder.removeUnreferenced(in: folder.pluginStateFolder, keeping: chains)
    }
}
