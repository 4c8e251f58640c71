import CJACK
import Synchronization
import TapedeckCore
import TapedeckEngine
#if canImport(Glibc)
import Glibc
#endif

/// Why a JACK client stopped for good (its device's failure code says which).
enum JACKFailure: Int32 {
    /// The server shut the client down: it went away, or dropped a client too slow for it.
    case serverGone = 1
    /// The server's sample rate changed under the session.
    case rateChanged = 2

    /// The code handed to ``AudioDeviceClient/deviceDidFail(code:)`` (a negative errno).
    var deviceCode: Int32 { self == .serverGone ? -ESHUTDOWN : -EINVAL }
}

/// Everything JACK's threads touch: the process callback (JACK's real-time thread, which is
/// Tapedeck's audio thread on this device), the sync and timebase callbacks (the same
/// thread), and the xrun, shutdown, buffer-size and sample-rate callbacks (JACK's
/// notification thread, or the real-time thread when the server dies under it).
///
/// The client (the engine) is handed over to the process callback through ``gate``: 0 idle,
/// 1 inside a cycle, 2 detached. A cycle runs only when it can take the gate from idle, and
/// whoever detaches the client (a stop, a failure) takes it from idle too, so the engine is
/// never called from two threads at once — with no lock on the real-time side.
final class JACKCycle: @unchecked Sendable {
    let jack: OpaquePointer
    let inputCount: Int
    let outputCount: Int
    /// Frames the engine renders at most at once (the buffer size it was built for). A larger
    /// JACK buffer is rendered in several blocks, a smaller one as one short block.
    let enginePeriod: Int
    let sampleRate: Int
    let followsTransport: Bool
    let timebaseMaster: Bool

    private let inPorts: UnsafeMutablePointer<OpaquePointer?>
    private let outPorts: UnsafeMutablePointer<OpaquePointer?>
    private let inBase: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    private let outBase: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    private let inputTable: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    private let outputTable: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    /// Silence for a device with no inputs, and scratch outputs when JACK has fewer than two.
    private let scratch: UnsafeMutablePointer<Float>
    /// The cycle's input, copied as the cycle begins: a port's buffer is the connected
    /// client's, which JACK goes on rewriting once a cycle runs past its timeout, so a cycle
    /// that is late to read it would keep another cycle's audio. Room for
    /// ``inputCopyFrames`` frames a channel (a longer cycle is read in place).
    private let inputCopy: UnsafeMutablePointer<Float>
    static let inputCopyFrames = 8192
    private let tableOutputs: Int
    /// MIDI ports: inputs handed to the engine at their frames, outputs fed with its thru.
    private let midi: JACKCycleMIDI

    // Set by the control thread before `attached` is stored (releasing), read after it.
    private unowned(unsafe) var client: (any AudioDeviceClient)?
    private unowned(unsafe) var follower: (any HostClockClient)?
    private unowned(unsafe) var midiClient: (any AudioDeviceMIDIClient)?

    let gate = Atomic<Int>(0)
    let attached = Atomic<Bool>(false)
    let stopRequested = Atomic<Bool>(false)
    let ended = Atomic<Bool>(false)
    /// A ``JACKFailure`` raw value, 0 while none.
    let failure = Atomic<Int32>(0)
    /// Set once ``fail(_:detail:reason:)`` has finished telling the engine.
    let failHandled = Atomic<Bool>(false)
    /// Whether the client may still be called from the control thread: once the server is
    /// gone libjack lets go of its memory, and a call then would crash. Held around every
    /// control-thread call; cleared (under it) before a server death is handled.
    let callable = Mutex<Bool>(true)
    /// The server's status bits at a shutdown, or the new rate.
    let failureDetail = Atomic<Int64>(0)
    /// JACK's words for a shutdown, copied without allocating (read once `failure` is set).
    let reason: UnsafeMutablePointer<CChar>
    static let reasonCapacity = 256
    /// Xruns the server reported (notification thread).
    let xrunCallbacks = Atomic<Int>(0)
    /// The buffer size JACK runs at now.
    let bufferFrames: Atomic<Int>
    /// The host frame the engine could roll from at once (-1: not ready), for slow sync.
    let readyFrame = Atomic<Int64>(-1)
    /// The tempo published as timebase master: BPM bits, beats per bar, beat unit.
    let tempoBits = Atomic<UInt64>(120.0.bitPattern)
    let beatsPerBar = Atomic<Int>(4)
    let beatUnit = Atomic<Int>(4)
    /// The session's tempo map when it has changes (an unretained ``TempoTable``; 0: the
    /// constant tempo above). The tables stay alive in ``keptTempoTables``.
    let tempoTableBits = Atomic<UInt>(0)
    /// Every table published (control thread): one may still be read by the cycle in flight.
    var keptTempoTables: [TempoTable] = []

