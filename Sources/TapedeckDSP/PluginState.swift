import Foundation

/// Plugin state kept with a session: one folder per saved state, inside the session's
/// plugin-state folder (`SESSION/plugins/`), referred to from chain entries as `@state=NAME`.

/// A node whose state is more than its parameter values (an impulse response, a sample, a
/// plugin's internal settings), saved with the session and restored when it is opened.
public protocol StatefulNode: Node {
    /// Saves the node's current state as a new folder inside `stateFolder` and returns its
    /// name, or nil when the node has nothing beyond its parameters to keep. Off the audio
    /// thread, while the audio thread may be processing the node.
    func saveState(into stateFolder: String) throws(PluginStateError) -> String?
}

/// A state that could not be saved or read: the folder and why.
public struct PluginStateError: Error, Equatable, CustomStringConvertible, Sendable {
    /// The state folder or file.
    public var path: String
    /// What went wrong.
    public var reason: String

    /// Creates the error.
    public init(path: String, reason: String) {
        self.path = path
        self.reason = reason
    }

    /// `path: reason`.
    public var description: String { "\(path): \(reason)" }
}

/// The session's plugin-state folder: naming new states and removing those no chain needs.
public enum PluginStateFolder {
    /// A folder name in `folder` that is not taken: `BASE-N.lv2` with the smallest N from 1.
    /// Names are never reused while the old folder exists, so a session saved earlier keeps
    /// pointing at the state it was saved with.
    public static func newName(in folder: String, base: String) -> String {
        let safe = String(base.lowercased().map { $0.isLetter || $0.isNumber || $0 == "-" ? $0 : "-" }.prefix(40))
        var n = 1
        while FileManager.default.fileExists(atPath: "\(folder)/\(safe)-\(n).lv2") { n += 1 }
        return "\(safe)-\(n).lv2"
    }

    /// Deletes every state folder in `folder` that none of `chains` refers to. Call it after
    /// the session that holds `chains` has been saved, so that a crash in between leaves
    /// extra folders, never a session pointing at a deleted one. Returns the names removed.
    @discardableResult
    public static func removeUnreferenced(in folder: String, keeping chains: [Chain]) -> [String] {
        let referenced = Set(chains.flatMap(\.stateReferences))
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return [] }
        var removed: [String] = []
        for name in names.sorted() where !referenced.contains(name) {
            if (try? FileManager.default.removeItem(atPath: "\(folder)/\(name)")) != nil { removed.append(name) }
        }
        return removed
    }
}
