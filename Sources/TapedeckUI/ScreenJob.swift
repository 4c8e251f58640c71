import Foundation
import TapedeckCore
import Synchronization
import TapedeckIO

/// Slow work the screen hands to a worker thread (an import's copying of audio files): the UI
/// thread keeps drawing, playing and answering the control socket meanwhile, shows the
/// job's progress line, and can cancel it (the cancel key). When the work is done its result
/// lands on the UI thread, as one edit (issue 42: nothing slow on the UI thread).
public struct ScreenWork: Sendable {
    /// What the progress line calls it (`importing long.wav`).
    public var label: String
    /// The slow part, on the worker thread: reports progress 0…1, asks `cancelled` often and
    /// throws once it says yes (or on failure, an error whose description is one line).
    public var work: @Sendable (_ progress: @Sendable (Double) -> Void, _ cancelled: @Sendable () -> Bool) throws -> Void
    /// The fast part, on the UI thread once `work` finished: the edit itself, made on the
    /// session the screen serves it.
    public var land: @Sendable (_ served: SessionStore.Served) -> (status: Int32, out: String, err: String)
    /// Takes back what `work` made when it never lands (failed or cancelled). UI thread.
    public var discard: @Sendable () -> Void

    /// Creates work.
    public init(label: String,
                work: @escaping @Sendable (_ progress: @Sendable (Double) -> Void, _ cancelled: @Sendable () -> Bool) throws -> Void,
                land: @escaping @Sendable (SessionStore.Served) -> (status: Int32, out: String, err: String),
                discard: @escaping @Sendable () -> Void = {}) {
        self.label = label
        self.work = work
        self.land = land
        self.discard = discard
    }
}

/// ``ScreenWork/work`` running on its own thread; the screen polls it each frame.
public final class ScreenJob: Sendable {
    /// Where the job is.
    public enum Status: Equatable, Sendable {
        /// Working; fraction done 0…1.
        case running(Double)
        /// The work is done: its result waits to land.
        case done
        /// Failed; why, in one line.
        case failed(String)
        /// Stopped by the user; whatever it made is taken back.
        case cancelled
    }

    /// What the progress line calls it.
    public let label: String
    private let state = Mutex<Status>(.running(0))
    private let cancelAsked = Atomic<Bool>(false)

    /// The current status. Any thread.
    public var status: Status { state.withLock { $0 } }

    /// Asks the work to stop (it stops at its next block). Any thread.
    public func cancel() { cancelAsked.store(true, ordering: .releasing) }

    /// Whether ``cancel()`` was asked.
    public var isCancelled: Bool { cancelAsked.load(ordering: .acquiring) }

    /// Starts `work` (``ScreenWork/work``) on a new thread.
    public init(label: String, work: @escaping @Sendable (_ progress: @Sendable (Double) -> Void, _ cancelled: @Sendable () -> Bool) throws -> Void) {
        self.label = label
        let thread = Thread { [self] in
            ThreadName.setCurrent("tapedeck-job")
            do {
                try work({ fraction in
                    self.state.withLock { if case .running = $0 { $0 = .running(min(1, max(0, fraction))) } }
                }, { self.isCancelled })
                self.state.withLock { $0 = self.isCancelled ? .cancelled : .done }
            } catch {
                self.state.withLock { $0 = self.isCancelled ? .cancelled : .failed("\(error)") }
            }
        }
        thread.start()
    }
}
