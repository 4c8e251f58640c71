import Synchronization
import TapedeckCore
import TapedeckDSP

/// MIDI on the audio thread: each period the inputs' messages are placed at the frames they
/// arrived (one period late, which keeps their spacing free of jitter), bound controllers
/// move their targets, and every track's chain gets its MIDI for the period — the inputs
/// while it is armed, else its MIDI regions — with notes switched off when the transport
/// stops, jumps or wraps.
extension RenderCore {
    /// Frames between a note being played and the engine hearing of it, on the device's
    /// clock: the period it waits to be placed, the output latency, and the master chain's
    /// look-ahead. A played message's frame is its arrival frame less this.
    ///
    /// Audio thread: arithmetic only.
    @inline(__always)
    func midiLatencyFrames(_ g: Graph) -> Int64 { midiBaseLatencyFrames + Int64(g.outputLatencyFrames) }

    /// The device's clock for the period about to render (see ``DevicePeriodTime``).
    ///
    /// Audio thread: one store.
    func devicePeriodBegan(_ time: DevicePeriodTime) { midi.devicePeriod = time }

    /// Which stamps this period takes (see ``MIDIWindow``): the period before the one the
    /// device says this is on its own clock, when it says so exactly; otherwise the period
    /// before this one's start as the delay-locked loop estimates it from the device's
    /// coarse reading or, lacking one, from the thread's wake-up `now`. A late wake-up moves
    /// neither an exact reading nor (much) the loop, so the notes keep their frames.
    ///
    /// Audio thread: arithmetic only.
    private func midiWindow(frameCount n: Int, now: Int64) -> MIDIWindow {
        let hub = midi
        let told = hub.devicePeriod
        hub.devicePeriod = nil
        let periodNanoseconds = Int64(n) * 1_000_000_000 / Int64(max(sampleRate, 1))
        let elapsedFrames = hub.clockDeviceFrame < 0 ? Int64(n) : max(deviceFrame - hub.clockDeviceFrame, 1)
        hub.clockDeviceFrame = deviceFrame
        if let told, told.isExact {
            return MIDIWindow(startNanoseconds: told.beganNanoseconds - periodNanoseconds, endNanoseconds: told.beganNanoseconds)
        }
        hub.clock.tick(now: told?.beganNanoseconds ?? now, elapsedNanoseconds: elapsedFrames * 1_000_000_000 / Int64(max(sampleRate, 1)),
                       periodNanoseconds: periodNanoseconds)
        return hub.clock.window
    }

    /// Takes this period's MIDI: the device's own (delivered this cycle at their frames) and
    /// every input port's messages stamped before this period's window ends (see
    /// ``midiWindow(frameCount:now:)``), each at the frame of the period where its stamp
    /// falls in the window.
    ///
    /// Audio thread: no allocation, no locks.
    func gatherMIDI(_ g: Graph?, frameCount n: Int, now: Int64) {
        let hub = midi
        let window = midiWindow(frameCount: n, now: now)
        defer {
            hub.lastWindow = window
            hub.lastWindowDeviceFrame = deviceFrame
            hub.lastWindowFrameCount = n
        }
        hub.liveCount = 0
        for i in 0..<hub.deliveredCount {
            let e = hub.delivered[i]
            route(g, status: e.status, data1: e.data1, data2: e.data2, offset: Int(e.frameOffset), playedOffset: Int64(e.frameOffset),
                  frameCount: n, nanoseconds: window.endNanoseconds + Int64(e.frameOffset) * 1_000_000_000 / Int64(max(sampleRate, 1)))
        }
        hub.deliveredCount = 0
        for slot in 0..<MIDIHub.inputCapacity {
            guard let raw = hub.inputs[slot].load(ordering: .acquiring) else { continue }
            let port = Unmanaged<MIDIInputPort>.fromOpaque(raw)
            port._withUnsafeGuaranteedRef { port in
                // One stamped at or after the window's end was played during this period: it
                // waits for the next (a late wake-up must not pull it in early).
                while let m = port.messages.peek(), m.nanoseconds < window.endNanoseconds {
                    _ = port.messages.pop()
                    // To the nearest frame (a stamp a nanosecond short of its frame is that frame).
                    // One stamped before the window (played in frames an xrun lost, or handed
                    // over after its period was rendered) is heard at once, at the period's
                    // first frame, and kept in a take where it was played.
                    let into = min(window.frame(atNanoseconds: m.nanoseconds, frameCount: n), Int64(n - 1))
                    let played = into >= 0 ? into
                        : MIDIWindow.playedFrame(atNanoseconds: m.nanoseconds, window: window, frameCount: n, previous: hub.lastWindow,
                                                 previousFrameCount: hub.lastWindowFrameCount, framesBefore: deviceFrame - hub.lastWindowDeviceFrame)
                    route(g, status: m.status, data1: m.data1, data2: m.data2, offset: Int(min(max(played, 0), Int64(n - 1))),
                          playedOffset: played, frameCount: n, nanoseconds: m.nanoseconds)
                }
            }
        }
        // Ports drained one after another: put their messages in frame order (stable).
        let live = hub.live
        var i = 1
        while i < hub.liveCount {
            let e = live[i]
            var j = i - 1
            while j >= 0 && live[j].frameOffset > e.frameOffset {
                live[j + 1] = live[j]
                j -= 1
            }
            live[j + 1] = e
            i += 1
        }
    }

