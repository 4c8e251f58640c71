import Foundation
import TapedeckCore
import TapedeckEngine

extension Transport {
    /// The transport now, for a front-end to draw; also finishes a recording pass that ended
    /// (its takes then wait in ``collectFinishedTakes()``) and reports, once each, the
    /// problems and news since the last snapshot. Control thread; cheap.
    public func snapshot() -> TransportSnapshot {
        engine.completeTimePitch()
        completeBackgroundBuild()
        let status = self.status
        let newEvents = engine.drainEvents()
        events += newEvents
        report(newEvents)
        noteIncidents(newEvents)
        notices += engine.device.drainNotices()
        // A command the engine refused on a full queue: said at once, never waited on.
        if let refused = engine.drainRefusals() { errors.append(refused) }
        followLatency()
        pollMIDI()
        pollAutomation(status)
        watchDisk(status)
        noteFirstFrame()
        finishPassIfEnded(force: false)
        if engine.isStarted && !status.deviceRunning && !saidDeviceStop {
            saidDeviceStop = true
            errors.append("\(deviceName) stopped: \(status.lastError ?? "the device is gone")")
        }
        if status.realtime == false && !saidRealtime && !isOffline {
            saidRealtime = true
            notices.append(Transport.realtimeAdvice)
        }
        // A track or an effect making NaN: said when it starts, then at most every 5 s.
        let now = Transport.monotonicSeconds()
        if status.nonFiniteSamples > saidNonFinite && now - saidNonFiniteAt >= 5 {
            let n = status.nonFiniteSamples - saidNonFinite
            notices.append("\(n) NaN/infinite sample\(n == 1 ? "" : "s") (from a file or an effect) played as silence")
            saidNonFiniteAt = now
            saidNonFinite = status.nonFiniteSamples
        } else if status.nonFiniteSamples < saidNonFinite {
            saidNonFinite = status.nonFiniteSamples  // a rebuilt graph counts afresh
        }
        watchHostStart(status, now: now)
        var snap = TransportSnapshot(state: state(status), positionFrame: status.positionFrame, xrunCount: status.xrunCount,
                                     dspLoad: status.dspLoad, deviceName: deviceName, isOffline: isOffline)
        let meters = engine.meters()
        snap.trackLevels = session.tracks.indices.map { t in
            if let input = meters.inputs[t] { return meterHolds.levels(id: 2 * t + 1, readings: input, now: now) }
            return meterHolds.levels(id: 2 * t, readings: t < meters.tracks.count ? meters.tracks[t] : [], now: now)
        }
        snap.outputLevels = meterHolds.levels(id: -1, readings: meters.master, now: now)
        // The engine meters the bus after the master fader, which is what the device gets.
        snap.masterLevels = snap.outputLevels
        snap.loudness = engine.loudness()
        let free = diskFreeBytes(measured: status.diskFreeBytes >= 0 ? status.diskFreeBytes : nil)
        snap.diskFreeBytes = free
        snap.diskSecondsLeft = free.map { diskSecondsLeft(freeBytes: $0, status: status) }
        snap.isListening = options.retroSeconds != nil && !listening.isEmpty && pass == nil && engine.configuration.captureChannels > 0
        snap.timePitchPending = engine.isTimePitchPending
        snap.graphPending = isBuildingGraph
        snap.graphStretchProgress = graphStretchProgress
        snap.underrunFrames = status.underrunFrames
        snap.deviceStopped = engine.isStarted && !status.deviceRunning
        snap.droppedFrames = status.droppedFrames
        if let compensation = engine.delayCompensation {
            snap.stripOutputDelayFrames = compensation.outputDelayFrames
            snap.outputLatencyFrames = compensation.outputLatencyFrames
        }
        snap.outputChannelCount = engine.configuration.playbackChannels
        if engine.configuration.captureChannels > 0 { snap.roundTrip = latencyFollow.roundTrip }
        if !errors.isEmpty { snap.lastError = errors.joined(separator: "; ") }
        if !notices.isEmpty { snap.notice = notices.joined(separator: "; ") }
        errors = []
        notices = []
        return snap
    }

    /// What to tell a user whose audio thread was refused real-time priority.
    public static let realtimeAdvice = "audio runs without real-time priority (SCHED_FIFO was refused): allow it with an rtprio limit, e.g. '@audio - rtprio 95' in /etc/security/limits.d/audio.conf, and join the audio group"

    /// The takes finished since the last call, each handed over once; the front-end puts them
    /// on their tracks (``Session/place(_:onTrack:)``) and saves.
    public func collectFinishedTakes() -> [FinishedTake] {
        defer { finishedTakes = [] }
        return finishedTakes
    }

