import Foundation
import TapedeckCore
import TapedeckRemote

/// A job beside the screen: waiting its turn, or running (``ScreenJob``), and what the UI
/// thread does when it ends.
final class QueuedJob {
    let label: String
    let work: @Sendable (_ progress: @Sendable (Double) -> Void, _ cancelled: @Sendable () -> Bool) throws -> Void
    /// Told how the work ended (done, failed or cancelled). UI thread.
    let ended: (ScreenJob.Status) -> Void
    var running: ScreenJob?

    init(label: String, work: @escaping @Sendable (_ progress: @Sendable (Double) -> Void, _ cancelled: @Sendable () -> Bool) throws -> Void,
         ended: @escaping (ScreenJob.Status) -> Void) {
        self.label = label
        self.work = work
        self.ended = ended
    }
}

extension ScreenModel {
    /// Runs `work` on a worker thread, one job at a time (the rest wait their turn), and calls
    /// `ended` on the UI thread when it ends. The screen keeps drawing, playing and
    /// answering meanwhile, and shows the job's progress line (``jobLine``). UI thread.
    func startJob(_ label: String,
                  work: @escaping @Sendable (_ progress: @Sendable (Double) -> Void, _ cancelled: @Sendable () -> Bool) throws -> Void,
                  ended: @escaping (ScreenJob.Status) -> Void) {
        jobs.append(QueuedJob(label: label, work: work, ended: ended))
        serviceJobs()
    }

    /// Each frame: the running job, once it ended, lands (or says why not) and the next
    /// starts. UI thread.
    func serviceJobs() {
        while let first = jobs.first {
            guard let running = first.running else {
                first.running = ScreenJob(label: first.label, work: first.work)
                return
            }
            let status = running.status
            if case .running = status { return }
            jobs.removeFirst()
            first.ended(status)
        }
    }

    /// Waits (up to `timeoutSeconds`) until every job has ended and landed: for tests that
    /// drive the model without its loop. UI thread.
    func finishJobs(timeoutSeconds: Double = 30) {
        let deadline = MonotonicClock.seconds() + timeoutSeconds
        while !jobs.isEmpty && MonotonicClock.seconds() < deadline {
            serviceJobs()
            if !jobs.isEmpty { usleep(2000) }
        }
    }

    /// The cancel key: stops the running job (what it made is taken back) and drops the
    /// ones waiting. UI thread.
    func cancelJob() {
        guard !jobs.isEmpty else {
            say("nothing to cancel: no import is in progress")
            return
        }
        let waiting = jobs.dropFirst()
        jobs = Array(jobs.prefix(1))
        jobs.first?.running?.cancel()
        for job in waiting { job.ended(.cancelled) }
        serviceJobs()
    }

    /// Ends every job (the screen is closing): each is cancelled and its worker given up to
    /// `seconds` to take back what it wrote. UI thread.
    public func cancelJobs(waitingSeconds seconds: Double = 2) {
        let all = jobs
        jobs = []
        for job in all { job.running?.cancel() }
        let deadline = MonotonicClock.seconds() + seconds
        for job in all {
            while let r = job.running, case .running = r.status, MonotonicClock.seconds() < deadline { usleep(5000) }
            job.ended(.cancelled)
        }
    }

    /// The running job's progress line (`importing long.wav  42%  (ctrl-x cancels; 1 more
    /// waiting)`), nil when none runs.
    public var jobLine: String? {
        guard let first = jobs.first else { return nil }
        var percent = 0
        if let r = first.running, case .running(let f) = r.status { percent = Int((f * 100).rounded(.down)) }
        let more = jobs.count > 1 ? "; \(jobs.count - 1) more waiting" : ""
        return "\(first.label)  \(percent)%  (\(keyName(.cancel)) cancels\(more))"
    }

    /// A typed command handed to the screen whose slow part (`work`: an import's copying) runs
    /// on a worker: answered through `answer` once it has landed on the UI thread as the
    /// command's one undo step, or once it failed or was cancelled. UI thread.
    func handOver(_ work: ScreenWork, command: TypedCommand, from who: String,
                  answer: @escaping (RemoteReply) -> Void) {
        let asker = who.replacingOccurrences(of: "tapedeck ctl", with: "tapedeck \(command.name.terminalSafe)")
        startJob("\(asker): \(work.label)", work: work.work) { [unowned self] status in
            switch status {
            case .done, .running:
                answer(handleCommand(command, from: who, running: work.land))
            case .failed(let why):
                work.discard()
                say("\(asker): \(why)", error: true)
                answer(ScreenModel.commandReply(status: 1, out: "", err: "tapedeck: \(why)\n"))
            case .cancelled:
                work.discard()
                let text = "\(command.name.terminalSafe) cancelled on the screen; nothing imported"
                say("\(asker): \(text)")
                answer(ScreenModel.commandReply(status: 1, out: "", err: "tapedeck: \(text)\n"))
            }
        }
    }
}