    /// One incoming message: learnt, applied to what it is bound to, or played (to the
    /// armed tracks, MIDI thru and the takes) — heard at `offset` in this period, kept in a
    /// take where it was played, `playedOffset` frames into the period (before it, negative,
    /// when it was played before the period's window began).
    ///
    /// Audio thread: no allocation, no locks.
    private func route(_ g: Graph?, status: UInt8, data1: UInt8, data2: UInt8, offset: Int, playedOffset: Int64, frameCount n: Int,
                       nanoseconds: Int64) {
        let hub = midi
        if status & 0xF0 == 0xB0 {
            if hub.learning.load(ordering: .acquiring) {
                if hub.learned.push(ControllerMoveRecord(key: Int32(status & 0x0F), controller: data1, value: data2)) {
                    hub.learning.store(false, ordering: .releasing)
                    EngineActivity.shared.signal()
                }
                return
            }
            if let g, applyBinding(g, channel: Int(status & 0x0F), controller: Int(data1), value: Int(data2)) { return }
        }
        guard hub.liveCount < MIDIHub.liveCapacity else {
            hub.droppedMessages.add(1, ordering: .relaxed)
            return
        }
        hub.live[hub.liveCount] = MIDIEvent(frameOffset: Int32(offset), status: status, data1: data1, data2: data2)
        hub.liveCount += 1
        if let raw = hub.output.load(ordering: .acquiring) {
            Unmanaged<MIDIOutputPort>.fromOpaque(raw)._withUnsafeGuaranteedRef {
                _ = $0.messages.push(TimedMIDIMessage(nanoseconds: nanoseconds, status: status, data1: data1, data2: data2))
            }
        }
        if hub.capturing.load(ordering: .relaxed) {
            // Not `g.map { … }`: a generic call through a closure, which this file avoids on the audio thread.
            var latency = midiBaseLatencyFrames
            if let g { latency = midiLatencyFrames(g) }
            let played = deviceFrame + playedOffset - latency
            if !hub.capture.push(CapturedMIDI(playedDeviceFrame: played, status: status, data1: data1, data2: data2)) {
                hub.droppedMessages.add(1, ordering: .relaxed)
            }
            writer.signal()
        }
    }

