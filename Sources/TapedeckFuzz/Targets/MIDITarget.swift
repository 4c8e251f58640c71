import Foundation
import TapedeckCore
import TapedeckIO

/// Standard MIDI Files with damaged headers, lengths, running status and events, read the
/// way `import` reads them (the whole file, then every track as frames) and, every so often,
/// imported into a session and exported again.
struct MIDITarget: FuzzTarget {
    static let name = "midi"
    let root: String
    let folder: SessionFolder
    let seeds: [[UInt8]]
    let mutator = Mutator(tokens: ["MThd", "MTrk", "\u{FF}\u{2F}\0", "\u{FF}\u{51}\u{3}", "\u{FF}\u{58}\u{4}", "\u{F0}", "\u{F7}",
                                   "\u{FF}\u{FF}\u{FF}\u{7F}", "\u{90}", "\u{80}", "\0\0\0\u{6}", "\u{81}\u{80}\u{80}\u{80}\0"].map { Array($0.utf8) })

    init() throws {
        // A worker killed at the end of a run cannot remove its folder: the next run does.
        Leftovers.removeDead(in: FileManager.default.temporaryDirectory.path, prefix: "tapedeck-fuzz-midi-")
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("tapedeck-fuzz-midi-\(getpid())").path
        root = dir
        try? FileManager.default.removeItem(atPath: dir)
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        folder = SessionFolder(path: dir + "/s")
        try folder.create(Session())
        seeds = MIDITarget.seedFiles()
    }

    /// A format-0 file with a tempo and notes, and a format-1 file of two tracks with
    /// controllers, program changes, pitch bend and SysEx, written by Tapedeck.
    static func seedFiles() -> [[UInt8]] {
        let map = TempoMap(sampleRate: 48000, tempoBPM: 97, timeSignature: TimeSignature(beatsPerBar: 7, beatUnit: 8))
        let notes = MIDISequence(events: (0..<24).flatMap { k -> [MIDISequence.Event] in
            let f = Int64(k) * 3000
            return [.init(frame: f, status: 0x90, data1: UInt8(40 + k), data2: 100), .init(frame: f + 2000, status: 0x80, data1: UInt8(40 + k))]
        }, lengthFrames: 80_000)
        var one = StandardMIDIFile.file(of: notes, tempoMap: map, name: "lead", ticksPerQuarter: 480)
        let two = MIDISequence(events: [.init(frame: 0, status: 0xC3, data1: 19), .init(frame: 10, status: 0xB3, data1: 7, data2: 99),
                                        .init(frame: 500, status: 0xE3, data1: 0, data2: 90), .init(frame: 900, status: 0xD3, data1: 40)],
                                lengthFrames: 1000)
        var format1 = one
        format1.format = 1
        format1.tracks.append(StandardMIDIFile.file(of: two, tempoMap: map, name: "pad", ticksPerQuarter: 480).tracks[0])
        one.format = 0
        return [one.bytes(), format1.bytes()]
    }

    func input(seed: UInt64, index: Int) -> [UInt8] {
        mutator.mutate(oneOf: seeds, stream: Self.name, seed: seed, index: index, headBytes: 40, headPercent: 50)
    }

    func check(_ input: [UInt8], index: Int) -> String? {
        let path = root + "/case.mid"
        if let problem = Mutator.writeCase(input, to: path) { return problem }
        do {
            let file = try StandardMIDIFile.read(path: path)
            for t in file.tracks.indices {
                let sequence = file.sequence(track: t, sampleRate: 48000)
                if sequence.lengthFrames < 0 { return "track \(t) lasts \(sequence.lengthFrames) frames" }
                _ = sequence.notes
            }
        } catch {
            return Oracle.unclear(error.description, naming: ["case.mid"])
        }
        if index % 4 == 0 {
            do {
                let imported = try MIDIImporter.importFile(source: path, folder: folder, tempoMap: Session().tempoMap)
                var session = Session()
                session.tracks = imported.tracks.map {
                    Track(name: $0.name, regions: [Region(file: $0.file, timelineStartFrame: 0, lengthFrames: $0.lengthFrames, isMIDI: true)], isMIDI: true)
                }
                if let problem = SessionValidator.problem(in: session) { return "import made an invalid session: \(problem)" }
                _ = try MIDIExporter.export(session: session, folder: folder, to: root + "/out.mid")
                for t in imported.tracks { unlink(folder.absolutePath(of: t.file)) }
            } catch {
                if let problem = Oracle.unclear("\(error)", naming: ["case.mid", "MIDI", "midi"]) { return problem }
            }
        }
        return nil
    }
}