    // Audio thread only.
    private var begun = false
    /// JACK's clock and transport as last read, and what each reading says moved on.
    private var clockReading = JACKClockReading()
    private var xrunsSeen = 0
    /// Xruns counted from a gap in JACK's frame time before the server's report came.
    private var xrunsAhead = 0
    /// Gaps in JACK's clock, a late cycle's reading held until the next says what it was.
    private var gaps = JACKClockGaps()
    /// Whether the last cycle took longer than two periods to render (JACK2's timeout).
    private var lastCycleOverran = false
    /// When the last cycle began (CLOCK_MONOTONIC nanoseconds; 0: none yet), to see cycles
    /// run back to back (``JACKClockGaps``).
    private var lastCycleBeganNanoseconds: Int64 = 0
    /// What the engine was last told is held (``AudioDeviceClient/deviceHolds(frames:)``).
    private var toldHeld: Int64 = 0
    /// Each cycle's reading, when a developer asks for it (`TAPEDECK_JACK_TRACE`).
    let trace = JACKCycleTrace.fromEnvironment()

    init(jack: OpaquePointer, inputs: [OpaquePointer], outputs: [OpaquePointer], midiInputs: [OpaquePointer] = [],
         midiOutputs: [OpaquePointer] = [], enginePeriod: Int, sampleRate: Int, followsTransport: Bool, timebaseMaster: Bool) {
        self.jack = jack
        midi = JACKCycleMIDI(inputs: midiInputs, outputs: midiOutputs)
        inputCount = inputs.count
        outputCount = outputs.count
        self.enginePeriod = enginePeriod
        self.sampleRate = sampleRate
        self.followsTransport = followsTransport
        self.timebaseMaster = timebaseMaster
        bufferFrames = Atomic(enginePeriod)
        inPorts = .table(inputs)
        outPorts = .table(outputs)
        // The engine always gets at least two output buffers (it writes its stereo bus there).
        tableOutputs = max(outputs.count, 2)
        scratch = .allocate(capacity: 3 * max(enginePeriod, 1))
        scratch.initialize(repeating: 0, count: 3 * max(enginePeriod, 1))
        inputCopy = .allocate(capacity: max(inputs.count, 1) * JACKCycle.inputCopyFrames)
        inputCopy.initialize(repeating: 0, count: max(inputs.count, 1) * JACKCycle.inputCopyFrames)
        inBase = .allocate(capacity: max(inputs.count, 1))
        inBase.initialize(repeating: scratch, count: max(inputs.count, 1))
        outBase = .allocate(capacity: tableOutputs)
        outBase.initialize(repeating: scratch, count: tableOutputs)
        inputTable = .allocate(capacity: max(inputs.count, 1))
        inputTable.initialize(repeating: scratch, count: max(inputs.count, 1))
        outputTable = .allocate(capacity: tableOutputs)
        outputTable.initialize(repeating: scratch, count: tableOutputs)
        reason = .allocate(capacity: JACKCycle.reasonCapacity)
        reason.initialize(repeating: 0, count: JACKCycle.reasonCapacity)
    }