    /// Moves what controller `controller` on `channel` is bound to, and tells the control
    /// thread; false when it is bound to nothing (then it plays as any controller does).
    ///
    /// Audio thread: atomic stores and arithmetic only.
    private func applyBinding(_ g: Graph, channel: Int, controller: Int, value: Int) -> Bool {
        guard let table = g.bindings else { return false }
        var bound = false
        for k in 0..<table.count {
            let e = table.entries[k]
            guard e.controller == controller, e.channel < 0 || e.channel == channel else { continue }
            bound = true
            // A lane written by hand: the move takes hold of it (set before the value, so
            // the lane never plays over the new value; the control thread lets go).
            let writes = e.writes && state == .rolling
            switch e.target {
            case .fader(let controls):
                controls._withUnsafeGuaranteedRef {
                    if writes { $0.touch(.gain) }
                    $0.setGain(decibels: MIDIBinding.faderDecibels(controllerValue: value))
                }
            case .pan(let controls):
                controls._withUnsafeGuaranteedRef {
                    if writes { $0.touch(.pan) }
                    $0.setPan(MIDIBinding.pan(controllerValue: value))
                }
            case .mute(let controls):
                controls._withUnsafeGuaranteedRef {
                    if writes { $0.touch(.mute) }
                    $0.setMute(MIDIBinding.mute(controllerValue: value))
                }
            case .master:
                let dB = MIDIBinding.faderDecibels(controllerValue: value)
                shared.masterGainBits.store(Float(Decibels.toLinear(dB)).bitPattern, ordering: .relaxed)
            case .parameter(let parameters, let index, let minimum, let maximum, let logarithmic, let steps):
                let v = MIDIBinding.parameterValue(controllerValue: value, minimum: minimum, maximum: maximum,
                                                   logarithmic: logarithmic, steps: steps > 1 ? steps : nil)
                parameters._withUnsafeGuaranteedRef {
                    if writes { $0.touch(index) }
                    $0.set(index, v)
                }
            case .send(let controls):
                controls._withUnsafeGuaranteedRef {
                    if writes { $0.touch() }
                    $0.setLevel(decibels: MIDIBinding.faderDecibels(controllerValue: value))
                }
            }
            // Where the move is heard from: this period's first timeline frame (the fader
            // glides from there), or nowhere while the transport stands.
            _ = midi.moves.push(ControllerMoveRecord(key: Int32(e.binding), controller: UInt8(controller), value: UInt8(value),
                                                     timelineFrame: state == .rolling ? position : -1))
            EngineActivity.shared.signal()
        }
        return bound
    }

    /// Track `i`'s MIDI for `frameCount` frames, in its strip's buffer: the live messages
    /// while it listens (armed), else (rolling) its regions' events over the timeline those
    /// frames cover from timeline frame `from` at `speed` timeline frames per frame — read
    /// ahead by the chain's latency, through a loop's wrap — and before them note-offs for
    /// whatever must stop sounding. (The device-rate mix asks from the playhead at the
    /// transport's speed; the mix's time-pitch renders tracks at timeline rate, speed 1.)
    ///
    /// Audio thread: no allocation, no locks.
    func midiEvents(_ g: Graph, track i: Int, strip: PlaybackStrip, frameCount n: Int, from start: Int64,
                    speed: Double) -> UnsafeBufferPointer<MIDIEvent> {
        let m = strip.midi
        let capacity = StripMIDI.capacity
        m.count = 0
        let listening = g.listensToMIDI[i]
        let rolling = state == .rolling
        if m.wasListening && !listening {
            m.count += m.heldFromInputs.release(at: 0, into: m.buffer, count: m.count, capacity: capacity)
        }
        m.wasListening = listening
        let playlist = m.currentPlaylist()
        if m.heldFromRegions.count > 0 && (!rolling || listening || epoch != m.lastEpoch || playlist != m.lastPlaylist) {
            m.count += m.heldFromRegions.release(at: 0, into: m.buffer, count: m.count, capacity: capacity)
        }
        m.lastEpoch = epoch
        m.lastPlaylist = playlist
        if listening {
            let live = midi.live
            for k in 0..<midi.liveCount where m.count < capacity {
                let e = live[k]
                m.buffer[m.count] = e
                m.count += 1
                if e.isNoteOn { m.heldFromInputs.set(channel: e.status, note: e.data1, on: true) }
                else if e.isNoteOff { m.heldFromInputs.set(channel: e.status, note: e.data1, on: false) }
                else if e.isAllNotesOff { m.heldFromInputs.forget() }
            }
        } else if rolling, let playlist {
            Unmanaged<MIDIPlaylist>.fromOpaque(playlist)._withUnsafeGuaranteedRef { list in
                let from = route.advance(start, by: Int64(strip.latencyFrames))
                let span = Int64(Double(n) * speed)
                let until = route.framesUntilWrap(from: from)
                let first = min(span, until)
                m.count += list.collect(from: from, to: from + first, base: 0, speed: speed, into: m.buffer, count: m.count,
                                        capacity: capacity, held: m.heldFromRegions)
                if span > until && route.loops {
                    // The loop wraps inside this period: what sounds stops at the wrap.
                    let wrap = Int32(min(Double(until) / speed, Double(n - 1)))
                    m.count += m.heldFromRegions.release(at: wrap, into: m.buffer, count: m.count, capacity: capacity)
                    m.count += list.collect(from: route.loopStart, to: route.loopStart + span - until, base: Int(wrap), speed: speed,
                                            into: m.buffer, count: m.count, capacity: capacity, held: m.heldFromRegions)
                }
            }
        }
        // A full buffer has (most likely) left events out: said with the inputs' losses.
        if m.count >= capacity { midi.droppedMessages.add(1, ordering: .relaxed) }
        return m.events
    }
}

