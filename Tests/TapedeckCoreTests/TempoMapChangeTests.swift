import XCTest
@testable import TapedeckCore

/// Tempo and meter changes: frames of bars worked out by hand (steps and a ramp), positions
/// read back, and the changes a map refuses.
final class TempoMapChangeTests: XCTestCase {
    let four = TimeSignature(beatsPerBar: 4, beatUnit: 4)
    let sevenEight = TimeSignature(beatsPerBar: 7, beatUnit: 8)

    /// 120 BPM in 4/4 for bars 1–2, 90 from bar 3, 7/8 from bar 5 (an eighth at 90 a minute).
    var stepped: TempoMap {
        TempoMap(sampleRate: 48000, tempoBPM: 120, timeSignature: four, tempoChanges: [TempoChange(bar: 3, bpm: 90)],
                 meterChanges: [MeterChange(bar: 5, signature: sevenEight)])
    }

    func testBarsLieWhereTheStepsPutThem() {
        let map = stepped
        XCTAssertNil(map.problem)
        // Bar 3: 8 beats of 0.5 s. Bar 5: 8 more of 2/3 s. Bar 6: 7 eighths of 2/3 s.
        XCTAssertEqual(map.frame(bar: 3, beat: 1), 192_000)
        XCTAssertEqual(map.frame(bar: 5, beat: 1), 448_000)
        XCTAssertEqual(map.frame(bar: 6, beat: 1), 672_000)
        XCTAssertEqual(map.frame(bar: 5, beat: 7), 448_000 + 6 * 32_000)
        XCTAssertEqual(map.frame(bar: 2, beat: 3, beatFraction: 0.5), 156_000)
        XCTAssertTrue(map.position(ofFrame: 448_000) == (5, 1, 0))
        XCTAssertTrue(map.position(ofFrame: 671_999) == (5, 7, 959))
        XCTAssertTrue(map.position(ofFrame: 672_000) == (6, 1, 0))
        XCTAssertTrue(map.position(ofFrame: 191_999) == (2, 4, 959))
        XCTAssertEqual(map.tempo(atFrame: 100), 120)
        XCTAssertEqual(map.tempo(atFrame: 200_000), 90)
        XCTAssertEqual(map.signature(atFrame: 500_000), sevenEight)
        XCTAssertEqual(map.signature(atFrame: 447_999), four)
        XCTAssertEqual(map.beatPosition(atFrame: 672_000), 23, accuracy: 1e-9, "8 + 8 + 7 beats")
        XCTAssertEqual(map.barsBeatsTicks(ofFrame: 480_000), "5|2|0")
    }

    func testTimesTypedAsBarsFollowTheMapAndItsMeter() throws {
        let map = stepped
        XCTAssertEqual(try TimeText.frames(from: "5.1.1", tempoMap: map), 448_000)
        XCTAssertEqual(try TimeText.frames(from: "6|1|0", tempoMap: map), 672_000)
        XCTAssertEqual(try TimeText.frames(from: "5.7.1", tempoMap: map), 640_000)
        XCTAssertThrowsError(try TimeText.frames(from: "4.5.1", tempoMap: map)) { error in
            XCTAssertTrue("\(error)".contains("beat must be 1...4 in 4/4 (bar 4)"), "\(error)")
        }
        XCTAssertThrowsError(try TimeText.frames(from: "5.8.1", tempoMap: map)) { error in
            XCTAssertTrue("\(error)".contains("beat must be 1...7 in 7/8 (bar 5)"), "\(error)")
        }
    }

