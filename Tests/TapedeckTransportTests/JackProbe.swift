import CJACKProbe
import Foundation
import TapedeckCore
import TapedeckEngine
import TapedeckIO
import TapedeckDevices
import XCTest

/// A JACK client of the test's own (C, in `CJACKProbe`): it plays a cosine from a transport
/// frame on, and keeps what it hears with the transport frame of every sample.
final class JackProbe {
    private let raw: OpaquePointer
    /// The client's name.
    let name: String

    /// A client with `inputs` ports `in_N` and `outputs` ports `out_N` playing `toneHz` at
    /// `amplitude` from transport frame `onset`; keeps up to `seconds` of input.
    init(name: String, inputs: Int = 0, outputs: Int = 0, toneHz: Double = 1000, amplitude: Float = 0.25,
         onset: Int64 = 0, seconds: Int = 20) throws {
        guard let p = td_jack_probe_open(name, Int32(inputs), Int32(outputs), toneHz, amplitude, onset, Int64(seconds * 48000)) else {
            throw XCTSkip("the test's JACK client '\(name)' could not open")
        }
        raw = p
        self.name = String(cString: td_jack_probe_client_name(p))
    }

    deinit { td_jack_probe_close(raw) }

    /// Connects two ports by full name.
    func connect(_ source: String, _ destination: String) {
        XCTAssertEqual(td_jack_probe_connect(raw, source, destination), 0, "jack_connect \(source) \(destination)")
    }

    /// What input `input` heard, and the transport frame of every sample (-1: standing).
    func heard(input: Int = 0) -> (samples: [Float], frames: [Int64]) {
        let n = Int(td_jack_probe_count(raw))
        let s = Array(UnsafeBufferPointer(start: td_jack_probe_samples(raw, Int32(input)), count: n))
        let f = Array(UnsafeBufferPointer(start: td_jack_probe_frames(raw), count: n))
        return (s, f)
    }

    /// What ``heard(input:)`` holds, less the samples JACK itself is unsure of: a cycle that
    /// ran late can read the clock and transport of the cycle after it (JACK2 switches them
    /// each period whether or not every client has finished), so the stamps on either side
    /// of a break in the listener's own transport frames or frame times may be a period off.
    /// Samples within `margin` frames of such a break are left out; `uncertain` says how many.
    func heardWhereJackIsSure(input: Int = 0, margin: Int = 1024) -> (samples: [Float], frames: [Int64], uncertain: Int) {
        let heard = heard(input: input)
        let keep = sure(margin: margin)
        var samples: [Float] = [], frames: [Int64] = []
        for i in keep.indices where keep[i] {
            samples.append(heard.samples[i])
            frames.append(heard.frames[i])
        }
        return (samples, frames, keep.count - samples.count)
    }

    /// For every sample kept, whether JACK is sure of its stamps (see
    /// ``heardWhereJackIsSure(input:margin:)``): false within `margin` frames of a break in
    /// the listener's own frame times, or in its transport frames other than while the
    /// transport stands. `clockWhileStanding`: a break in the frame times while the
    /// transport stands counts too (for a test that times what it hears then by the clock).
    func sure(margin: Int = 1024, clockWhileStanding: Bool = false) -> [Bool] {
        let frames = heard().frames, clock = clock()
        var keep = [Bool](repeating: true, count: frames.count)
        for i in 1..<max(frames.count, 1) {
            let steady = frames[i] - frames[i - 1] == 1 && clock[i] - clock[i - 1] == 1
            let standing = frames[i] < 0 && frames[i - 1] < 0 && (!clockWhileStanding || clock[i] - clock[i - 1] == 1)
            if steady || standing { continue }
            for j in max(0, i - margin)..<min(keep.count, i + margin) { keep[j] = false }
        }
        return keep
    }

    /// Asserts that the sample at `index`, the first heard with the transport rolling, has
    /// transport frame `frame`: exactly, unless the listener missed cycles just before it
    /// (its frame times jump: the dummy server, starved, moves its clock on without running
    /// every client, and a late cycle reads the next one's stamps), when the transport can be
    /// at most as far on as the frames it missed, never further and never before `frame`.
    func assertFirstHeardRolling(at index: Int, from frame: Int64, _ message: String,
                                 file: StaticString = #filePath, line: UInt = #line) {
        let frames = heard().frames, clock = clock()
        guard index < frames.count else { return XCTFail("\(message): nothing heard at \(index)", file: file, line: line) }
        let missed = index > 0 ? clock[index] - clock[index - 1] - 1 : 0
        let around = clock[max(0, index - 2)...min(clock.count - 1, index + 1)]
        if missed == 0 {
            XCTAssertEqual(frames[index], frame, "\(message) (frame times around it: \(around))", file: file, line: line)
        } else {
            XCTAssertTrue((frame...(frame + max(missed, 0))).contains(frames[index]),
                          "\(message): first heard rolling at \(frames[index]), the listener missed \(missed) frames", file: file, line: line)
        }
    }