    /// A count-in at its record point whose shared transport has not rolled for half a
    /// second: said once a pass, as the clock stands still meanwhile. On JACK the transport
    /// rolls when every slow-sync client says it is ready, or at the server's sync timeout;
    /// the take then starts where the transport rolls from, as it should, only later. Seen on
    /// PipeWire's JACK 0.3.65: a client with no sync callback left "not ready", so the
    /// transport rolled at the timeout, 5 s after the count-in ended (TAPEDECK_JACK_TRACE:
    /// Tapedeck answered ready once and was not asked again; PipeWire's log named the client).
    func watchHostStart(_ status: EngineStatus, now: Double) {
        let counting = pass.map { $0.countInFrames > 0 && !$0.set.hasStarted && !$0.set.hasEnded } ?? false
        guard engine.followsHost, counting, status.transport == .starting else {
            hostWaitSince = nil
            if pass == nil { saidHostWait = false }
            return
        }
        guard let since = hostWaitSince else {
            hostWaitSince = now
            return
        }
        if !saidHostWait && now - since >= 0.5 {
            saidHostWait = true
            // Short enough for the screen's message line at 120 columns.
            notices.append("waiting for JACK's transport: another client is not ready "
                           + "(jackd2 rolls anyway after 10 s, PipeWire after 5 s)")
        }
    }

    /// The front-end's word for what the engine does.
    func state(_ status: EngineStatus) -> TransportState {
        guard status.transport != .stopped else { return .stopped }
        guard let pass else { return .playing }
        if pass.set.hasStarted || pass.set.hasEnded { return .recording }
        if pass.countInFrames > 0 { return .countIn }
        return pass.kind == .plain ? .recording : .preRoll
    }

    /// Late disk reads and lost input, told as they happen (device xruns show as a count).
    func report(_ events: [EngineEvent]) {
        var late: [Int: Int64] = [:]
        var lost: [Int: Int64] = [:]
        for e in events {
            switch e.kind {
            case .deviceXrun: break
            case .takeLatencyChanged:
                let ms = String(format: "%.1f", Double(e.frames) * 1000 / Double(max(engine.configuration.sampleRate, 1)))
                notices.append("track \(e.track + 1): the round trip changed while recording (\(e.previousFrames) → \(e.frames) frames, \(ms) ms); the take follows it from \(TimeText.clock(frames: e.frame, sampleRate: engine.configuration.sampleRate)) into it")
            case .playbackUnderrun: late[e.track, default: 0] += e.frames
            case .captureDropped: lost[e.track, default: 0] += e.frames
            case .hostStarted, .hostStopped, .hostLocated:
                // Tapedeck's own requests coming back are not news; another program's are.
                if e.external { notices.append(hostNews(e)) }
            }
        }
        for (track, frames) in late.sorted(by: { $0.key < $1.key }) {
            errors.append("track \(track + 1): \(frames) frames came late from disk and played as silence")
        }
        for (track, frames) in lost.sorted(by: { $0.key < $1.key }) {
            errors.append("track \(track + 1): the disk fell behind; \(frames) input frames lost (silence in the take)")
        }
    }

    /// Who moved the shared transport and where: `JACK transport: started by another program at 0:01.000 (1|1|0)`.
    func hostNews(_ e: EngineEvent) -> String {
        let at = session.tempoMap.place(ofFrame: e.frame)
        switch e.kind {
        case .hostStarted: return "JACK transport: started by another program at \(at)"
        case .hostStopped: return "JACK transport: stopped by another program at \(at)"
        default: return "JACK transport: moved to \(at) by another program"
        }
    }

    /// Free bytes where takes go: the writer's measurement while recording, else `statvfs`.
    func diskFreeBytes(measured: Int64?) -> Int64? {
        if let measured { return measured }
        var st = statvfs()
        guard statvfs(folder?.path ?? ".", &st) == 0 else { return nil }
        return Int64(st.f_bavail) * Int64(st.f_frsize)
    }


    static func monotonicSeconds() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}

/// Peak hold for the front-end's meters: the highest peak of the last two seconds (fed the
/// engine's "peak since the last reading", so no transient between snapshots is missed).
struct MeterHolds {
    struct Hold {
        var linear: Float = 0
        var since = 0.0
    }
    var holds: [Int: [Hold]] = [:]
    static let holdSeconds = 2.0

    /// The levels of meter `id` from its readings now.
    mutating func levels(id: Int, readings: [MeterReading], now: Double) -> [ChannelLevel] {
        var held = holds[id] ?? []
        if held.count != readings.count { held = Array(repeating: Hold(), count: readings.count) }
        var out: [ChannelLevel] = []
        for (c, r) in readings.enumerated() {
            let top = max(r.peakSinceLastRead, r.peak)
            if top >= held[c].linear || now - held[c].since > MeterHolds.holdSeconds {
                held[c] = Hold(linear: top, since: now)
            }
            out.append(ChannelLevel(peakDecibels: MeterHolds.decibels(r.peak), rmsDecibels: MeterHolds.decibels(r.rms),
                                    holdDecibels: MeterHolds.decibels(held[c].linear), clipped: r.clipped))
        }
        holds[id] = held
        return out
    }

    /// Forgets held peaks (with the clip lights).
    mutating func resetClips() { holds = [:] }

    /// dBFS of a linear level; garbage (NaN, negative) reads as silence.
    static func decibels(_ linear: Float) -> Double {
        guard linear.isFinite, linear > 0 else { return -.infinity }
        return Decibels.fromLinear(Double(linear))
    }
}
