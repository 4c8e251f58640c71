import TapedeckCore

/// Reads a track as users name it on the command line: a 1-based number or a track's name.
enum TrackSelector {
    /// The index of the track `text` names in `session`; a usage error names what is wrong.
    static func index(of text: String, in session: Session, command: String) throws(UsageError) -> Int {
        if let n = Int(text) {
            guard n >= 1, n <= session.tracks.count else {
                throw UsageError("\(command): track \(n) does not exist (the session has \(session.tracks.count) tracks)")
            }
            return n - 1
        }
        guard let i = session.tracks.firstIndex(where: { $0.name == text }) else {
            throw UsageError("\(command): no track named '\(text)'")
        }
        return i
    }
}
