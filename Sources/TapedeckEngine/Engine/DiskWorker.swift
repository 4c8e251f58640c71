import Synchronization

/// What the playback reader and the capture writer share: a thread started once, asleep on
/// a signal the audio thread gives (``WakeSignal``, one atomic increment), asked to quit and
/// joined on the control thread.
final class DiskWorker: @unchecked Sendable {
    /// The signal the thread sleeps on.
    let wake = WakeSignal()
    private let quitFlag = Atomic<Bool>(false)
    private var thread: RealtimeThread?

    /// Whether the thread should end. Disk thread.
    var quitting: Bool { quitFlag.load(ordering: .acquiring) }

    /// Starts `body` on a thread named `name` (`nice` below 0 where allowed). Control thread.
    func start(name: String, nice: Int32 = 0, _ body: @escaping () -> Void) -> Bool {
        let t = RealtimeThread(name: name) { _ in body() }
        guard t.start(nice: nice) else { return false }
        thread = t
        return true
    }

    /// Asks the thread to end, wakes it and waits for it. Control thread.
    func stop() {
        quitFlag.store(true, ordering: .releasing)
        wake.signal()
        thread?.join()
        thread = nil
    }
}
