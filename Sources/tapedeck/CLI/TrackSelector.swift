import TapedeckCore

/// Reads a track as users name it on the command line: a 1-based number or a track's name,
/// matched ignoring case; an unknown name suggests the nearest one.
enum TrackSelector {
    /// The index of the track `text` names in `session`; a usage error names what is wrong.
    static func index(of text: String, in session: Session, command: String) throws(UsageError) -> Int {
        do { return try session.trackIndex(named: text) } catch {
            throw UsageError("\(command): \(error.description)")
        }
    }
}
