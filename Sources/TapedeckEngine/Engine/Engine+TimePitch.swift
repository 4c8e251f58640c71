import Foundation
import Synchronization
import TapedeckCore
import TapedeckDSP

/// The mix's time-pitch processors, built on a thread of their own. Rubber Band's stretchers
/// take seconds of CPU to build and warm up (the first of a process measures their start
/// delays too); built on the control thread, the first speed change froze the screen and its
/// control socket for 4–10 s. Now the control thread only starts the build and, once it is
/// done, hands the processors to the audio thread, which meanwhile plays at 1×.
final class TimePitchBuild: @unchecked Sendable {
    private let state = Mutex<(started: Bool, built: MixTimePitch?)>((false, nil))
    private let done = DispatchSemaphore(value: 0)
    private var thread: Thread?
    /// Settings sent before the processors were ready: sent again once they are.
    var pending: TimePitchSettings?
    /// Whether the processors have been handed to the audio thread.
    var installed = false
    /// Settings held back until the stretchers' start delay at their speed is measured (a
    /// machine's first run: see ``StretchDelayTable``); the speed before them plays meanwhile.
    var awaitingDelay: TimePitchSettings?

    /// Starts building with `make` unless a build is under way or done. An `eager` build (a
    /// front-end preparing ahead, before anyone asked for a speed) runs at SCHED_IDLE, on CPU
    /// time nothing else wants, so that opening the screen costs the music nothing; once a
    /// speed is asked for (`eager` false), a build under way is raised to normal scheduling at
    /// nice 10 (SCHED_IDLE alone may never run on a busy machine). Control thread.
    func start(eager: Bool, _ make: @escaping @Sendable () -> MixTimePitch) {
        let first = state.withLock { s -> Bool in
            if s.started { return false }
            s.started = true
            return true
        }
        guard first else {
            if !eager { urge() }
            return
        }
        let idle = eager
        let t = Thread { [self] in
            ThreadName.setCurrent("tapedeck-tpbuild")
            // Nice values are per thread on Linux: this one only.
            _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 10)
            handle.withLock { h in
                h = pthread_self()
                if idle && !urged {
                    var param = sched_param()
                    pthread_setschedparam(pthread_self(), 5 /* SCHED_IDLE */, &param)
                }
            }
            let built = make()
            handle.withLock { $0 = nil }
            state.withLock { $0.built = built }
            done.signal()
        }
        t.stackSize = 1 << 20
        thread = t
        t.start()
    }

    /// The building thread while it runs (to raise it), and whether it was raised.
    private let handle = Mutex<pthread_t?>(nil)
    private var urged = false

    /// Raises a build started at SCHED_IDLE to normal scheduling (nice 10 stays). Control thread.
    private func urge() {
        handle.withLock { h in
            urged = true
            guard let h else { return }
            var param = sched_param()
            pthread_setschedparam(h, 0 /* SCHED_OTHER */, &param)
        }
    }

    /// The built processors, once (nil while building or when taken). Control thread.
    func take() -> MixTimePitch? { state.withLock { s in defer { s.built = nil }; return s.built } }

    /// Waits up to `timeoutSeconds` for the build to end; true when it has. Control thread.
    func wait(timeoutSeconds: Double) -> Bool {
        guard state.withLock({ $0.started }) else { return false }
        if state.withLock({ $0.built != nil }) || installed { return true }
        urge()  // someone waits for it now
        guard done.wait(timeout: .now() + timeoutSeconds) == .success else { return false }
        done.signal()  // for the next waiter
        return true
    }

    /// Waits for a build under way to end (the engine is closing), raised first so that an
    /// early build on idle time cannot hold a quitting screen up on a busy machine. Control
    /// thread.
    func join() {
        guard state.withLock({ $0.started }), !installed else { return }
        urge()
        done.wait()
        done.signal()
    }
}

