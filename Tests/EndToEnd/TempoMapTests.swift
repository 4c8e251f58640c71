import Foundation
import XCTest
import TapedeckCore
import TapedeckIO

/// The tempo map from the command line: `tempo` and `meter` edits, refused mistakes, and the
/// click following the map on the paced live device (`filetap`), every click on its beat's
/// frame across steps, a meter change and a ramp.
final class TempoMapTests: XCTestCase {
    let rate = 48000
    /// `--period 256 --periods 4`: OUT starts with one buffer of prefill silence.
    let prefill = 1024
    var dir: URL!

    override func setUpWithError() throws {
        dir = try Tapedeck.temporaryFolder(self)
    }

    private var session: String { dir.appendingPathComponent("t.tapedeck").path }

    @discardableResult
    private func ok(_ args: [String]) throws -> String {
        let r = try Tapedeck.run(args)
        XCTAssertEqual(r.status, 0, "tapedeck \(args.joined(separator: " ")): \(r.stderr)")
        return r.stdout
    }

    private func refused(_ args: [String], _ needle: String) throws {
        let r = try Tapedeck.run(args)
        XCTAssertEqual(r.status, 64, r.stderr)
        XCTAssertTrue(r.stderr.contains(needle), "'\(needle)' missing from: \(r.stderr)")
        XCTAssertEqual(r.stderr.split(separator: "\n").count, 1, r.stderr)
    }

    /// 120 → 90 BPM at bar 3, 4/4 → 7/8 at bar 5 (an eighth at 90 a minute), 150 at bar 7,
    /// ramping to 60 by bar 9; then 60 on.
    private func makeMap() throws {
        try ok(["new", session])
        try ok(["tempo", session, "add", "3", "90"])
        try ok(["meter", session, "add", "5.1.1", "7/8"])
        try ok(["tempo", session, "add", "7|1|0", "150"])
        let listing = try ok(["tempo", session, "add", "9", "60", "--ramp"])
        XCTAssertEqual(listing, """
            bar 1    00:00.000   120 BPM  4/4
            bar 3    00:04.000   90 BPM
            bar 5    00:09.333   7/8
            bar 7    00:18.666   150 BPM
            bar 9    00:26.666   60 BPM (ramp)

            """)
    }

    /// Beat onsets (seconds) the map puts down: a ramp's beat b at t = 120 b / (T0 + √(T0² + 240 a b)).
    private func analyticBeats() -> [(seconds: Double, downbeat: Bool)] {
        var out: [(Double, Bool)] = []
        var t = 0.0
        func steady(_ beats: Int, _ perBar: Int, _ bpm: Double) {
            for b in 0..<beats { out.append((t, b % perBar == 0)); t += 60 / bpm }
        }
        steady(8, 4, 120)
        steady(8, 4, 90)
        steady(14, 7, 90)
        let (t0, t1, count) = (150.0, 60.0, 14.0)
        let duration = 120 * count / (t0 + t1), a = (t1 - t0) / (2 * duration)
        for b in 0..<14 {
            let beat = Double(b)
            out.append((t + (b == 0 ? 0 : 120 * beat / (t0 + (t0 * t0 + 240 * a * beat).squareRoot())), b % 7 == 0))
        }
        t += duration
        steady(8, 7, 60)  // bar 9, and bar 10's downbeat where play stops
        return out
    }

    func testTheClickFollowsStepsAMeterChangeAndARampToTheFrame() throws {
        try makeMap()
        let out = dir.appendingPathComponent("click.raw").path
        let r = try Tapedeck.run(["play", session, "--click", "--to", "10.1.1", "--device", "filetap:OUT=\(out)", "--device-format", "float",
                                  "--period", "256", "--periods", "4"], environment: RecordSupport.environment, timeout: 180)
        XCTAssertEqual(r.status, 0, r.stderr)
        let raw = try Data(contentsOf: URL(fileURLWithPath: out))
        let all: [Float] = raw.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        let left = stride(from: 0, to: all.count, by: 2).map { all[$0] }
        // Onsets: the first sounding frame after at least 2000 silent ones (a click is 25 ms).
        var onsets: [(frame: Int, peak: Float)] = []
        var lastSound = Int.min / 2
        for (i, x) in left.enumerated() where x != 0 {
            if i - lastSound > 2000 { onsets.append((i - prefill, left[i..<min(i + 600, left.count)].map(abs).max() ?? 0)) }
            lastSound = i
        }
        let expected = analyticBeats()
        XCTAssertEqual(onsets.count, expected.count, "one click a beat to bar 10: \(onsets.map(\.frame))")
        let loud = onsets.map(\.peak).max() ?? 0
        for (k, (onset, beat)) in zip(onsets, expected).enumerated() {
            XCTAssertEqual(Double(onset.frame), beat.seconds * Double(rate), accuracy: 1, "click \(k)")
            XCTAssertEqual(onset.peak > loud * 0.75, beat.downbeat, "click \(k): accented on a bar's first beat only")
        }
    }