    /// The JACK frame time of every sample kept (as many as ``heard(input:)`` has).
    func clock() -> [Int64] {
        Array(UnsafeBufferPointer(start: td_jack_probe_clock(raw), count: Int(td_jack_probe_count(raw))))
    }

    /// JACK's frame time now.
    var now: Int64 { td_jack_probe_now(raw) }

    /// The transport frame the tone was played for at each take frame, where it is not the
    /// take frame itself: the probe plays by JACK's transport frame, and a cycle of its own
    /// run late can read the transport a cycle off its clock (see JACKClockReading) and play
    /// a period of tone off its frame, which no recorder could place back. The take's frame
    /// of a cycle is its clock less the clock-to-transport offset most cycles played at.
    /// Empty when every cycle played on its clock.
    func playedOffClock(takeFrames: Int) -> [Int: Int64] {
        let n = Int(td_jack_probe_played_count(raw))
        let clocks = Array(UnsafeBufferPointer(start: td_jack_probe_played_clock(raw), count: n))
        let frames = Array(UnsafeBufferPointer(start: td_jack_probe_played_frame(raw), count: n))
        var tally: [Int64: Int] = [:]
        for i in 0..<n where frames[i] >= 0 { tally[clocks[i] - frames[i], default: 0] += 1 }
        guard let offset = tally.max(by: { $0.value < $1.value })?.key else { return [:] }
        // A cycle's length: the step most cycles took (the next cycle's clock says more than
        // one cycle played when the probe missed some).
        var steps: [Int64: Int] = [:]
        for i in 1..<max(n, 1) { steps[clocks[i] - clocks[i - 1], default: 0] += 1 }
        let period = steps.filter { $0.key > 0 }.max(by: { $0.value < $1.value })?.key ?? 256
        var off: [Int: Int64] = [:]
        for i in 0..<n where frames[i] >= 0 && clocks[i] - frames[i] != offset {
            let length = i + 1 < n ? min(clocks[i + 1] - clocks[i], period) : period
            let first = clocks[i] - offset
            for j in 0..<max(0, length) where first + j >= 0 && first + j < Int64(takeFrames) { off[Int(first + j)] = frames[i] + j }
        }
        return off
    }

    /// Sends a message on `NAME:midi_out` at JACK frame time `frame` (schedule in order).
    func send(at frame: Int64, _ bytes: [UInt8]) {
        XCTAssertEqual(td_jack_probe_send(raw, frame, bytes[0], bytes.count > 1 ? bytes[1] : 0, bytes.count > 2 ? bytes[2] : 0,
                                          Int32(bytes.count)), 0, "the probe's send queue is full")
    }

    /// The messages heard on `NAME:midi_in`: JACK frame time and bytes (status, data1, data2).
    func midiHeard() -> [(frame: Int64, status: UInt8, data1: UInt8, data2: UInt8)] {
        let n = Int(td_jack_probe_midi_count(raw))
        let frames = td_jack_probe_midi_frames(raw)!, messages = td_jack_probe_midi_messages(raw)!
        return (0..<n).map { i in
            let m = messages[i]
            return (frames[i], UInt8(truncatingIfNeeded: m >> 16), UInt8(truncatingIfNeeded: m >> 8), UInt8(truncatingIfNeeded: m))
        }
    }
}

/// Helpers for JACK tests: Tapedeck's client, the server's tools.
enum JackTools {
    /// A Tapedeck JACK client with inputs named after `tracks` (and `midi_in`, `midi_out`
    /// with `midi`).
    static func device(inputs: Int = 0, outputs: Int = 2, tracks: [(name: String, channels: [Int])] = [],
                       connection: JACKConnection = .none, sync: Bool = true, timebase: Bool = false,
                       tempo: TempoMap? = nil, sampleRate: Int = 48000, client: String = "tapedeck",
                       midi: Bool = false) throws -> JACKDevice {
        try JACKDevice(request: JACKRequest(deviceName: "jack", clientName: client,
                                            ports: JACKPortLayout.named(inputs: inputs, outputs: outputs, tracks: tracks, midi: midi),
                                            connection: connection, sampleRate: sampleRate, transportSync: sync,
                                            timebaseMaster: timebase, tempoMap: tempo))
    }

    /// Runs a JACK tool to its end; what it printed.
    @discardableResult
    static func run(_ args: [String], input: String? = nil) -> String {
        let out = NSTemporaryDirectory() + "jacktool-\(UUID().uuidString)"
        defer { unlink(out) }
        if let input {
            let script = NSTemporaryDirectory() + "jacktool-\(UUID().uuidString).in"
            defer { unlink(script) }
            FileManager.default.createFile(atPath: script, contents: Data(input.utf8))
            _ = JackFixture.run(["/bin/sh", "-c", "exec \"$0\" \"$@\" < '\(script)'"] + args, stdoutPath: out)
        } else {
            _ = JackFixture.run(args, stdoutPath: out)
        }
        return (try? String(contentsOfFile: out, encoding: .utf8)) ?? ""
    }