    /// 120 BPM ramping to 60 at bar 3: 8 beats over 120 × 8 / 180 = 16/3 s, the tempo
    /// falling linearly in time; at t seconds the beat is (120 t − 5.625 t²) / 60.
    func testARampArrivesOnItsBarAtItsTempoAndEveryPlaceOnItReadsBack() {
        let map = TempoMap(sampleRate: 48000, tempoBPM: 120, timeSignature: four,
                           tempoChanges: [TempoChange(bar: 3, bpm: 60, ramp: true), TempoChange(bar: 5, bpm: 100)])
        XCTAssertNil(map.problem)
        XCTAssertEqual(map.frame(bar: 3, beat: 1), 256_000)
        XCTAssertEqual(map.tempo(atFrame: 256_000), 60)
        XCTAssertEqual(map.tempo(atFrame: 128_000), 90, accuracy: 1e-9, "halfway in time, halfway in tempo")
        XCTAssertEqual(map.frame(bar: 5, beat: 1), 256_000 + 8 * 48_000, "8 beats at 60")
        XCTAssertEqual(map.tempo(atFrame: 256_000 + 8 * 48_000), 100)
        for k in 0...10 {
            let t = Double(k) * 16 / 3 / 10
            let beats = (120 * t - 5.625 * t * t) / 60
            let frame = Int64((t * 48000).rounded())
            XCTAssertEqual(map.beatPosition(atFrame: frame), beats, accuracy: 1e-4, "t = \(t)")
            let p = map.position(ofFrame: frame)
            let back = map.exactFrame(bar: p.bar, beat: p.beat, beatFraction: Double(p.tick) / 960)
            XCTAssertEqual(back, Double(frame), accuracy: 30, "a tick at 60 BPM is 50 frames")
            XCTAssertEqual(map.exactFrame(bar: 1, beat: 1, beatFraction: beats), t * 48000, accuracy: 1e-6)
        }
    }

    func testAConstantMapIsTheArithmeticItAlwaysWas() {
        let map = TempoMap(sampleRate: 44100, tempoBPM: 97, timeSignature: TimeSignature(beatsPerBar: 3, beatUnit: 4))
        XCTAssertEqual(map.segments.count, 1)
        for frame in [Int64(0), 12345, 9_999_999, -5000] {
            let beats = Double(frame) / map.framesPerBeat
            XCTAssertEqual(map.beatPosition(atFrame: frame), beats)
        }
        XCTAssertEqual(map.exactFrame(bar: 7, beat: 2, beatFraction: 0.25), (6 * 3 + 1 + 0.25) * map.framesPerBeat)
    }

    func testChangesAMapCannotPlayAreRefusedInOneLine() {
        func problem(_ tempos: [TempoChange], _ meters: [MeterChange] = []) -> String? {
            TempoMap(sampleRate: 48000, tempoBPM: 120, timeSignature: four, tempoChanges: tempos, meterChanges: meters).problem
        }
        XCTAssertEqual(problem([TempoChange(bar: 1, bpm: 90)]), "tempo change at bar 1: changes start at bar 2 (bar 1 has the session's tempo)")
        XCTAssertEqual(problem([TempoChange(bar: 3, bpm: 90), TempoChange(bar: 3, bpm: 80)]), "two tempo changes at bar 3")
        XCTAssertEqual(problem([TempoChange(bar: 3, bpm: 0)]), "tempo change at bar 3: 0.0 BPM is outside 1...999")
        XCTAssertEqual(problem([TempoChange(bar: 3, bpm: .nan)]), "tempo change at bar 3: nan BPM is outside 1...999")
        XCTAssertEqual(problem([], [MeterChange(bar: 2, signature: TimeSignature(beatsPerBar: 7, beatUnit: 3))]),
                       "meter change at bar 2: 7/3: the beat is a 1, 2, 4, 8, 16 or 32 note")
        XCTAssertEqual(problem([TempoChange(bar: 9, bpm: 60, ramp: true)], [MeterChange(bar: 5, signature: sevenEight)]),
                       "the ramp into 60 BPM at bar 9 passes the meter change at bar 5: start the ramp at or after it")
        XCTAssertNil(problem([TempoChange(bar: 5, bpm: 100), TempoChange(bar: 9, bpm: 60, ramp: true)], [MeterChange(bar: 5, signature: sevenEight)]))
    }

