import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The signal that asked the screen to end (0 while none has). Set from a signal handler,
/// so it is a lock-free atomic.
private let stopSignal = Atomic<Int32>(0)

/// The screen's loop: read the engine ~30 times a second while the transport moves, block on
/// the keyboard for up to 250 ms when idle, and draw only frames that changed.
public enum ScreenApp {
    /// Input timeout while playing, recording or exporting (about 30 frames a second).
    public static let movingTimeoutMilliseconds = 33
    /// Input timeout when idle: long, so an idle screen costs next to no CPU.
    public static let idleTimeoutMilliseconds = 250

    /// Runs the screen on the terminal until the user quits, input closes or a signal
    /// (SIGINT, SIGTERM, SIGHUP) arrives; the terminal is restored on every one of those
    /// paths. `services` (the control socket, the session manager) are served between keys.
    /// Returns the exit status: 0, or 128 + the signal.
    public static func run(model: ScreenModel, theme: Theme, allowColor: Bool, startupMessages: [String],
                           services: [ScreenService] = []) -> Int32 {
        guard let curses = Curses() else {
            return -1
        }
        defer { curses.end() }
        installStopHandlers()
        curses.apply(theme: theme, allowColor: allowColor)
        let glyphs: Glyphs = curses.isUTF8 ? .unicode : .ascii
        if let first = startupMessages.first {
            model.say(first + (startupMessages.count > 1 ? " (+\(startupMessages.count - 1) more)" : ""), error: true)
        }
        var lastTick = -1.0
        // After a key, ncurses may hold more of a burst: the next wait does not block.
        var keysPending = false
        while !model.shouldQuit {
            let signal = stopSignal.load(ordering: .relaxed)
            if signal != 0 { model.link.stop(); return 128 + signal }
            let now = MonotonicClock.seconds()
            if model.isMoving || now - lastTick >= Double(idleTimeoutMilliseconds) / 1000 * 0.9 {
                model.tick(nowSeconds: now)
                lastTick = now
            }
            let size = curses.size
            curses.draw(ScreenRenderer.render(model, height: size.height, width: size.width, glyphs: glyphs))
            var timeout = model.isMoving ? movingTimeoutMilliseconds : idleTimeoutMilliseconds
            if !services.isEmpty {
                // Wait for a key or a service together, then serve and read without waiting.
                if !keysPending && waitForInput(services: services, milliseconds: timeout) == .closed {
                    model.link.stop()
                    return 0
                }
                for s in services { s.service(model) }
                timeout = 0
            }
            let event = curses.read(timeoutMilliseconds: timeout)
            if case .key = event { keysPending = true } else { keysPending = false }
            switch event {
            case .key(let key):
                if !Layout(height: size.height, width: size.width).fits && key != .char("q") { continue }
                if !Layout(height: size.height, width: size.width).fits { model.perform(.quit); continue }
                model.handle(key)
            case .resize, .timeout:
                continue
            case .closed:
                model.link.stop()
                return 0
            }
        }
        return 0
    }

    private enum Wait { case ready, closed }

    /// Polls the keyboard and the services' descriptors for up to `milliseconds`; `.closed`
    /// when the keyboard's input is gone.
    private static func waitForInput(services: [ScreenService], milliseconds: Int) -> Wait {
        var fds = [pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0)] + services.flatMap(\.pollDescriptors)
        guard poll(&fds, nfds_t(fds.count), Int32(milliseconds)) > 0 else { return .ready }
        // The screen runs on a terminal: one that hangs up is gone.
        return fds[0].revents & Int16(POLLHUP | POLLNVAL | POLLERR) != 0 ? .closed : .ready
    }

    private static func installStopHandlers() {
        for sig in [SIGINT, SIGTERM, SIGHUP] {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { sig in stopSignal.store(sig, ordering: .relaxed) }
            sigemptyset(&action.sa_mask)
            action.sa_flags = 0 // no SA_RESTART: the wait for a key ends at once
            sigaction(sig, &action, nil)
        }
        // Test harnesses start us with signals blocked; unblock the ones we handle.
        var set = sigset_t()
        sigemptyset(&set)
        for sig in [SIGINT, SIGTERM, SIGHUP, SIGWINCH] { sigaddset(&set, sig) }
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
    }
}
