import Foundation
import Synchronization

/// Threads that share a freewheeling period's independent work (each track's disk reads,
/// each track's chain): the calling thread and `workerCount − 1` helpers take the next index
/// until none is left, so a heavy track does not leave a core idle. The parallel rendering
/// the old export renderer had, kept as an option of the one engine (issue 25).
///
/// Freewheel only: waking and waiting for the helpers takes semaphores, which a real device's
/// audio thread must never do; the engine has these only when it renders offline.
/// Dedicated threads rather than `DispatchQueue.concurrentPerform`, which on Linux ran the
/// iterations on one core when called from a queue's block (measured with the export's old
/// renderer).
final class FreewheelWorkers: @unchecked Sendable {
    private var helpers: [Thread] = []
    private let go: [DispatchSemaphore]
    private let finished = DispatchSemaphore(value: 0)
    private let next = Atomic<Int>(0)
    private let quitting = Atomic<Bool>(false)
    // Written before the helpers are woken, read by them after (the semaphore orders it).
    private var count = 0
    private var job: (Int) -> Void = { _ in }

    /// Starts `workerCount − 1` helper threads. Call ``stop()`` when done: they hold this object.
    init(workerCount: Int) {
        go = (1..<max(workerCount, 1)).map { _ in DispatchSemaphore(value: 0) }
        for k in 0..<go.count {
            let thread = Thread { [self] in helperLoop(k) }
            thread.name = "tapedeck freewheel \(k + 1)"
            thread.stackSize = 1 << 20
            helpers.append(thread)
            thread.start()
        }
    }

    /// Runs `job` for every index below `count`, spread over the threads; returns when all
    /// are done. One caller at a time.
    func run(count: Int, _ job: @escaping (Int) -> Void) {
        guard count > 1, !go.isEmpty else {
            for i in 0..<max(count, 0) { job(i) }
            return
        }
        self.count = count
        self.job = job
        next.store(0, ordering: .relaxed)
        let woken = min(go.count, count - 1)
        for k in 0..<woken { go[k].signal() }
        work()
        for _ in 0..<woken { finished.wait() }
        self.job = { _ in }
    }

    /// Ends the helper threads (waits for them). Safe to call twice.
    func stop() {
        guard !quitting.exchange(true, ordering: .acquiringAndReleasing) else { return }
        for s in go { s.signal() }
        for _ in go { finished.wait() }
        helpers.removeAll()
    }

    private func work() {
        while true {
            let i = next.wrappingAdd(1, ordering: .acquiringAndReleasing).oldValue
            guard i < count else { return }
            job(i)
        }
    }

    private func helperLoop(_ k: Int) {
        while true {
            go[k].wait()
            if quitting.load(ordering: .acquiring) {
                finished.signal()
                return
            }
            work()
            finished.signal()
        }
    }
}
