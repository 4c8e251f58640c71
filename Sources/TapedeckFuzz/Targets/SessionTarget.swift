import Foundation
import TapedeckCore
import TapedeckEngine
import TapedeckIO

/// `session.json`: decoding and validation, then what opening a session does with the values
/// (lengths, clocks, bars, gains, take lanes) and, for some cases, a save/load round trip and
/// a short export, in a session folder that holds real audio files.
struct SessionTarget: FuzzTarget {
    static let name = "session"
    let folder: SessionFolder
    let seeds: [[UInt8]]
    let mutator = Mutator(tokens: ["\"lengthFrames\" : ", "\"gainDecibels\" : ", "-", ".", "e", "[", "]", "{", "}", ",", "\"",
                                   "null", "true"].map { Array($0.utf8) })

    /// Values that sat at the edge of something before: limits, overflow, NaN spelled as
    /// JSON can hold it, paths out of the folder, escape sequences, floods of tracks.
    nonisolated(unsafe) static let extremes: [Any] = [Int64.max, Int64.min, Int64(1) << 40, (Int64(1) << 40) + 1, Int64(-1), 0, 1e308, -1e308, 10.5,
                                  Double.leastNormalMagnitude / 1e12, "x", NSNull(), true, [Any](), [String: Any](), "../secret.wav", "/etc/passwd",
                                  "audio/../../x.wav", "\u{1B}[2J\u{202E}", 9_000_000_000_000_000_000 as Int64, 1_000_000_001]

    init() throws {
        // A worker killed at the end of a run cannot remove its folder: the next run does.
        Leftovers.removeDead(in: FileManager.default.temporaryDirectory.path, prefix: "tapedeck-fuzz-")
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("tapedeck-fuzz-\(getpid())").path
        folder = SessionFolder(path: root + "/s")
        try? FileManager.default.removeItem(atPath: root)
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        try folder.create(Session())
        try FuzzAudio.writeSeedFiles(into: folder.audioFolder)
        seeds = SessionTarget.seedSessions().map { session in
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            return [UInt8]((try? encoder.encode(session)) ?? Data())
        }
    }

    static func seedSessions() -> [Session] {
        var plain = Session()
        plain.tracks = [Track(name: "Drums", regions: [Region(file: "audio/a.wav", timelineStartFrame: 0, lengthFrames: 24000, fadeOutFrames: 480)]),
                        Track(name: "Keys", inputChannels: [1, 2], gainDecibels: -6, pan: 0.3, playbackChain: "hpf:cutoff=80,reverb",
                              regions: [Region(file: "audio/b.flac", timelineStartFrame: 12000, lengthFrames: 20000, gainDecibels: -3)])]
        plain.markers = [Marker(name: "intro", frame: 0), Marker(name: "chorus", frame: 96000)]
        plain.loopRange = FrameRange(startFrame: 0, endFrame: 48000)
        plain.masterChain = "limiter:ceiling=-1"
        var takes = Session(sampleRate: 44100, tempoBPM: 96, timeSignature: TimeSignature(beatsPerBar: 6, beatUnit: 8))
        var track = Track(name: "Vocal", armed: true, monitoring: .input)
        for n in 1...3 {
            track.regions.append(Region(file: "audio/a.wav", timelineStartFrame: 4410, sourceOffsetFrame: Int64(n * 10), lengthFrames: 20000,
                                        rate: n == 3 ? 0.5 : 1, takeGroup: 1, takeNumber: n, recordedSpeed: n == 2 ? 0.7 : nil))
        }
        track.activeTakes = [TakeChoice(group: 1, take: 2)]
        takes.tracks = [track, Track(name: "NaN", regions: [Region(file: "audio/nan.wav", timelineStartFrame: 0, lengthFrames: 4800)])]
        takes.punchRange = FrameRange(startFrame: 100, endFrame: 9000)
        takes.punchEnabled = true
        return [plain, takes, Session()]
    }

    func input(seed: UInt64, index: Int) -> [UInt8] {
        var rng = FuzzRandom(seed: seed, stream: Self.name, index: index)
        let base = rng.pick(seeds)
        if rng.chance(60), let json = try? JSONSerialization.jsonObject(with: Data(base)) {
            var value: Any = json
            for _ in 0..<(1 + rng.below(3)) { value = SessionTarget.mutate(value, &rng, depth: 0) }
            // A bare scalar at the top is not something JSONSerialization writes (it traps).
            if JSONSerialization.isValidJSONObject(value), let data = try? JSONSerialization.data(withJSONObject: value) {
                return [UInt8](data)
            }
        }
        return mutator.mutate(base, &rng)
    }

    /// Replaces one value somewhere in the JSON tree (or floods a list).
    static func mutate(_ value: Any, _ rng: inout FuzzRandom, depth: Int) -> Any {
        if var object = value as? [String: Any], !object.isEmpty, depth < 8, rng.below(6) != 0 {
            let key = object.keys.sorted()[rng.below(object.count)]
            if rng.chance(5) { object[key] = nil } else { object[key] = mutate(object[key]!, &rng, depth: depth + 1) }
            return object
        }
        if var list = value as? [Any], depth < 8 {
            if list.isEmpty || rng.chance(4) {
                // A flood: the same element many times (10^5 tracks hung the screen once).
                let element = list.first ?? pick(&rng)
                return Array(repeating: element, count: rng.pick([2, 2, 2, 1025, 10_001]))
            }
            let i = rng.below(list.count)
            list[i] = mutate(list[i], &rng, depth: depth + 1)
            return list
        }
        return pick(&rng)
    }

    private static func pick(_ rng: inout FuzzRandom) -> Any { extremes[rng.below(extremes.count)] }

    func check(_ input: [UInt8], index: Int) -> String? {
        let session: Session
        do { session = try SessionFolder.decode(Data(input), path: "session.json") } catch {
            let reason = error.reason
            if let problem = Oracle.unclear(error.description, naming: ["session.json: "]) { return problem }
            let namesField = reason.contains(": ") || reason.hasPrefix("not valid JSON (") || reason.hasPrefix("the top level")
            return namesField ? nil : "names no field: \(error.description.terminalSafe)"
        }
        // What opening the session computes from its values: none of it may trap.
        let map = session.tempoMap
        _ = map.barsBeatsTicks(ofFrame: session.endFrame)
        _ = TimeText.clock(frames: session.endFrame, sampleRate: session.sampleRate)
        for track in session.tracks {
            _ = Decibels.text(track.gainDecibels)
            _ = track.activeRegions
            for r in track.regions {
                _ = Decibels.text(r.gainDecibels)
                _ = TimeText.clock(frames: r.timelineEndFrame, sampleRate: session.sampleRate)
            }
        }
        guard index % 64 == 0 else { return nil }
        do {
            try folder.save(session)
            guard try folder.load() == session else { return "a saved session did not load back equal" }
            let out = folder.path + "/exports/fuzz.wav"
            let request = Mixdown.Request(session: session, folder: folder, range: FrameRange(startFrame: 0, endFrame: 4800),
                                          outputPath: out, container: .wav, encoding: .float32, workerCount: 1)
            let summary = try Mixdown(request).run()
            defer { unlink(out) }
            if summary.peakDecibels.isNaN || summary.peakDecibels == .infinity { return "export peak \(summary.peakDecibels)" }
            if let bad = try FuzzAudio.nonFinite(in: out) { return bad }
        } catch let error as ChainContextError {
            return Oracle.unclear(error.description, lines: 3)
        } catch {
            return Oracle.unclear("\(error)")
        }
        return nil
    }
}
