import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The signal that asked the screen to end (0 while none has). Set from a signal handler,
/// so it is a lock-free atomic.
private let stopSignal = Atomic<Int32>(0)

/// The screen's loop. It sleeps until something it shows can have changed: a key, a
/// request on a socket (the control socket, OSC, the session manager), the engine's activity
/// signal (``ScreenWake``: a meter, the transport, an xrun, MIDI), or the time a change is
/// due (a message's end, a meter's held peak falling). While the transport moves it follows
/// it about 30 times a second. A frame is drawn only when it differs from the last.
public enum ScreenApp {
    /// Input timeout while playing, recording or exporting (about 30 frames a second).
    public static let movingTimeoutMilliseconds = 33
    /// While a meter shows a level: the engine publishes levels ten times a second.
    public static let metersTimeoutMilliseconds = 100
    /// With nothing signalled: a look now and then at what no one signals (the disk's free
    /// space, a device gone); a frame is drawn only if something changed.
    public static let idleTimeoutMilliseconds = 2000

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
        let wake = ScreenWake()
        defer { wake?.stop() }
        // An import still copying when the screen closes takes back what it wrote.
        defer { model.cancelJobs() }
        installStopHandlers()
        curses.apply(theme: theme, allowColor: allowColor)
        let glyphs: Glyphs = curses.isUTF8 ? .unicode : .ascii
        if let first = startupMessages.first {
            model.say(first + (startupMessages.count > 1 ? " (+\(startupMessages.count - 1) more)" : ""), error: true)
        }
        var lastTick = -1.0
        // Something happened (a key, a request, the engine): look again and draw.
        var dirty = true
        // After a key, ncurses may hold more of a burst: the next wait does not block.
        var keysPending = false
        while !model.shouldQuit {
            let signal = stopSignal.load(ordering: .relaxed)
            if signal != 0 { model.link.stop(); return 128 + signal }
            let now = MonotonicClock.seconds()
            let due = now - lastTick >= Double(timeout(model, now: now)) / 1000 * 0.9
            if dirty || due || model.isMoving {
                model.tick(nowSeconds: now)
                lastTick = now
                let size = curses.size
                curses.draw(ScreenRenderer.render(model, height: size.height, width: size.width, glyphs: glyphs))
                dirty = false
            }
            // A service may be due sooner (OSC feedback's next frame).
            let waitMilliseconds = keysPending ? 0 : services.compactMap(\.dueInMilliseconds).reduce(timeout(model, now: MonotonicClock.seconds()), min)
            switch waitForInput(services: services, wake: wake, milliseconds: waitMilliseconds) {
            case .closed:
                model.link.stop()
                return 0
            case .engine:
                wake?.drain()
                dirty = true
            case .ready:
                // A key or a request on a socket: what is shown may change.
                dirty = true
            case .timeout:
                break
            }
            if !services.isEmpty {
                for s in services { s.service(model) }
            }
            let event = curses.read(timeoutMilliseconds: 0)
            if case .key = event { keysPending = true } else { keysPending = false }
            switch event {
            case .key(let key):
                dirty = true
                let size = curses.size
                if !Layout(height: size.height, width: size.width).fits && key != .char("q") { continue }
                if !Layout(height: size.height, width: size.width).fits { model.perform(.quit); continue }
                model.handle(key)
            case .resize:
                dirty = true
            case .timeout:
                break
            case .closed:
                model.link.stop()
                return 0
            }
        }
        return 0
    }

    /// How long the loop may sleep with nothing arriving: until the next change that is due.
    static func timeout(_ model: ScreenModel, now: Double) -> Int {
        if model.isMoving { return movingTimeoutMilliseconds }
        var limit = model.metersShowLevels ? metersTimeoutMilliseconds : idleTimeoutMilliseconds
        if let end = model.messageEndsAtSeconds {
            limit = min(limit, max(1, Int(((end - now) * 1000).rounded(.up)) + 5))
        }
        return limit
    }

    private enum Wait { case ready, engine, timeout, closed }

    /// Polls the keyboard, the engine's wake and the services' descriptors for up to
    /// `milliseconds`; `.closed` when the keyboard's input is gone.
    private static func waitForInput(services: [ScreenService], wake: ScreenWake?, milliseconds: Int) -> Wait {
        var fds = [pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0)]
        if let wake { fds.append(pollfd(fd: wake.descriptor, events: Int16(POLLIN), revents: 0)) }
        fds += services.flatMap(\.pollDescriptors)
        let ready = poll(&fds, nfds_t(fds.count), Int32(milliseconds))
        guard ready > 0 else { return .timeout }
        // The screen runs on a terminal: one that hangs up is gone.
        if fds[0].revents & Int16(POLLHUP | POLLNVAL | POLLERR) != 0 { return .closed }
        if wake != nil, fds[1].revents & Int16(POLLIN) != 0 { return .engine }
        return .ready
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

/// What the loop asks the model to know how long it may sleep.
extension ScreenModel {
    /// When the message shown goes (an error stays until the next message).
    public var messageEndsAtSeconds: Double? {
        guard let m = message, !m.isError else { return nil }
        return messageShownAtSeconds + ScreenModel.messageSeconds
    }

    /// Whether a meter shows a level or a held peak (above −80 dBFS): the screen then follows
    /// the engine's ten readings a second, and a held peak falls on time.
    public var metersShowLevels: Bool {
        func shows(_ r: MeterReading) -> Bool { r.peakDecibels > -80 || r.holdDecibels > -80 || r.rmsDecibels > -80 }
        return meters.contains { $0.contains(where: shows) } || masterMeters.contains(where: shows)
    }
}
