import Foundation
import Synchronization
import TapedeckCore

/// An export running on its own thread; the screen polls its progress each frame.
public final class ExportJob: Sendable {
    /// Where the job is.
    public enum Status: Equatable, Sendable {
        /// Working; fraction done 0…1.
        case running(Double)
        /// Finished; the host's summary line.
        case done(String)
        /// Failed; why.
        case failed(String)
    }

    private let state = Mutex<Status>(.running(0))

    /// The current status. Any thread.
    public var status: Status { state.withLock { $0 } }

    /// Starts `hook` on a new thread.
    public init(session: Session, folderPath: String, words: [String],
                hook: @escaping @Sendable (Session, String, [String], @Sendable (Double) -> Void) throws -> String) {
        let thread = Thread { [self] in
            ThreadName.setCurrent("tapedeck-export")
            do {
                let summary = try hook(session, folderPath, words) { fraction in
                    self.state.withLock { $0 = .running(min(1, max(0, fraction))) }
                }
                self.state.withLock { $0 = .done(summary) }
            } catch {
                self.state.withLock { $0 = .failed("\(error)") }
            }
        }
        thread.start()
    }
}