extension RenderCore: AudioDeviceMIDIClient {
    /// The device's own MIDI for the coming cycle: MMC and surface buttons become transport
    /// commands, channel messages join the cycle's live messages at their frame.
    ///
    /// Audio thread: no allocation, no locks.
    func receiveMIDI(_ bytes: UnsafeBufferPointer<UInt8>, frameOffset: Int) {
        // (Indexed: Collection's generic `first` allocates in a debug build.)
        guard bytes.count > 0 else { return }
        let status = bytes[0]
        let decoder = MachineControlDecoder(surface: ControlSurface(code: midi.surface.load(ordering: .relaxed)))
        if status == 0xF0 {
            if decoder.surface == .mcu, let m = MackieControl.decode(sysex: bytes) {
                _ = midi.surfaceMessages.push(m)
                EngineActivity.shared.signal()
                return
            }
            if let command = decoder.command(sysex: bytes) { _ = midi.machine.push(command); EngineActivity.shared.signal() }
            return
        }
        guard status >= 0x80 && status < 0xF0, midi.deliveredCount < MIDIHub.liveCapacity else { return }
        let d1 = bytes.count > 1 ? bytes[1] & 0x7F : 0, d2 = bytes.count > 2 ? bytes[2] & 0x7F : 0
        let button = decoder.button(status: status, data1: d1, data2: d2)
        if button.isButton {
            if let command = button.command { _ = midi.machine.push(command); EngineActivity.shared.signal() }
            return
        }
        if decoder.surface == .mcu, let m = MackieControl.decode(status: status, data1: d1, data2: d2) {
            _ = midi.surfaceMessages.push(m)
            EngineActivity.shared.signal()
            return
        }
        midi.delivered[midi.deliveredCount] = MIDIEvent(frameOffset: Int32(max(frameOffset, 0)), status: status, data1: d1, data2: d2)
        midi.deliveredCount += 1
    }

    /// What the inputs played this cycle, for the device's MIDI out (thru), at its frames.
    ///
    /// Audio thread: no allocation, no locks.
    func sendMIDI(_ send: (UnsafeBufferPointer<UInt8>, Int) -> Void) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 3) { bytes in
            for i in 0..<midi.liveCount {
                let e = midi.live[i]
                bytes[0] = e.status; bytes[1] = e.data1; bytes[2] = e.data2
                send(UnsafeBufferPointer(start: bytes.baseAddress, count: 1 + MIDISequence.dataBytes(status: e.status)), Int(e.frameOffset))
            }
        }
        // Surface feedback after the thru, a few messages a cycle so a burst (a whole bank)
        // never overfills the port's buffer (what does not fit waits for the next cycle).
        var sent = 0
        while sent < 16 && midi.surfaceOutput.sendNext({ raw in
            send(UnsafeBufferPointer(start: raw.baseAddress?.assumingMemoryBound(to: UInt8.self), count: raw.count), 0)
            return true
        }) { sent += 1 }
    }
}
