import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The last stop signal received (0: none). A signal handler may only touch an atomic.
let receivedStopSignal = Atomic<Int32>(0)

/// SIGINT, SIGTERM and SIGHUP finish a take properly instead of killing the process.
enum StopSignals {
    /// Installs the handlers; SIGXFSZ and SIGPIPE are ignored so a file-size limit or a
    /// closed pipe becomes an error we can report instead of a silent death.
    static func install() {
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { sig in receivedStopSignal.store(sig, ordering: .relaxed) }
        sigemptyset(&action.sa_mask)
        action.sa_flags = 0
        for sig in [SIGINT, SIGTERM, SIGHUP] { sigaction(sig, &action, nil) }
        signal(SIGXFSZ, SIG_IGN)
        signal(SIGPIPE, SIG_IGN)
    }

    /// Whether a stop was asked for.
    static var requested: Bool { receivedStopSignal.load(ordering: .relaxed) != 0 }
}
