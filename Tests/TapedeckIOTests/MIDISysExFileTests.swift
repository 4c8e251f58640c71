import XCTest
import TapedeckCore
@testable import TapedeckIO

/// SysEx in Standard MIDI Files and in the session's sequences: kept byte for byte, cut and
/// quantised as the model says, and a damaged length refused in one line.
final class MIDISysExFileTests: XCTestCase {
    /// A format-0 file at 480 ticks a quarter with one track body `body` (no end-of-track
    /// added: the body says what it says).
    private func file(track body: [UInt8]) -> [UInt8] {
        let n = body.count
        return Array("MThd".utf8) + [0, 0, 0, 6, 0, 0, 0, 1, 0x01, 0xE0]
            + Array("MTrk".utf8) + [UInt8(n >> 24), UInt8((n >> 16) & 0xFF), UInt8((n >> 8) & 0xFF), UInt8(n & 0xFF)] + body
    }

    func testSysExIsReadAndWrittenByteForByte() throws {
        let long: [UInt8] = [0x43] + (0..<150).map { UInt8($0 % 128) } + [0xF7]
        let body: [UInt8] = [0x00, 0xF0, 0x03, 0x7E, 0x09, 0xF7,          // tick 0
                             0x00, 0x90, 0x3C, 0x40,
                             0x60, 0xF0, 0x81, 0x18] + long               // tick 96, length 152 in two bytes
            + [0x10, 0xF7, 0x02, 0x01, 0xF7,                              // tick 112: a continuation
               0x10, 0x80, 0x3C, 0x00, 0x00, 0xFF, 0x2F, 0x00]
        let parsed = try StandardMIDIFile.parse(file(track: body), path: "in.mid")
        let expected = [StandardMIDIFile.SysEx(tick: 0, data: [0x7E, 0x09, 0xF7]),
                        StandardMIDIFile.SysEx(tick: 96, data: long),
                        StandardMIDIFile.SysEx(tick: 112, status: 0xF7, data: [0x01, 0xF7])]
        XCTAssertEqual(parsed.tracks[0].sysEx, expected)
        XCTAssertEqual(parsed.tracks[0].events.count, 2)
        // Written and read again: the same SysEx at the same ticks.
        XCTAssertEqual(try StandardMIDIFile.parse(parsed.bytes(), path: "again.mid").tracks[0].sysEx, expected)
        // Through frames (120 BPM, 48 kHz: 50 frames a tick) and back at 480 ticks a quarter.
        let sequence = parsed.sequence(track: 0, sampleRate: 48000)
        XCTAssertEqual(sequence.sysEx.map(\.frame), [0, 4800, 5600])
        let map = TempoMap(sampleRate: 48000, tempoBPM: 120, timeSignature: TimeSignature(beatsPerBar: 4, beatUnit: 4))
        let written = StandardMIDIFile.file(of: sequence, tempoMap: map, name: nil, ticksPerQuarter: 480)
        XCTAssertEqual(written.tracks[0].sysEx, expected)
    }

    func testADamagedSysExLengthIsRefusedInOneLineNamingTheFileAndTheByte() throws {
        let dir = makeTempFolder(self)
        let cases: [(String, [UInt8], String)] = [
            // Claims 100 bytes where three remain.
            ("short", [0x00, 0xF0, 0x64, 0x7E, 0x09, 0xF7], "SysEx at tick 0 claims 100 bytes"),
            // The largest four-byte length (2^28 - 1): refused before anything is reserved.
            ("huge", [0x00, 0xF0, 0xFF, 0xFF, 0xFF, 0x7F, 0x01, 0xF7], "claims 268435455 bytes"),
            // Five length bytes: past what the format allows.
            ("vlq", [0x00, 0xF7, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F, 0x01], "longer than four bytes"),
        ]
        for (name, body, expected) in cases {
            let path = dir + "/\(name).mid"
            writeBytes(file(track: body), to: path)
            XCTAssertThrowsError(try StandardMIDIFile.read(path: path), name) { error in
                let text = "\(error)"
                XCTAssertTrue(text.contains(expected), "\(name): \(text)")
                XCTAssertTrue(text.contains(path), "names the file: \(text)")
                XCTAssertTrue(text.contains("at byte "), "names the byte: \(text)")
                XCTAssertFalse(text.contains("\n"), "one line: \(text)")
            }
        }
        // A SysEx that runs into the next chunk is refused too, not read across it.
        let overrun = file(track: [0x00, 0xF0, 0x05, 0x01]) + Array("MTrk".utf8) + [0, 0, 0, 4, 0x00, 0xFF, 0x2F, 0x00]
        XCTAssertThrowsError(try StandardMIDIFile.parse(overrun, path: "overrun.mid")) { error in
            XCTAssertTrue("\(error)".contains("only 1 remain in its track"), "\(error)")
        }
    }

    func testACutKeepsTheSysExInsideItAndQuantiseLeavesItWhereItWas() {
        let sequence = MIDISequence(events: [.init(frame: 10, status: 0x90, data1: 60, data2: 100),
                                             .init(frame: 300, status: 0x80, data1: 60)],
                                    sysEx: [.init(frame: 0, data: [0x01, 0xF7]), .init(frame: 150, data: [0x02, 0xF7]),
                                            .init(frame: 400, data: [0x03, 0xF7])],
                                    lengthFrames: 500)
        let cut = sequence.clipped(offset: 100, length: 200)
        XCTAssertEqual(cut.sysEx, [.init(frame: 50, data: [0x02, 0xF7])], "only the one inside, moved with the cut")
        let moved = sequence.quantized(gridFrames: 100, strength: 1)
        XCTAssertEqual(moved.events.first?.frame, 0, "the note moves")
        XCTAssertEqual(moved.sysEx, sequence.sysEx, "SysEx stays at its time")
    }
}
