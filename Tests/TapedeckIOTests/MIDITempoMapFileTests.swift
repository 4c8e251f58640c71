import XCTest
import TapedeckCore
@testable import TapedeckIO

/// `export --midi` through a tempo map: the file carries the map's tempo and meter changes,
/// events sit on their quarter-note ticks, and read back every event lands on its frame.
final class MIDITempoMapFileTests: XCTestCase {
    /// 120 BPM 4/4; 90 from bar 3; 7/8 from bar 5 (eighths at 90: 45 quarters a minute);
    /// 150 from bar 7 ramping to 60 by bar 9.
    let map = TempoMap(sampleRate: 48000, tempoBPM: 120, timeSignature: TimeSignature(beatsPerBar: 4, beatUnit: 4),
                       tempoChanges: [TempoChange(bar: 3, bpm: 90), TempoChange(bar: 7, bpm: 150), TempoChange(bar: 9, bpm: 60, ramp: true)],
                       meterChanges: [MeterChange(bar: 5, signature: TimeSignature(beatsPerBar: 7, beatUnit: 8))])

    func testTheMapsChangesAreWrittenAndEveryNoteComesBackOnItsFrame() throws {
        // A short note on every beat of bars 1–9.
        var events: [MIDISequence.Event] = []
        for bar in 1...9 {
            for beat in 1...map.signature(atBar: bar).beatsPerBar {
                let frame = map.frame(bar: bar, beat: beat)
                events.append(.init(frame: frame, status: 0x90, data1: UInt8(36 + bar), data2: 100))
                events.append(.init(frame: frame + 100, status: 0x80, data1: UInt8(36 + bar), data2: 0))
            }
        }
        let sequence = MIDISequence(events: events, lengthFrames: map.frame(bar: 10, beat: 1))
        let written = StandardMIDIFile.file(of: sequence, tempoMap: map, from: 0, name: "beats")
        let file = try StandardMIDIFile.parse(written.bytes(), path: "map.mid")

        XCTAssertEqual(file.ticksPerQuarter, 960)
        XCTAssertEqual(file.timeSignature, TimeSignature(beatsPerBar: 4, beatUnit: 4))
        XCTAssertEqual(file.laterTimeSignatures, [.init(tick: 16 * 960, signature: TimeSignature(beatsPerBar: 7, beatUnit: 8))], "bar 5 after 16 quarters")
        XCTAssertEqual(Array(file.tempos.prefix(4)).map(\.tick), [0, 8 * 960, 16 * 960, 23 * 960], "bars 1, 3, 5 and 7")
        XCTAssertEqual(Array(file.tempos.prefix(3)).map(\.microsecondsPerQuarter), [500_000, 666_667, 1_333_333],
                       "120, 90, 90 eighths (45 quarters)")
        XCTAssertEqual(Double(file.tempos[3].microsecondsPerQuarter), 800_000, accuracy: 8000, "the ramp starts at 150 eighths (75 quarters)")
        XCTAssertEqual(file.tempos.count, 3 + 7 * 8 + 1, "the ramp over bars 7–8 (7 quarters) in thirty-seconds, then 60 at bar 9")
        XCTAssertEqual(file.tempos.last?.tick, 30 * 960)
        XCTAssertEqual(file.tempos.last?.microsecondsPerQuarter, 2_000_000, "60 eighths: 30 quarters a minute")
        let notes = file.tracks[0].events.filter { $0.status == 0x90 }
        XCTAssertEqual(notes.count, 8 + 8 + 14 + 14 + 7)
        XCTAssertEqual(notes[16].tick, 16 * 960, "bar 5's first eighth")
        XCTAssertEqual(notes[17].tick, 16 * 960 + 480, "its second")

        let back = file.sequence(track: 0, sampleRate: 48000)
        XCTAssertEqual(back.events.count, sequence.events.count)
        for (a, b) in zip(back.events, sequence.events) {
            // On a beat (a tick exactly): to the frame. Between (a note's end): within half a
            // tick at the tempo there (960 ticks a quarter: 40 frames at 75 quarters a minute).
            let quarterBPM = map.tempo(atFrame: b.frame) * 4 / Double(map.signature(atFrame: b.frame).beatUnit)
            let halfTick = 48000 * 60 / quarterBPM / 960 / 2
            XCTAssertEqual(Double(a.frame), Double(b.frame), accuracy: b.status == 0x90 ? 1 : halfTick + 1, "note \(b.data1) at \(b.frame)")
        }
    }
}