    func testMistakesInTheMapAreRefusedAndLeaveItAsItWas() throws {
        try makeMap()
        let before = try String(contentsOfFile: session + "/session.json", encoding: .utf8)
        try refused(["meter", session, "add", "8", "3/4"], "the ramp into 60 BPM at bar 9 passes the meter change at bar 8")
        try refused(["tempo", session, "add", "3.2.1", "100"], "changes sit on a bar's first beat: '3.2.1' is inside bar 3")
        try refused(["tempo", session, "remove", "4"], "no tempo change at bar 4 (changes at bars 3, 7, 9)")
        try refused(["tempo", session, "remove", "1"], "bar 1's tempo can be changed")
        try refused(["tempo", session, "add", "2", "1000"], "1000.0 BPM is outside 1...999")
        try refused(["tempo", session, "add", "1", "90", "--ramp"], "bar 1's tempo cannot ramp")
        try refused(["meter", session, "add", "2", "7/3"], "must be N/D like 4/4 or 7/8")
        try refused(["tempo", session, "add", "999999999", "120"], "lies past the timeline's end")
        try refused(["marker", session, "add", "5.8.1"], "beat must be 1...7 in 7/8 (bar 5)")
        XCTAssertEqual(try String(contentsOfFile: session + "/session.json", encoding: .utf8), before, "nothing saved")
        try ok(["marker", session, "add", "5.1.1"])
        XCTAssertTrue(try ok(["marker", session]).contains("00:09.333"), "bar 5 lies where the map puts it")
        try ok(["tempo", session, "remove", "9"])
        try ok(["meter", session, "add", "8", "3/4"])
    }

