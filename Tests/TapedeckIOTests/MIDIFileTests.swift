import XCTest
import TapedeckCore
@testable import TapedeckIO

/// Standard MIDI Files against midicsv/csvmidi (an independent reader and writer), and the
/// session's MIDI files: import, region reading, quantise, export.
final class MIDIFileTests: XCTestCase {
    private func tool(_ name: String) throws -> String {
        for dir in ["/usr/bin", "/usr/local/bin"] where FileManager.default.isExecutableFile(atPath: "\(dir)/\(name)") { return "\(dir)/\(name)" }
        throw XCTSkip("\(name) is not installed (apt-get install midicsv; make test installs it)")
    }

    /// Runs a tool to its end; its stdout.
    @discardableResult
    private func run(_ path: String, _ args: [String]) throws -> String {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: path)
        p.arguments = args
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        XCTAssertEqual(p.terminationStatus, 0, "\(path) \(args)")
        return String(decoding: data, as: UTF8.self)
    }

    /// A .mid written by csvmidi from `csv` lines.
    private func midi(_ lines: [String], in dir: String, name: String = "in") throws -> String {
        let csv = dir + "/\(name).csv", mid = dir + "/\(name).mid"
        try (lines.joined(separator: "\n") + "\n").write(toFile: csv, atomically: true, encoding: .utf8)
        try run(try tool("csvmidi"), [csv, mid])
        return mid
    }

    private let song = [
        "0, 0, Header, 1, 2, 480",
        "1, 0, Start_track", "1, 0, Tempo, 600000", "1, 0, Time_signature, 3, 2, 24, 8", "1, 0, End_track",
        "2, 0, Start_track", "2, 0, Title_t, \"Piano\"",
        "2, 0, Note_on_c, 0, 60, 100", "2, 240, Note_off_c, 0, 60, 0", "2, 240, Control_c, 0, 7, 90",
        "2, 480, Note_on_c, 9, 36, 127", "2, 960, Note_on_c, 9, 36, 0", "2, 960, Pitch_bend_c, 0, 9000",
        "2, 1000, Program_c, 0, 19", "2, 1920, End_track",
        "0, 0, End_of_file",
    ]

    func testAFileCsvmidiWroteReadsEventForEventIncludingRunningStatus() throws {
        let dir = makeTempFolder(self)
        let file = try StandardMIDIFile.read(path: try midi(song, in: dir))
        XCTAssertEqual(file.format, 1)
        XCTAssertEqual(file.ticksPerQuarter, 480)
        XCTAssertEqual(file.tempos, [.init(tick: 0, microsecondsPerQuarter: 600_000)])
        XCTAssertEqual(file.timeSignature, TimeSignature(beatsPerBar: 3, beatUnit: 4))
        XCTAssertEqual(file.tracks[1].name, "Piano")
        XCTAssertEqual(file.tracks[1].events, [
            .init(tick: 0, status: 0x90, data1: 60, data2: 100), .init(tick: 240, status: 0x80, data1: 60, data2: 0),
            .init(tick: 240, status: 0xB0, data1: 7, data2: 90), .init(tick: 480, status: 0x99, data1: 36, data2: 127),
            .init(tick: 960, status: 0x99, data1: 36, data2: 0), .init(tick: 960, status: 0xE0, data1: UInt8(9000 & 0x7F), data2: UInt8(9000 >> 7)),
            .init(tick: 1000, status: 0xC0, data1: 19, data2: 0),
        ])
        XCTAssertEqual(file.tracks[1].endTick, 1920)
        // 100 BPM (600000 µs a quarter): tick 480 is 0.6 s, at 48 kHz frame 28800.
        let seq = file.sequence(track: 1, sampleRate: 48000)
        XCTAssertEqual(seq.events.map(\.frame), [0, 14400, 14400, 28800, 57600, 57600, 60000])
        XCTAssertEqual(seq.lengthFrames, 115200)
    }

    func testAFileTapedeckWritesReadsBackInMidicsvAsWritten() throws {
        let dir = makeTempFolder(self)
        let map = TempoMap(sampleRate: 48000, tempoBPM: 120, timeSignature: TimeSignature(beatsPerBar: 4, beatUnit: 4))
        let seq = MIDISequence(events: [.init(frame: 0, status: 0x90, data1: 60, data2: 100), .init(frame: 12001, status: 0x80, data1: 60),
                                        .init(frame: 24000, status: 0xC5, data1: 33)], lengthFrames: 48000)
        let file = StandardMIDIFile.file(of: seq, tempoMap: map, name: "Bass")
        XCTAssertEqual(file.ticksPerQuarter, 24000, "a tick is a frame at 120 BPM, 48 kHz")
        try file.write(to: dir + "/out.mid")
        let csv = try run(try tool("midicsv"), [dir + "/out.mid"]).split(separator: "\n").map { $0.replacingOccurrences(of: " ", with: "") }
        XCTAssertEqual(csv, ["0,0,Header,0,1,24000", "1,0,Start_track", "1,0,Title_t,\"Bass\"", "1,0,Tempo,500000",
                             "1,0,Time_signature,4,2,24,8", "1,0,Note_on_c,0,60,100", "1,12001,Note_off_c,0,60,0",
                             "1,24000,Program_c,5,33", "1,48000,End_track", "0,0,End_of_file"])
        XCTAssertEqual(try MIDIRegionFile.read(path: dir + "/out.mid", sampleRate: 48000), seq, "frame-exact both ways")
    }

    func testDamagedFilesAreRefusedNamingWhatIsWrong() throws {
        let dir = makeTempFolder(self)
        let good = try Data(contentsOf: URL(fileURLWithPath: try midi(song, in: dir)))
        let cases: [(String, [UInt8], String)] = [
            ("empty", [], "empty"),
            ("text", Array("hello world, no midi".utf8), "no MThd"),
            ("cut", Array(good.prefix(40)), "claims"),
            ("badvlq", Array(good.prefix(14)) + Array("MTrk".utf8) + [0x00, 0x00, 0x00, 0x08, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F, 0x90, 0x3C, 0x40], "longer than four bytes"),
            ("nodata", Array(good.prefix(14)) + Array("MTrk".utf8) + [0x00, 0x00, 0x00, 0x03, 0x00, 0x3C, 0x40], "no status"),
        ]
        for (name, bytes, expected) in cases {
            let path = dir + "/\(name).mid"
            writeBytes(bytes, to: path)
            XCTAssertThrowsError(try StandardMIDIFile.read(path: path), name) { error in
                XCTAssertTrue("\(error)".contains(expected), "\(name): \(error)")
                XCTAssertTrue("\(error)".contains(path), "names the file")
            }
        }
    }

    func testImportExportRoundTripsEventForEvent() throws {
        let dir = makeTempFolder(self)
        let folder = SessionFolder(path: dir + "/s")
        var session = Session(sampleRate: 44100, tempoBPM: 100, timeSignature: TimeSignature(beatsPerBar: 3, beatUnit: 4))
        try folder.create(session)
        let source = try midi(song, in: dir)
        let (tracks, tempo) = try MIDIImporter.importFile(source: source, folder: folder, tempoMap: session.tempoMap)
        XCTAssertEqual(tempo, 100, accuracy: 1e-9)
        XCTAssertEqual(tracks.count, 1)
        XCTAssertEqual(tracks[0].name, "Piano")
        XCTAssertEqual(tracks[0].noteCount, 2)
        session.tracks = [Track(name: tracks[0].name, regions: [Region(file: tracks[0].file, timelineStartFrame: 0,
                                                                       lengthFrames: tracks[0].lengthFrames, isMIDI: true)], isMIDI: true)]
        let out = dir + "/out.mid"
        let summary = try MIDIExporter.export(session: session, folder: folder, to: out)
        XCTAssertEqual(summary.eventCount, 7)
        // Compared by an independent reader: the same messages at the same ticks (the
        // session's tempo is the file's; export writes 960 ticks a quarter, the file had 480).
        let lines = try run(try tool("midicsv"), [out]).split(separator: "\n").map { $0.replacingOccurrences(of: " ", with: "") }
        let events = lines.filter { $0.contains("_c,") }
        XCTAssertEqual(events, ["2,0,Note_on_c,0,60,100", "2,480,Note_off_c,0,60,0", "2,480,Control_c,0,7,90",
                                "2,960,Note_on_c,9,36,127", "2,1920,Note_on_c,9,36,0", "2,1920,Pitch_bend_c,0,9000",
                                "2,2000,Program_c,0,19"], "every message as it was, a note-on of velocity 0 included")
        XCTAssertTrue(lines.contains("1,0,Tempo,600000"))
        XCTAssertTrue(lines.contains("2,0,Title_t,\"Piano\""))
    }

    func testQuantiseWritesANewFileAndKeepsTheOld() throws {
        let dir = makeTempFolder(self)
        let folder = SessionFolder(path: dir + "/s")
        let session = Session(sampleRate: 48000, tempoBPM: 120)
        try folder.create(session)
        let seq = MIDISequence(events: [.init(frame: 6100, status: 0x90, data1: 60, data2: 90), .init(frame: 7000, status: 0x80, data1: 60)], lengthFrames: 24000)
        let file = try MIDIRegionFile.writeNew(seq, base: "take", name: nil, folder: folder, tempoMap: session.tempoMap)
        XCTAssertEqual(file, "midi/take.mid")
        let region = Region(file: file, timelineStartFrame: 0, lengthFrames: 24000, isMIDI: true)
        let q = try MIDIRegionFile.quantized(region, setting: try QuantizeSetting.parse(grid: "1/16", strength: "100%", timeSignature: session.timeSignature).get(),
                                             folder: folder, tempoMap: session.tempoMap)
        XCTAssertEqual(q.file, "midi/take-q.mid")
        XCTAssertTrue(FileManager.default.fileExists(atPath: folder.absolutePath(of: file)), "the old file stays (undo)")
        let notes = try MIDIRegionFile.sequence(of: q, folder: folder, sampleRate: 48000).notes
        XCTAssertEqual(notes.map(\.startFrame), [6000])
        XCTAssertEqual(notes.map(\.endFrame), [6900])
        let again = try MIDIRegionFile.quantized(q, setting: try QuantizeSetting.parse(grid: "1/8", strength: nil, timeSignature: session.timeSignature).get(),
                                                 folder: folder, tempoMap: session.tempoMap)
        XCTAssertEqual(again.file, "midi/take-q-2.mid", "quantising again does not pile up -q-q")
    }

    /// A file with as many tempo changes as notes (one of each a tick) converts to frames in
    /// one walk through the tempo map, each note where `seconds(atTick:)` puts it; walking the
    /// whole map again for every note took about 10^10 steps here (minutes; a crafted file at
    /// the size limit, hours). Tempo changes count towards the event limit.
    func testManyTempoChangesConvertInOneWalk() throws {
        let count = 150_000
        var body: [UInt8] = []
        for i in 0..<count {
            let micros = 400_000 + (i % 200) * 1000
            body += [1, 0xFF, 0x51, 3, UInt8(micros >> 16), UInt8((micros >> 8) & 0xFF), UInt8(micros & 0xFF)]
            body += [0, 0x90, 60, 64]
        }
        body += [0, 0xFF, 0x2F, 0]
        let length = body.count
        let bytes: [UInt8] = Array("MThd".utf8) + [0, 0, 0, 6, 0, 1, 0, 1, 0x01, 0xE0] + Array("MTrk".utf8)
            + [UInt8(length >> 24), UInt8((length >> 16) & 0xFF), UInt8((length >> 8) & 0xFF), UInt8(length & 0xFF)] + body
        let file = try StandardMIDIFile.parse(bytes, path: "many-tempos.mid")
        XCTAssertEqual(file.tempos.count, count)
        let start = Date()
        let sequence = file.sequence(track: 0, sampleRate: 48000)
        XCTAssertLessThan(Date().timeIntervalSince(start), 5, "one walk through the tempo map, not one per note")
        XCTAssertEqual(sequence.events.count, count)
        for i in stride(from: 0, to: count, by: 997) {
            let expected = Int64((file.seconds(atTick: Int64(i + 1)) * 48000).rounded())
            XCTAssertEqual(sequence.events[i].frame, expected, "note \(i)")
        }
    }
}
