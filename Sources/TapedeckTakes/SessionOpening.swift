import TapedeckCore
import TapedeckIO

/// Opening a session for a front-end that plays or records it — the screen, `record`, `play`
/// — done once, in one order, after the caller took the lock if it will change the session:
/// the takes a crash left marked recovered onto their tracks (so they are heard and never
/// named twice), then the session read and checked, with what reading it had to say.
public struct OpenedSession {
    /// The session as read, recovered takes included.
    public let session: Session
    /// One line per recovered take (`recovered take audio/x.wav`), and why a recovery failed.
    public let recovered: [String]
    /// What reading the session said (e.g. that the backup was opened), when the caller
    /// collects such notices (``SessionFolder/collectNotices()``); else they were printed.
    public let notices: [String]

    /// Recovers `folder`'s unfinished takes and reads it. A session that cannot be read throws
    /// its one line; a recovery that fails is a line in ``recovered``, unless
    /// `recoveryMustSucceed` (a recorder, which must not name a take twice): then it throws.
    public static func read(_ folder: SessionFolder, recoveryMustSucceed: Bool = false) throws -> OpenedSession {
        var lines: [String] = []
        do {
            for r in try TakeRecovery.recover(session: folder) {
                lines.append("recovered take \(r.file)" + (r.problem.map { ": \($0)" } ?? ""))
            }
        } catch {
            if recoveryMustSucceed { throw error }
            lines.append("cannot recover unfinished takes: \(error)")
        }
        // (Notices are printed as they come, unless the caller collects them: the screen.)
        let session = try folder.load()
        return OpenedSession(session: session, recovered: lines, notices: SessionFolder.takeNotices())
    }
}