    /// A tempo change before a MIDI region moves it to keep its bars (its notes with it, in
    /// a new file), where an audio region keeps its time.
    func testAMIDIRegionKeepsItsBarsWhenTheTempoBeforeItChanges() throws {
        try ok(["new", session])
        // 32 quarter notes at 120 BPM, imported at bar 3 (4 s).
        let events = (0..<32).flatMap { q in
            [StandardMIDIFile.Event(tick: Int64(q * 480), status: 0x90, data1: 60, data2: 100),
             StandardMIDIFile.Event(tick: Int64(q * 480 + 100), status: 0x80, data1: 60, data2: 0)]
        }
        let source = StandardMIDIFile(format: 0, ticksPerQuarter: 480, tracks: [.init(name: "beats", events: events, endTick: 32 * 480)],
                                      tempos: [.init(tick: 0, microsecondsPerQuarter: 500_000)])
        let mid = dir.appendingPathComponent("beats.mid").path
        try source.write(to: mid)
        try ok(["import", session, mid, "--at", "3.1.1"])
        let r = try Tapedeck.run(["tempo", session, "add", "2", "60"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stderr.contains("1 MIDI region moved to keep its bars"), r.stderr)
        let region = try XCTUnwrap(try SessionFolder(path: session).load().tracks.first?.regions.first)
        XCTAssertEqual(region.timelineStartFrame, 288_000, "bar 3 now: a bar at 120, a bar at 60")
        XCTAssertNotEqual(region.file, "midi/beats.mid", "the notes in a new file; the old one stays")
        let out = dir.appendingPathComponent("out.mid").path
        try ok(["export", session, "--midi", "-o", out])
        let file = try StandardMIDIFile.read(path: out)
        let onsets = file.tracks.flatMap(\.events).filter { $0.status == 0x90 }.map(\.tick)
        XCTAssertEqual(onsets, (0..<32).map { Int64(8 * 960 + $0 * 960) }, "every note still on its quarter from bar 3")
    }

    /// A MIDI file with five tempo changes and a meter change, imported with --tempo-map,
    /// becomes the session's map and exports back event for event, in ticks and in seconds.
    func testAMIDIFilesTempoMapImportsOntoTheSessionAndExportsBackEventForEvent() throws {
        try ok(["new", session])
        // 120 (bars 1–2), 90 quarters (3–4), then 7/8: 50, 70, 40, 60 quarters a minute (5, 6, 7, 8).
        let bars: [Int64] = [0, 3840, 7680, 11_520, 15_360, 18_720, 22_080, 25_440, 28_800]
        let tempos = [(0, 500_000), (7680, 666_667), (15_360, 1_200_000), (18_720, 857_143), (22_080, 1_500_000), (25_440, 1_000_000)]
            .map { StandardMIDIFile.Tempo(tick: Int64($0.0), microsecondsPerQuarter: $0.1) }
        var events: [StandardMIDIFile.Event] = []
        for b in 0..<8 {
            let step: Int64 = b < 4 ? 960 : 480
            var tick = bars[b]
            while tick < bars[b + 1] {
                events.append(.init(tick: tick, status: 0x90, data1: UInt8(40 + b), data2: 90))
                events.append(.init(tick: tick + 120, status: 0x80, data1: UInt8(40 + b), data2: 0))
                tick += step
            }
        }
        var source = StandardMIDIFile(format: 0, ticksPerQuarter: 960, tracks: [.init(name: "song", events: events, endTick: bars[8])],
                                      tempos: tempos, timeSignature: TimeSignature(beatsPerBar: 4, beatUnit: 4))
        source.laterTimeSignatures = [.init(tick: 15_360, signature: TimeSignature(beatsPerBar: 7, beatUnit: 8))]
        let mid = dir.appendingPathComponent("song.mid").path
        try source.write(to: mid)
        try refused(["import", session, mid, "--tempo-map", "--at", "2"], "--tempo-map places the file at bar 1")
        let imported = try ok(["import", session, mid, "--tempo-map"])
        XCTAssertTrue(imported.contains("bar 5    00:09.333   100 BPM  7/8"), imported)
        let map = try SessionFolder(path: session).load().tempoMap
        XCTAssertEqual(map.tempoChanges.map(\.bar), [3, 5, 6, 7, 8])
        XCTAssertEqual(map.meterChanges, [MeterChange(bar: 5, signature: TimeSignature(beatsPerBar: 7, beatUnit: 8))])

        let out = dir.appendingPathComponent("out.mid").path
        try ok(["export", session, "--midi", "-o", out])
        let back = try StandardMIDIFile.read(path: out)
        XCTAssertEqual(back.tempos, source.tempos, "tempo for tempo, at their ticks")
        XCTAssertEqual(back.timeSignature, source.timeSignature)
        XCTAssertEqual(back.laterTimeSignatures, source.laterTimeSignatures)
        let exported = back.tracks.flatMap(\.events)
        XCTAssertEqual(exported.map(\.tick), events.map(\.tick), "event for event, in ticks")
        XCTAssertEqual(exported.map(\.status), events.map(\.status))
        for (a, b) in zip(exported, events) {
            XCTAssertEqual(back.seconds(atTick: a.tick), source.seconds(atTick: b.tick), accuracy: 1e-6, "and in seconds")
        }
        try refused(["import", session, mid, "mid.mid", "--tempo-map"], "--tempo-map takes the map of one MIDI file")
    }

    /// On the screen: the tempo key changes the map at the playhead's bar (a refusal is one
    /// line in the dialog, nothing changed), the ruler names each change, the transport bar
    /// shows the tempo and meter where the playhead is, and undo takes it back.
    func testTheTempoKeyEditsTheMapAtThePlayheadsBarAndUndoTakesItBack() throws {
        try ok(["new", session])
        try ok(["meter", session, "add", "3", "7/8"])
        let screen = try ScreenTmux(self, folder: dir.path, args: [session], width: 120)
        screen.waitFor("120.0 BPM  4/4")
        screen.waitFor("|3 7/8")
        screen.send("|")
        screen.waitFor("Bar 1 (120 BPM 4/4)")
        screen.send("100 ramp", "Enter")
        screen.waitFor("bar 1's tempo cannot ramp")
        for _ in 0..<8 { screen.send("BSpace") }
        screen.send("100", "Enter")
        screen.waitFor("bar 1: 100 BPM 4/4 (u undoes it)")
        screen.waitFor("100.0 BPM  4/4")
        // Eight beats on (snap beats): bar 3, in 7/8 at 100.
        for _ in 0..<8 { screen.send("Right") }
        screen.waitFor("3|1|0  100.0 BPM  7/8")
        screen.send("|")
        screen.waitFor("Bar 3 (100 BPM 7/8)")
        screen.send("150", "Enter")
        screen.waitFor("|3 150bpm 7/8")
        screen.waitFor("150.0 BPM  7/8")
        screen.send("u")
        screen.waitFor("100.0 BPM  7/8")
        screen.send("C-s")
        screen.waitFor("saved")
        let saved = try SessionFolder(path: session).load()
        XCTAssertEqual(saved.tempoBPM, 100)
        XCTAssertEqual(saved.tempoChanges, [], "the change at bar 3 was undone")
        XCTAssertEqual(saved.meterChanges, [MeterChange(bar: 3, signature: TimeSignature(beatsPerBar: 7, beatUnit: 8))])
    }
}