    /// Commands to `jack_transport` (another program moving the shared transport).
    static func transport(_ commands: String...) {
        run(["/usr/bin/jack_transport"], input: commands.joined(separator: "\n") + "\nquit\n")
    }

    /// The first channel of an audio file.
    static func firstChannel(_ path: String) throws -> [Float] {
        var out: [Float] = []
        try AudioFileReader(path: path).forEachBlock { channels, n in out += UnsafeBufferPointer(start: channels[0], count: n) }
        return out
    }

    /// The index of the first sample louder than `threshold`, if any.
    static func onset(_ samples: [Float], threshold: Float = 0.05, from: Int = 0) -> Int? {
        guard from < samples.count else { return nil }
        return (from..<samples.count).first { abs(samples[$0]) > threshold }
    }

    /// A take of a probe's tone (`hz`, `amplitude`, from transport frame 0) judged at every
    /// frame from `from`: samples that are silence (frames an xrun cost), and samples neither
    /// the tone at their frame nor silence. Silence is two or more zeros in a row: a 24-bit
    /// take holds a tone's zero crossings as lone zeros, about 11 in every 256 frames of a
    /// tone a period off (seen in CI, where they were once taken for lost frames).
    static func judgeTone(_ recorded: [Float], hz: Double, amplitude: Double, from: Int = 0) -> (silent: Int, wrong: Int, runs: String) {
        var silent = 0, wrong = 0
        // Where it went wrong, as runs "start+length silent|wrong", for the failure message.
        var runs: [String] = []
        var runStart = -1, runKind = ""
        func close(_ k: Int) { if runStart >= 0, runs.count < 20 { runs.append("\(runStart)+\(k - runStart) \(runKind)") }; runStart = -1; runKind = "" }
        for k in from..<recorded.count {
            let want = Float(amplitude * cos(2 * Double.pi * hz * Double(k) / 48000))
            var kind = ""
            // Silence is a run of zeros: a lone zero is a zero crossing (of a tone a period
            // off, say, when the source itself read JACK's transport late), judged as any
            // sample. A zero in a run is lost even where the tone itself crosses 0 (it never
            // holds 0 for two frames): left out, a gap over a crossing counted one short.
            let zeroRun = recorded[k] == 0 && ((k > 0 && recorded[k - 1] == 0) || (k + 1 < recorded.count && recorded[k + 1] == 0))
            if zeroRun { silent += 1; kind = "silent" } else if abs(recorded[k] - want) >= 1e-4 { wrong += 1; kind = "wrong" }
            if kind != runKind || kind.isEmpty { close(k) }
            if !kind.isEmpty && runStart < 0 { runStart = k; runKind = kind }
        }
        close(recorded.count)
        return (silent, wrong, runs.joined(separator: ", "))
    }

    /// Where a run of samples that are not the tone at their own frame belongs: the shift in
    /// frames (`recorded[k]` is the tone at `k + shift`) that fits the run's first 64 samples,
    /// searched within ±`within`; nil when none fits (not the tone at all). For a failure
    /// message: "early by 512" says which clock reading put it there.
    static func toneShift(_ recorded: [Float], at start: Int, hz: Double, amplitude: Double, within: Int = 16_384) -> Int? {
        let n = min(64, recorded.count - start)
        guard n > 8 else { return nil }
        func fits(_ d: Int) -> Bool {
            for k in start..<(start + n) {
                let want = Float(amplitude * cos(2 * Double.pi * hz * Double(k + d) / 48000))
                if abs(recorded[k] - want) >= 1e-5 { return false }
            }
            return true
        }
        for magnitude in 0...within {
            if fits(magnitude) { return magnitude }
            if magnitude > 0 && fits(-magnitude) { return -magnitude }
        }
        return nil
    }

    /// The cycles of a `TAPEDECK_JACK_TRACE` file where the clock reading did something (a
    /// skip, a hold, an xrun told or reported), with four cycles either side: for a failure
    /// message.
    static func activeCycles(traceAt path: String) -> String {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return "(no trace at \(path))" }
        let rows = text.split(separator: "\n").dropFirst().map { $0.split(separator: "\t").map(String.init) }
        let active = rows.indices.filter { i in rows[i].count >= 9 && (rows[i][5] != "0" || rows[i][6] != "-1" || rows[i][7] != "0" || rows[i][8] != "0") }
        var shown = IndexSet()
        for i in active { shown.insert(integersIn: max(0, i - 4)..<min(rows.count, i + 5)) }
        return shown.prefix(120).map { rows[$0].joined(separator: " ") }.joined(separator: "\n")
    }

    /// Zero crossings per second over `samples` at 48 kHz, halved: the frequency of a tone.
    static func frequency(_ samples: ArraySlice<Float>) -> Double {
        var crossings = 0
        var previous = samples.first ?? 0
        for s in samples.dropFirst() {
            if (previous < 0) != (s < 0) { crossings += 1 }
            previous = s
        }
        return Double(crossings) / 2 / (Double(samples.count) / 48000)
    }
}
