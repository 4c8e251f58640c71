import TapedeckCore

extension StandardMIDIFile {
    /// `sequence` (its frames counted from timeline frame `origin`) as a format-0 file at 960
    /// ticks a quarter through `map`'s changes: each event's tick is its quarter position on
    /// the map, each tempo change a tempo event (a ramp one every thirty-second note, each
    /// lasting what the ramp takes over it, so the file's seconds meet the map's at every
    /// step), each meter change a time signature.
    public static func file(of sequence: MIDISequence, tempoMap map: TempoMap, from origin: Int64, name: String?) -> StandardMIDIFile {
        if map.isConstant { return file(of: sequence, tempoMap: map, name: name, ticksPerQuarter: 960) }
        let clock = QuarterClock(map)
        let perQuarter = 960.0
        let rate = Double(max(map.sampleRate, 1))
        let q0 = clock.quarters(atFrame: Double(origin))
        func tick(quarters q: Double) -> Int64 { Int64(((q - q0) * perQuarter).rounded()) }
        func tick(_ frame: Int64) -> Int64 { tick(quarters: clock.quarters(atFrame: Double(origin) + Double(frame))) }
        let events = sequence.events.map { Event(tick: tick($0.frame), status: $0.status, data1: $0.data1, data2: $0.data2) }
        let track = Track(name: name, events: events, endTick: tick(sequence.lengthFrames))

        var tempos: [Tempo] = []
        var meters: [MeterAtTick] = []
        var first: TimeSignature?
        for (k, s) in clock.segments.enumerated() where clock.endFrame(ofSegment: k) > Double(origin) {
            let from = max(clock.startQuarters[k], q0)
            let quarterBPM = s.startBPM * 4 / Double(s.signature.beatUnit)
            if first == nil {
                first = s.signature
            } else if meters.last?.signature ?? first != s.signature {
                meters.append(MeterAtTick(tick: tick(quarters: from), signature: s.signature))
            }
            if s.startBPM == s.endBPM {
                tempos.append(Tempo(tick: tick(quarters: from), microsecondsPerQuarter: Int((60_000_000 / quarterBPM).rounded())))
                continue
            }
            // A ramp as steps a thirty-second note long (MIDI has no ramps).
            let end = k + 1 < clock.startQuarters.count ? clock.startQuarters[k + 1] : from
            var q = from
            while q < end - 1e-9 {
                let next = min(q + 0.125, end)
                let seconds = (clock.frame(atQuarters: next) - clock.frame(atQuarters: q)) / rate
                tempos.append(Tempo(tick: tick(quarters: q), microsecondsPerQuarter: Int((seconds / (next - q) * 1e6).rounded())))
                q = next
            }
        }
        var file = StandardMIDIFile(format: 0, ticksPerQuarter: Int(perQuarter), tracks: [track], tempos: tempos, timeSignature: first)
        file.laterTimeSignatures = meters
        return file
    }
}