    deinit {
        inPorts.deallocate()
        outPorts.deallocate()
        inBase.deallocate()
        outBase.deallocate()
        inputTable.deallocate()
        outputTable.deallocate()
        scratch.deallocate()
        inputCopy.deallocate()
        reason.deallocate()
    }

    /// Hands the engine to the process callback. Control thread.
    func attach(_ client: any AudioDeviceClient) {
        self.client = client
        follower = followsTransport ? client as? HostClockClient : nil
        midiClient = client as? any AudioDeviceMIDIClient
        attached.store(true, ordering: .releasing)
    }

    // MARK: - Real-time thread

    /// One JACK cycle.
    ///
    /// Audio thread: no allocation, no locks, no logging.
    func process(_ nframes: UInt32) -> Int32 {
        let n = Int(nframes)
        guard attached.load(ordering: .acquiring), gate.compareExchange(expected: 0, desired: 1, ordering: .acquiring).exchanged,
              let client else {
            silence(nframes)
            // No engine yet: what its MIDI inputs hear waits for it (a surface's first press).
            if !attached.load(ordering: .acquiring) && !begun { midi.keepForEngine() }
            return 0
        }
        if !begun {
            begun = true
            client.audioThreadBegins(realtime: jack_is_realtime(jack) != 0)
        }
        if stopRequested.load(ordering: .acquiring) {
            // The last cycle: the engine hears it ends here, on its own thread.
            if !ended.exchange(true, ordering: .acquiringAndReleasing) { client.audioThreadEnds() }
            silence(nframes)
            gate.store(2, ordering: .releasing)
            return 0
        }
        // The input first, before anything can delay the cycle (see `inputCopy`).
        let copies = n <= JACKCycle.inputCopyFrames
        for c in 0..<inputCount {
            let port = jack_port_get_buffer(inPorts[c], nframes).assumingMemoryBound(to: Float.self)
            if copies {
                let copy = inputCopy + c * JACKCycle.inputCopyFrames
                copy.update(from: port, count: n)
                inBase[c] = copy
            } else {
                inBase[c] = port
            }
        }
        // JACK's transport, read once for the cycle (when it is followed).
        var pos = jack_position_t()
        let transport = follower == nil ? JackTransportStopped : jack_transport_query(jack, &pos)
        // (Raw values compared: the imported enum's == would instantiate its type metadata,
        // which allocates, the first time it is used.)
        let rolling = transport.rawValue == JackTransportRolling.rawValue
        reportXruns(client, frames: nframes, transportFrame: rolling ? Int64(pos.frame) : nil)
        if let trace {
            trace.current.clockFrame = jack_last_frame_time(jack)
            trace.current.frames = Int32(n)
            trace.current.monotonicNanoseconds = monotonicNanoseconds()
            if inputCount > 0 && n > 1 {
                trace.current.first = inBase[0][0]
                trace.current.second = inBase[0][1]
            }
            trace.current.heldFrames = gaps.heldFrames
            trace.commit()
        }
        _ = client.beginCycle()
        if let follower { followTransport(follower, state: transport, position: pos, frameCount: n) }
        let midiClient = midiClient
        midi.beginCycle(nframes)
        if let midiClient { midi.deliverKept(to: midiClient) }
        for c in 0..<outputCount {
            outBase[c] = jack_port_get_buffer(outPorts[c], nframes).assumingMemoryBound(to: Float.self)
        }
        let renderStart = jack_get_time()
        let clock = cycleClock(frames: nframes)
        var offset = 0
        while offset < n {
            let k = min(enginePeriod, n - offset)
            for c in 0..<inputCount { inputTable[c] = inBase[c] + offset }
            for c in 0..<outputCount { outputTable[c] = outBase[c] + offset }
            // Outputs JACK does not have are scratch, written and dropped.
            for c in outputCount..<tableOutputs { outputTable[c] = scratch + (c - outputCount + 1) * enginePeriod }
            if let midiClient { midi.deliver(to: midiClient, from: offset, until: offset + k) }
            if let clock {
                // Each block takes its share of the cycle before this one: the last block's
                // window ends where this cycle began (the blocks all render now).
                let began = clock.startNanoseconds - Int64(n - offset - k) * clock.cycleNanoseconds / Int64(max(n, 1))
                client.devicePeriodBegan(DevicePeriodTime(beganNanoseconds: began, isExact: true))
            }
            client.renderCycle(input: inputTable, output: outputTable, frameCount: k)
            if let midiClient { midi.sendThru(from: midiClient, at: offset, frameCount: n) }
            offset += k
        }
        // Microseconds: two periods of n frames.
        lastCycleOverran = (jack_get_time() &- renderStart) > 2 * UInt64(n) * 1_000_000 / UInt64(max(sampleRate, 1))
        gate.store(0, ordering: .releasing)
        return 0
    }