    /// Snap steps bar by bar (each its own length) and beat by beat through the changes.
    func testTheSnapGridStepsThroughTheMapsBarsAndBeats() {
        let map = stepped
        XCTAssertEqual(map.gridFrame(from: 447_000, steps: 1, snap: .bars), 448_000)
        XCTAssertEqual(map.gridFrame(from: 448_000, steps: 1, snap: .bars), 672_000, "a 7/8 bar at 90")
        XCTAssertEqual(map.gridFrame(from: 672_000, steps: -1, snap: .bars), 448_000)
        XCTAssertEqual(map.gridFrame(from: 671_999, steps: -2, snap: .bars), 320_000, "back to bar 5's start, then bar 4's")
        XCTAssertEqual(map.gridFrame(from: 190_000, steps: 2, snap: .beats), 224_000, "bar 3's first beat, then a beat at 90")
        XCTAssertEqual(map.gridFrame(from: 10, steps: -5, snap: .bars), 0, "never before bar 1")
        XCTAssertEqual(map.frame(atBeatPosition: 17), 448_000 + 32_000, accuracy: 1e-6)
    }

    /// Quantise lines lie every grid step from each bar's start, in that bar's meter.
    func testQuantiseLinesFollowTheBarsMeterAndTempo() throws {
        let map = stepped
        let eighth = try QuantizeSetting.parse(grid: "1/8", strength: nil, timeSignature: four).get()
        let quarter = try QuantizeSetting.parse(grid: "1/4", strength: nil, timeSignature: four).get()
        XCTAssertEqual(eighth.nearestLine(toFrame: 448_000 + 15_000, tempoMap: map), 448_000, accuracy: 1e-6, "an eighth is a beat in 7/8")
        XCTAssertEqual(eighth.nearestLine(toFrame: 448_000 + 17_000, tempoMap: map), 480_000, accuracy: 1e-6)
        XCTAssertEqual(quarter.nearestLine(toFrame: 448_000 + 3 * 32_000 + 100, tempoMap: map), 448_000 + 4 * 32_000, accuracy: 1e-6,
                       "two eighths from the bar's start")
        XCTAssertEqual(eighth.nearestLine(toFrame: 100_000, tempoMap: map), 96_000, accuracy: 1e-6, "4/4 at 120: an eighth is 12 000")
    }

    /// The largest and smallest values the types allow are refused or answered, never trapped
    /// (a session file with bar 2^63 − 1 trapped on overflow).
    func testExtremeBarsAndTempoAreRefusedOrAnsweredNeverTrapped() {
        for bar in [Int.max, Int.min, TempoMap.maximumBar + 1] {
            let map = TempoMap(sampleRate: 48000, tempoBPM: 120, timeSignature: four, tempoChanges: [TempoChange(bar: bar, bpm: 90)])
            XCTAssertNotNil(map.problem, "bar \(bar)")
        }
        let map = TempoMap(sampleRate: 768_000, tempoBPM: 1, timeSignature: TimeSignature(beatsPerBar: 64, beatUnit: 32),
                           tempoChanges: [TempoChange(bar: 2, bpm: 999, ramp: true)], meterChanges: [MeterChange(bar: 3, signature: four)])
        XCTAssertNil(map.problem)
        XCTAssertEqual(map.frame(bar: Int.max, beat: 1), SessionLimits.maximumTimelineFrames)
        XCTAssertEqual(map.frame(bar: Int.min, beat: Int.min), 0)
        XCTAssertTrue(map.position(ofFrame: .max).bar > 2)
        XCTAssertTrue(map.position(ofFrame: .min).bar < 1)
        XCTAssertTrue(map.beatPosition(atFrame: .max).isFinite)
        XCTAssertTrue(TempoTable(map).point(atFrame: -1e30).beatPosition.isFinite)
        XCTAssertEqual(map.gridFrame(from: .max, steps: 1, snap: .bars), SessionLimits.maximumTimelineFrames)
    }
}

