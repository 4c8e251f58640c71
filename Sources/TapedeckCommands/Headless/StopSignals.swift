import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The last stop signal received (0: none). A signal handler may only touch an atomic.
let receivedStopSignal = Atomic<Int32>(0)

/// SIGUSR1 count (a signal handler may only touch lock-free atomics).
private let receivedKeepSignals = Atomic<Int>(0)

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

    /// Also counts SIGUSR1 (retroactive capture: "keep what I just played").
    static func installKeepSignal() {
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { _ in receivedKeepSignals.add(1, ordering: .relaxed) }
        sigemptyset(&action.sa_mask)
        action.sa_flags = SA_RESTART
        sigaction(SIGUSR1, &action, nil)
    }

    /// How many SIGUSR1 have arrived since the start.
    static var keepRequests: Int { receivedKeepSignals.load(ordering: .relaxed) }
}