extension Engine {
    /// Speed, mode and pitch, live. The first change from plain 1× starts building the mix's
    /// stretcher and varispeed in the background (one stereo pair whatever the track count;
    /// Rubber Band's engine as ``EngineOptions/liveStretchQuality`` says); until they are
    /// ready the transport goes on at 1× and ``isTimePitchPending`` says so, then the change
    /// is heard (``completeTimePitch()``). Never waits. Control thread.
    public func setTimePitch(_ requested: TimePitchSettings) {
        // Front-ends validate what users type; the engine still keeps to the range its rings
        // and processors are sized for (a NaN or out-of-range speed would trap converting).
        var settings = requested
        settings.speed = settings.speed.isFinite
            ? min(max(settings.speed, TimePitchSettings.minimumSpeed), TimePitchSettings.maximumSpeed) : 1
        settings.pitchSemitones = settings.pitchSemitones.isFinite
            ? min(max(settings.pitchSemitones, -TimePitchSettings.maximumPitchSemitones), TimePitchSettings.maximumPitchSemitones) : 0
        if !settings.isIdentity { buildTimePitch(eager: false, speed: settings.speed) }
        completeTimePitch()
        if settings.speed > ringSpeed {
            // Faster than the rings were built for: every track gets a voice whose ring holds
            // the mix's look-ahead at this speed (the old ones play until the new have data).
            ringSpeed = settings.speed
            if prepared, let spec = graphs.last?.spec { try? apply(spec) }
        }
        // Only a change the processors must carry waits for them (1× with no shift needs none).
        timePitchBuild.pending = timePitchBuild.installed || settings.isIdentity ? nil : settings
        timePitchBuild.awaitingDelay = nil
        if timePitchBuild.installed && !delayIsMeasured(for: settings) {
            timePitchBuild.awaitingDelay = settings
            return
        }
        send(.timePitch(speed: settings.speed, varispeed: settings.mode == .varispeed,
                        pitchSemitones: settings.pitchSemitones, serial: nextSerial()))
    }

    /// Whether the stretchers know their start delay at `settings`' speed, so that it starts
    /// where the playhead says (asking the measuring thread for it first when not). Varispeed
    /// and plain 1× use no stretcher. Control thread.
    private func delayIsMeasured(for settings: TimePitchSettings) -> Bool {
        guard !settings.isIdentity, settings.mode != .varispeed, let mix = core.mixTimePitch else { return true }
        return mix.hasMeasuredDelays(speed: settings.speed)
    }

    /// Starts building the mix's time-pitch processors in the background, if not built or
    /// under way: a front-end that expects speed changes calls it early (the screen does at
    /// start) so that the first one is heard at once. It builds on idle CPU time only until a
    /// speed is asked for. Control thread.
    public func prepareTimePitch() { buildTimePitch(eager: true, speed: 1) }

    private func buildTimePitch(eager: Bool, speed: Double) {
        let rate = configuration.sampleRate, period = configuration.periodFrames, quality = options.liveStretchQuality
        let varispeedOnly = options.varispeedOnly
        let core = self.core
        timePitchBuild.start(eager: eager) { [unowned(unsafe) core] in
            MixTimePitch(sampleRate: rate, periodFrames: period, quality: quality, startSpeed: speed,
                         varispeedOnly: varispeedOnly) { [unowned(unsafe) core] into, frameCount, seq in
                core.renderTimelineMix(into: into, frameCount: frameCount, seq: seq)
            }
        }
    }

    /// Hands built processors to the audio thread and sends the settings that waited for
    /// them. Cheap; the transport's snapshot calls it. Control thread.
    public func completeTimePitch() {
        if let waiting = timePitchBuild.awaitingDelay {
            if delayIsMeasured(for: waiting) {
                timePitchBuild.awaitingDelay = nil
                send(.timePitch(speed: waiting.speed, varispeed: waiting.mode == .varispeed,
                                pitchSemitones: waiting.pitchSemitones, serial: nextSerial()))
            }
            return
        }
        guard !timePitchBuild.installed, let built = timePitchBuild.take() else { return }
        core.mixTimePitch = built
        shared.timePitchReady.store(true, ordering: .releasing)
        timePitchBuild.installed = true
        if let settings = timePitchBuild.pending {
            timePitchBuild.pending = nil
            // Changed again while the processors were built: maybe to a speed not measured yet.
            guard delayIsMeasured(for: settings) else { timePitchBuild.awaitingDelay = settings; return }
            send(.timePitch(speed: settings.speed, varispeed: settings.mode == .varispeed,
                            pitchSemitones: settings.pitchSemitones, serial: nextSerial()))
        }
    }

    /// Whether a speed or pitch change waits for its processors to be built, or for their
    /// start delay at its speed to be measured.
    public var isTimePitchPending: Bool {
        (timePitchBuild.pending != nil && !timePitchBuild.installed) || timePitchBuild.awaitingDelay != nil
    }

    /// Waits (up to `timeoutSeconds`) until a waiting speed or pitch change can be heard, and
    /// hands it over: for a command that starts playing at a speed, which should be heard from
    /// its first frame. True when nothing waits any more. Control thread.
    @discardableResult
    public func waitForTimePitch(timeoutSeconds: Double = 120) -> Bool {
        guard isTimePitchPending else { return true }
        let deadline = Date().addingTimeInterval(timeoutSeconds)
        if !timePitchBuild.installed {
            guard timePitchBuild.wait(timeoutSeconds: timeoutSeconds) else { return false }
        }
        completeTimePitch()
        // A delay being measured takes tens of milliseconds (the measuring thread does the
        // asked speed next).
        while timePitchBuild.awaitingDelay != nil && Date() < deadline {
            usleep(5_000)
            completeTimePitch()
        }
        return !isTimePitchPending
    }
}
