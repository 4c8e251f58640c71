import CJACK
import TapedeckCore
import TapedeckEngine

/// The musical side of a JACK cycle: bar, beat and tempo read from another program, or
/// published as timebase master, and slow sync.
extension JACKCycle {
    /// Bar, beat, tick and tempo another program published, when they make sense: they come
    /// from anywhere, so nothing in them may trap (a NaN tempo, a bar of Int32.min).
    ///
    /// Audio thread: arithmetic only.
    static func readMusicalTime(_ pos: jack_position_t, into host: inout HostClockFrame) {
        let bpm = pos.beats_per_minute, perBar = Double(pos.beats_per_bar), unit = Double(pos.beat_type)
        let ticksPerBeat = pos.ticks_per_beat
        guard bpm.isFinite, bpm >= 1, bpm <= 1000, perBar.isFinite, perBar >= 1, perBar <= 64, unit.isFinite, unit >= 1,
              unit <= 64, ticksPerBeat.isFinite, ticksPerBeat >= 1, pos.bar >= 1, pos.beat >= 1, pos.tick >= 0 else { return }
        host.hasMusicalTime = true
        host.tempoBPM = bpm
        host.beatsPerBar = Int(perBar)
        host.beatUnit = Int(unit)
        host.beatPosition = (Double(pos.bar) - 1) * perBar + (Double(pos.beat) - 1) + Double(pos.tick) / ticksPerBeat
    }

    /// Slow sync: ready once the engine stands where the transport is about to roll from,
    /// its disk streams filled. Before the engine runs, nothing holds the others back.
    ///
    /// Audio thread: no allocation, no locks.
    func sync(frame: UInt32) -> Int32 {
        // A client opened but not yet rendering holds the others back (it is about to start:
        // rolling without it would skip the start of what it plays); a stopped one does not.
        guard attached.load(ordering: .acquiring) else { return stopRequested.load(ordering: .relaxed) ? 1 : 0 }
        guard !ended.load(ordering: .relaxed) else { return 1 }
        let answer: Int32 = readyFrame.load(ordering: .relaxed) == Int64(frame) ? 1 : 0
        trace?.current.synced = answer
        return answer
    }

    /// As timebase master: bar, beat, tick and tempo of `pos.frame` from the session's
    /// tempo map.
    ///
    /// Audio thread: arithmetic only.
    func timebase(_ pos: UnsafeMutablePointer<jack_position_t>) {
        let bits = tempoTableBits.load(ordering: .acquiring)
        if bits != 0, let raw = UnsafeRawPointer(bitPattern: bits) {
            // Through the map's changes: the bar, beat and tempo there (a ramp's at that frame).
            let p = Unmanaged<TempoTable>.fromOpaque(raw)._withUnsafeGuaranteedRef { $0.point(atFrame: Double(pos.pointee.frame)) }
            let ticksPerBeat = Double(TempoMap.ticksPerBeat)
            let inBar = max(0, p.beatPosition - p.barStartBeat)
            pos.pointee.valid = jack_position_bits_t(rawValue: pos.pointee.valid.rawValue | JackPositionBBT.rawValue)
            pos.pointee.bar = Int32(clamping: p.bar)
            pos.pointee.beat = Int32(clamping: Int(inBar.rounded(.down)) + 1)
            pos.pointee.tick = Int32(clamping: min(Int(((inBar - inBar.rounded(.down)) * ticksPerBeat).rounded(.down)), TempoMap.ticksPerBeat - 1))
            pos.pointee.bar_start_tick = p.barStartBeat * ticksPerBeat
            pos.pointee.beats_per_bar = Float(p.beatsPerBar)
            pos.pointee.beat_type = Float(p.beatUnit)
            pos.pointee.ticks_per_beat = ticksPerBeat
            pos.pointee.beats_per_minute = p.bpm
            return
        }
        let bpm = Double(bitPattern: tempoBits.load(ordering: .relaxed))
        let perBar = beatsPerBar.load(ordering: .relaxed)
        let unit = beatUnit.load(ordering: .relaxed)
        let map = TempoMap(sampleRate: sampleRate, tempoBPM: bpm, timeSignature: TimeSignature(beatsPerBar: perBar, beatUnit: unit))
        let p = map.position(ofFrame: Int64(pos.pointee.frame))
        let ticksPerBeat = Double(TempoMap.ticksPerBeat)
        pos.pointee.valid = jack_position_bits_t(rawValue: pos.pointee.valid.rawValue | JackPositionBBT.rawValue)
        pos.pointee.bar = Int32(clamping: p.bar)
        pos.pointee.beat = Int32(clamping: p.beat)
        pos.pointee.tick = Int32(clamping: p.tick)
        pos.pointee.bar_start_tick = Double(p.bar - 1) * Double(perBar) * ticksPerBeat
        pos.pointee.beats_per_bar = Float(perBar)
        pos.pointee.beat_type = Float(unit)
        pos.pointee.ticks_per_beat = ticksPerBeat
        pos.pointee.beats_per_minute = bpm
    }

    /// Audio thread: compares raw values only (see ``process(_:)``).
    static func state(_ s: jack_transport_state_t) -> HostClockFrame.State {
        switch s.rawValue {
        case JackTransportRolling.rawValue: .rolling
        case JackTransportStarting.rawValue, JackTransportNetStarting.rawValue: .starting
        default: .stopped
        }
    }

}