    /// When this cycle began on JACK's clock (its delay-locked loop over the driver's
    /// wake-ups, which every client shares) and how long it lasts, in CLOCK_MONOTONIC
    /// nanoseconds: JACK's clock is CLOCK_MONOTONIC_RAW in microseconds, mapped onto ours
    /// through both read now. Nil when JACK cannot say (no cycle times yet).
    ///
    /// Audio thread: no allocation, no locks.
    private func cycleClock(frames: UInt32) -> (startNanoseconds: Int64, cycleNanoseconds: Int64)? {
        var frameTime: jack_nframes_t = 0
        var current: jack_time_t = 0, next: jack_time_t = 0
        var periodMicroseconds: Float = 0
        guard jack_get_cycle_times(jack, &frameTime, &current, &next, &periodMicroseconds) == 0, current > 0 else { return nil }
        let offset = monotonicNanoseconds() - Int64(bitPattern: jack_get_time()) * 1000
        let span = Int64(bitPattern: next &- current)
        // The cycle's own length, as JACK's loop measures it, when it is sane; else nominal.
        let nominal = Int64(frames) * 1_000_000_000 / Int64(max(sampleRate, 1))
        let length = span > 0 && abs(span * 1000 - nominal) < nominal / 2 ? span * 1000 : nominal
        return (Int64(bitPattern: current) * 1000 + offset, length)
    }

