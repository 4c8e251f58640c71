import TapedeckCore

/// Times and ranges as typed on the command line (`--at`, `--range`, `--duration`, …).
struct TimeTarget: FuzzTarget {
    static let name = "time"
    let seeds = ["12.5", "1:02.5", "1:00:00", "90000f", "4.2.1", "4.2.1.120", "3|2|480", "3|2", "1m30s", "500ms", "1h2m3.5s",
                 "2s", ".5", "0", "1-2", "1:00-1:30", "5.1.1-9.1.1", "2s-", "3|1|0-5|1|0", "90000f-180000f", "1m-1m30s"]
    let mutator = Mutator(tokens: ["|", ":", ".", "-", "f", "s", "ms", "m", "h", "1", "0", "960", "99999999999999", "1.1.1"].map { Array($0.utf8) })
    let maps = [TempoMap(sampleRate: 48000, tempoBPM: 120, timeSignature: TimeSignature(beatsPerBar: 4, beatUnit: 4)),
                TempoMap(sampleRate: 768_000, tempoBPM: 1, timeSignature: TimeSignature(beatsPerBar: 64, beatUnit: 32)),
                TempoMap(sampleRate: 1000, tempoBPM: 999, timeSignature: TimeSignature(beatsPerBar: 1, beatUnit: 1)),
                // A map with a step, a meter change and a ramp: times typed as bars go through it.
                TempoMap(sampleRate: 48000, tempoBPM: 120, timeSignature: TimeSignature(beatsPerBar: 4, beatUnit: 4),
                         tempoChanges: [TempoChange(bar: 3, bpm: 90), TempoChange(bar: 9, bpm: 999, ramp: true)],
                         meterChanges: [MeterChange(bar: 5, signature: TimeSignature(beatsPerBar: 7, beatUnit: 8))])]

    init() {}

    func input(seed: UInt64, index: Int) -> [UInt8] {
        mutator.mutate(oneOf: seeds, stream: Self.name, seed: seed, index: index)
    }

    func check(_ input: [UInt8], index: Int) -> String? {
        let text = Oracle.text(input)
        let map = maps[index % maps.count]
        let limit = SessionLimits.maximumTimelineFrames
        do {
            let frame = try TimeText.frames(from: text, tempoMap: map, field: "--at")
            if frame < 0 || frame > limit { return "'\(text.terminalSafe)' gave frame \(frame), outside 0...2^40" }
            _ = TimeText.clock(frames: frame, sampleRate: map.sampleRate)
            _ = map.barsBeatsTicks(ofFrame: frame)
        } catch {
            if let problem = Oracle.unclear(error.description, naming: ["'\(text.terminalSafe)'"]) { return problem }
            if !error.description.hasPrefix("--at: ") { return "does not name the option: \(error.description)" }
        }
        do {
            let range = try TimeText.range(from: text, tempoMap: map, defaultEnd: limit, field: "--range")
            if range.startFrame < 0 || range.endFrame > limit || range.endFrame <= range.startFrame {
                return "'\(text.terminalSafe)' gave range \(range.startFrame)-\(range.endFrame)"
            }
        } catch {
            if let problem = Oracle.unclear(error.description, naming: ["--range"]) { return problem }
        }
        return nil
    }
}
