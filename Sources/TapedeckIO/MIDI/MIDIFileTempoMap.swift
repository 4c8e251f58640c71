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
        let sysEx = sequence.sysEx.map { SysEx(tick: tick($0.frame), status: $0.status, data: $0.data) }
        let track = Track(name: name, events: events, sysEx: sysEx, endTick: tick(sequence.lengthFrames))

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

extension MIDIRegionFile {
    /// Every MIDI region of `session` kept on its bars and beats as the tempo map goes from
    /// `old` to the session's own (``keepingBars(_:from:to:folder:)``); how many moved. What
    /// every edit of the map calls (`tempo`, `meter`, `import --tempo-map`, the screen).
    public static func keepingBars(in session: inout Session, from old: TempoMap, folder: SessionFolder) throws(AudioFileError) -> Int {
        let new = session.tempoMap
        var moved = 0
        for t in session.tracks.indices {
            for r in session.tracks[t].regions.indices where session.tracks[t].regions[r].isMIDI {
                let region = session.tracks[t].regions[r]
                let kept = try keepingBars(region, from: old, to: new, folder: folder)
                if kept != region { session.tracks[t].regions[r] = kept; moved += 1 }
            }
        }
        return moved
    }

    /// `region` kept on its bars and beats as the tempo map goes from `old` to `new`: its
    /// start, end and every event of its file move to where their bar and beat now lie (the
    /// beats of each bar counted in its old meter, running on into the next bar where the new
    /// meter has fewer). The events go to a new file in `midi/` (the old one stays, for
    /// undo); a region whose place is unchanged is returned as it was.
    public static func keepingBars(_ region: Region, from old: TempoMap, to new: TempoMap,
                                   folder: SessionFolder) throws(AudioFileError) -> Region {
        func moved(_ frame: Double) -> Double {
            let p = old.point(atFrame: frame)
            return new.exactFrame(bar: p.bar, beat: 1, beatFraction: p.beatPosition - p.barStartBeat)
        }
        let start = Double(region.timelineStartFrame), end = Double(region.timelineEndFrame)
        guard moved(start).rounded() != start || moved(end).rounded() != end else { return region }
        let whole = try read(path: folder.absolutePath(of: region.file), sampleRate: old.sampleRate)
        let origin = start - Double(region.sourceOffsetFrame)
        let newOrigin = moved(origin)
        func fileFrame(_ frame: Int64) -> Int64 { max(0, Int64((moved(origin + Double(frame)) - newOrigin).rounded())) }
        let events = whole.events.map { e -> MIDISequence.Event in var e = e; e.frame = fileFrame(e.frame); return e }
        let sysEx = whole.sysEx.map { s -> MIDISequence.SysEx in var s = s; s.frame = fileFrame(s.frame); return s }
        let sequence = MIDISequence(events: events, sysEx: sysEx, lengthFrames: fileFrame(whole.lengthFrames))
        var base = lastComponent(of: region.file)
        if let dot = base.lastIndex(of: ".") { base = String(base[..<dot]) }
        var out = region
        out.file = try writeNew(sequence, base: base, name: nil, folder: folder, tempoMap: new)
        let newStart = Int64(moved(start).rounded())
        out.timelineStartFrame = newStart
        out.sourceOffsetFrame = max(0, newStart - Int64(newOrigin.rounded()))
        out.lengthFrames = max(1, Int64(moved(end).rounded()) - newStart)
        return out
    }
}

extension StandardMIDIFile {
    /// The file's own tempo map as a session's at `sampleRate`: its first tempo and meter at
    /// bar 1, each later tempo and time signature a change at its bar (tempos in beats of the
    /// meter there). Fails, naming the place, when a change falls inside a bar (a session's
    /// map changes on bars) or the file counts time in SMPTE frames.
    public func tempoMap(sampleRate: Int) -> Result<TempoMap, AudioFileError> {
        func fail(_ why: String) -> Result<TempoMap, AudioFileError> { .failure(AudioFileError(path: "", reason: why)) }
        guard ticksPerSecond == 0, ticksPerQuarter > 0 else { return fail("counts time in SMPTE frames: it has no tempo map to take") }
        let meters = [MeterAtTick(tick: 0, signature: timeSignature ?? TimeSignature(beatsPerBar: 4, beatUnit: 4))]
            + laterTimeSignatures.filter { $0.tick > 0 }
        // Bar starts, walked through the meters: the bar (and whether it starts there) at a tick.
        func bar(atTick tick: Int64) -> (bar: Int, onStart: Bool, signature: TimeSignature) {
            var bar = 1, from: Int64 = 0
            for (k, m) in meters.enumerated() {
                let ticksPerBar = Int64(m.signature.beatsPerBar * ticksPerQuarter * 4 / m.signature.beatUnit)
                let until = k + 1 < meters.count ? meters[k + 1].tick : Int64.max
                if tick < until || k + 1 == meters.count {
                    let bars = (tick - from) / max(ticksPerBar, 1)
                    return (bar + Int(bars), (tick - from) % max(ticksPerBar, 1) == 0, m.signature)
                }
                bar += Int((until - from + ticksPerBar - 1) / max(ticksPerBar, 1))
                from = until
            }
            return (bar, true, meters[0].signature)
        }
        var map = TempoMap(sampleRate: sampleRate, tempoBPM: 120, timeSignature: meters[0].signature)
        for m in meters.dropFirst() {
            let at = bar(atTick: m.tick)
            guard at.onStart else { return fail("changes meter inside bar \(at.bar) (tick \(m.tick)): a session's meter changes on a bar") }
            map.meterChanges.append(MeterChange(bar: at.bar, signature: m.signature))
        }
        for t in tempos {
            let at = bar(atTick: t.tick)
            guard at.onStart else { return fail("changes tempo inside bar \(at.bar) (tick \(t.tick)): a session's tempo changes on a bar") }
            let bpm = 60_000_000 / Double(max(t.microsecondsPerQuarter, 1)) * Double(at.signature.beatUnit) / 4
            if at.bar == 1 { map.tempoBPM = bpm } else { map.tempoChanges.removeAll { $0.bar == at.bar }; map.tempoChanges.append(TempoChange(bar: at.bar, bpm: bpm)) }
        }
        if let why = map.problem { return fail("has a tempo map a session cannot hold: \(why)") }
        return .success(map)
    }
}