    /// Xruns: the server's reports count them; what JACK's clock moved on between two cycles
    /// beyond the frames heard says how much device time passed unheard, so the engine keeps
    /// takes and transport at their device times as on ALSA. While the engine follows JACK's
    /// rolling transport (`transportFrame`), that is what the transport moved on meanwhile
    /// instead, so the playhead stays on JACK's frame (see ``JACKClockReading``).
    ///
    /// A late cycle's readings may be the next cycle's: see ``JACKClockGaps``.
    ///
    /// Audio thread: no allocation, no locks.
    private func reportXruns(_ client: any AudioDeviceClient, frames: UInt32, transportFrame: Int64?) {
        let reading = clockReading.cycle(clockFrame: jack_last_frame_time(jack), frames: Int64(frames), transportFrame: transportFrame,
                                         heldFrames: gaps.heldFrames, sampleRate: sampleRate)
        let delta = reading.deltaFrames
        let startsRolling = reading.startsRolling
        // Back to back: begun within 40 % of a period of the last cycle's start (a server
        // catching up; a cycle merely woken late is followed by one on time or later).
        let now = monotonicNanoseconds()
        let periodNanoseconds = Int64(frames) * 1_000_000_000 / Int64(max(sampleRate, 1))
        let backToBack = lastCycleBeganNanoseconds > 0 && now - lastCycleBeganNanoseconds < periodNanoseconds * 2 / 5
        lastCycleBeganNanoseconds = now
        var step = gaps.cycle(deltaFrames: delta, periodFrames: Int64(frames), afterOverrun: lastCycleOverran, backToBack: backToBack)
        if startsRolling {
            // The followed transport is seen rolling for the first time: a gap held so far was
            // measured while it stood, and the next readings, of a rolling transport, cannot
            // give it back. Skipped now, before the engine sees the transport roll: held on, it
            // would be skipped once the engine rolls and carry the playhead past JACK's.
            let settled = gaps.settle()
            step.skipFrames += settled.skipFrames
            if settled.tell {
                step.tell = true
                step.lostFrames = settled.lostFrames
            }
        }
        let reported = xrunCallbacks.load(ordering: .relaxed)
        var fresh = reported - xrunsSeen
        xrunsSeen = reported
        if step.freshGap {
            if fresh > 0 { fresh -= 1 } else { xrunsAhead += 1 }
        }
        trace?.current.skipFrames = step.skipFrames
        trace?.current.reports = Int32(fresh)
        if step.tell {
            trace?.current.toldLostFrames = step.lostFrames
            client.deviceDidXrun(lostFrames: step.lostFrames, skippingNow: step.skipFrames)
        } else if step.skipFrames > 0 {
            client.deviceSkipped(frames: step.skipFrames)
        }
        while fresh > 0 {
            fresh -= 1
            if xrunsAhead > 0 { xrunsAhead -= 1 } else { client.deviceDidXrun(lostFrames: 0) }
        }
        // After what was skipped: what is still held was lost (if it was) before this cycle.
        if gaps.heldFrames != toldHeld {
            toldHeld = gaps.heldFrames
            client.deviceHolds(frames: toldHeld)
        }
    }

    /// Reads JACK's transport for this cycle and lets the engine follow it; remembers where
    /// the engine could roll from at once, for the sync callback.
    ///
    /// Audio thread: no allocation, no locks.
    private func followTransport(_ follower: any HostClockClient, state: jack_transport_state_t, position pos: jack_position_t,
                                 frameCount n: Int) {
        var host = HostClockFrame(state: JACKCycle.state(state), frame: Int64(pos.frame))
        host.aheadFrames = gaps.heldFrames
        if !timebaseMaster && pos.valid.rawValue & JackPositionBBT.rawValue != 0 { JACKCycle.readMusicalTime(pos, into: &host) }
        let reply = follower.followHost(host, frameCount: n)
        readyFrame.store(reply.readyToRoll ? host.frame : -1, ordering: .relaxed)
        if let trace {
            trace.current.transport = Int32(state.rawValue)
            trace.current.transportFrame = pos.frame
            trace.current.ready = reply.readyToRoll ? 1 : 0
        }
        if reply.stopHost { jack_transport_stop(jack) }
        // (JACK's start and stop only set a request the server reads at its next cycle.)
        if reply.startHost { jack_transport_start(jack) }
    }

    /// Outputs silent for a cycle the engine does not render.
    ///
    /// Audio thread: no allocation.
    private func silence(_ nframes: UInt32) {
        midi.beginCycle(nframes)
        for c in 0..<outputCount {
            jack_port_get_buffer(outPorts[c], nframes).assumingMemoryBound(to: Float.self).update(repeating: 0, count: Int(nframes))
        }
    }

    // MARK: - Failure and stop

    /// The client is gone for good (`kind`): the engine hears it once — its takes end with
    /// everything kept — and is detached. JACK's notification thread, or its real-time thread
    /// when the server died under it; never inside a cycle.
    func fail(_ kind: JACKFailure, detail: Int64, reason text: UnsafePointer<CChar>?) {
        // Only a server that is gone must never be called again (libjack has let go of what
        // the client points to); after a rate change the client lives and is closed as usual.
        if kind == .serverGone { callable.withLock { $0 = false } }
        // libjack may report a death twice (from its real-time and its notification thread):
        // only the first is handled.
        guard failure.compareExchange(expected: 0, desired: kind.rawValue, ordering: .acquiringAndReleasing).exchanged else { return }
        defer { failHandled.store(true, ordering: .releasing) }
        if let text { strncpy(reason, text, JACKCycle.reasonCapacity - 1) }
        failureDetail.store(detail, ordering: .releasing)
        guard detach(waitingMilliseconds: 5000) else { return }
        client?.deviceDidFail(code: kind.deviceCode)
        if !ended.exchange(true, ordering: .acquiringAndReleasing) { client?.audioThreadEnds() }
    }

