import Foundation
import Synchronization
import TapedeckCore

/// A track freezing on its own thread (an offline render can take a while); the screen polls
/// it each frame and puts the render on the track when it is done.
public final class FreezeJob: Sendable {
    /// Where the job is.
    public enum Status: Sendable {
        /// Working; fraction done 0…1.
        case running(Double)
        /// Finished: the render, and the host's summary line.
        case done(FrozenAudio, String)
        /// Failed; why.
        case failed(String)
    }

    private let state = Mutex<Status>(.running(0))

    /// The current status. Any thread.
    public var status: Status { state.withLock { $0 } }

    /// Starts `hook` for track `track` of `session` (saved in `folderPath`) on a new thread.
    public init(session: Session, folderPath: String, track: Int,
                hook: @escaping @Sendable (Session, String, Int, @Sendable (Double) -> Void) throws -> (FrozenAudio, String)) {
        let thread = Thread { [self] in
            ThreadName.setCurrent("tapedeck-freeze")
            do {
                let (frozen, summary) = try hook(session, folderPath, track) { fraction in
                    self.state.withLock { $0 = .running(min(1, max(0, fraction))) }
                }
                self.state.withLock { $0 = .done(frozen, summary) }
            } catch {
                self.state.withLock { $0 = .failed("\(error)") }
            }
        }
        thread.start()
    }
}