    /// Ends the cycles: the next one tells the engine it was the last; when none comes (a
    /// server that died), the engine is detached from here. Control thread.
    func stop() {
        stopRequested.store(true, ordering: .releasing)
        guard attached.load(ordering: .acquiring) else { return }
        var waited = 0
        while waited < 1000 && !ended.load(ordering: .acquiring) && failure.load(ordering: .acquiring) == 0 {
            usleep(1000)
            waited += 1
        }
        if failure.load(ordering: .acquiring) != 0 {
            // A failure being handled on JACK's thread still calls the engine: the engine
            // must outlive that, so its close waits for it (bounded like the detach there).
            var handled = 0
            while !failHandled.load(ordering: .acquiring) && handled < 6000 {
                usleep(1000)
                handled += 1
            }
        }
        if detach(waitingMilliseconds: 2000), !ended.exchange(true, ordering: .acquiringAndReleasing) { client?.audioThreadEnds() }
    }

    /// Takes the gate from idle to detached (waiting out a cycle in flight). False when it was
    /// already detached, or a cycle never ended in time.
    private func detach(waitingMilliseconds: Int) -> Bool {
        for _ in 0..<(waitingMilliseconds * 5) {
            let (exchanged, current) = gate.compareExchange(expected: 0, desired: 2, ordering: .acquiringAndReleasing)
            if exchanged { return true }
            if current == 2 { return false }
            usleep(200)
        }
        return false
    }
}

/// JACK's C callbacks: each finds its ``JACKCycle`` in `arg` without touching a reference
/// count.
enum JACKCallbacks {
    static let process: JackProcessCallback = { nframes, arg in
        Unmanaged<JACKCycle>.fromOpaque(arg!)._withUnsafeGuaranteedRef { $0.process(nframes) }
    }
    static let sync: JackSyncCallback = { _, pos, arg in
        Unmanaged<JACKCycle>.fromOpaque(arg!)._withUnsafeGuaranteedRef { $0.sync(frame: pos!.pointee.frame) }
    }
    static let timebase: JackTimebaseCallback = { _, _, pos, _, arg in
        guard let pos else { return }
        Unmanaged<JACKCycle>.fromOpaque(arg!)._withUnsafeGuaranteedRef { $0.timebase(pos) }
    }
    static let xrun: JackXRunCallback = { arg in
        Unmanaged<JACKCycle>.fromOpaque(arg!)._withUnsafeGuaranteedRef { $0.xrunCallbacks.add(1, ordering: .relaxed) }
        return 0
    }
    static let bufferSize: JackBufferSizeCallback = { nframes, arg in
        Unmanaged<JACKCycle>.fromOpaque(arg!)._withUnsafeGuaranteedRef { $0.bufferFrames.store(Int(nframes), ordering: .relaxed) }
        return 0
    }
    static let sampleRate: JackSampleRateCallback = { nframes, arg in
        Unmanaged<JACKCycle>.fromOpaque(arg!)._withUnsafeGuaranteedRef { cycle in
            if Int(nframes) != cycle.sampleRate { cycle.fail(.rateChanged, detail: Int64(nframes), reason: nil) }
        }
        return 0
    }
    static let shutdown: JackInfoShutdownCallback = { status, reason, arg in
        Unmanaged<JACKCycle>.fromOpaque(arg!)._withUnsafeGuaranteedRef { $0.fail(.serverGone, detail: Int64(status.rawValue), reason: reason) }
    }
}
