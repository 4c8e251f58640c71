import Foundation
import XCTest
import TapedeckCore
import TapedeckIO

/// Live playback through the engine with time-pitch and chains, and recording through an
/// input chain — measured in what `filetap` received (OUT) or what the take holds.
final class LivePlaybackTests: XCTestCase {
    let rate = 48000
    /// `--period 256 --periods 4`: OUT starts with one buffer of prefill silence.
    let prefill = 1024
    let block = 256
    var dir: URL!

    override func setUpWithError() throws {
        dir = try Tapedeck.temporaryFolder(self)
    }

    private func path(_ name: String) -> String { dir.appendingPathComponent(name).path }

    /// Plays `target` into a fresh OUT file; returns the left and right channels after the prefill.
    private func play(_ target: String, _ args: [String]) throws -> (left: [Float], right: [Float]) {
        let out = path("out-\(UUID().uuidString).raw")
        let r = try Tapedeck.run(["play", target, "--device", "filetap:OUT=\(out)", "--device-format", "float",
                                  "--period", "\(block)", "--periods", "4"] + args,
                                 environment: RecordSupport.environment, timeout: 180)
        XCTAssertEqual(r.status, 0, r.stderr)
        let raw = try Data(contentsOf: URL(fileURLWithPath: out))
        let all: [Float] = raw.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        let frames = all.count / 2
        guard frames > prefill else { return ([], []) }
        return ((prefill..<frames).map { all[2 * $0] }, (prefill..<frames).map { all[2 * $0 + 1] })
    }

    private func frequency(_ x: [Float]) -> Double {
        Frequency.estimate(x, sampleRate: rate, range: (x.count / 4)..<(3 * x.count / 4))
    }

    /// Frames from the start until the signal falls silent for good.
    private func soundingLength(_ x: [Float]) -> Int {
        (x.lastIndex { abs($0) > 0.01 } ?? -1) + 1
    }

    func testVarispeedAtDoubleSpeedDoublesThePitchAndHalvesTheTime() throws {
        try Signals.write([Signals.sine(hertz: 440, amplitude: 0.5, frames: 2 * rate)], to: path("a.wav"))
        let out = try play(path("a.wav"), ["--speed", "2", "--mode", "varispeed"])
        XCTAssertEqual(frequency(out.left), 880, accuracy: 0.5)
        XCTAssertEqual(Double(soundingLength(out.left)), Double(rate), accuracy: Double(4 * block))
    }

    func testStretchAtHalfSpeedKeepsThePitchAndDoublesTheTime() throws {
        try Signals.write([Signals.sine(hertz: 440, amplitude: 0.5, frames: 2 * rate)], to: path("a.wav"))
        let out = try play(path("a.wav"), ["--speed", "0.5"])
        XCTAssertEqual(frequency(out.left), 440, accuracy: 0.5)
        XCTAssertEqual(Double(soundingLength(out.left)), Double(4 * rate), accuracy: 4096)
    }

    func testTwelveSemitonesUpLiveDoublesThePitchAtTheSameTime() throws {
        try Signals.write([Signals.sine(hertz: 440, amplitude: 0.5, frames: 2 * rate)], to: path("a.wav"))
        let out = try play(path("a.wav"), ["--pitch", "12"])
        XCTAssertEqual(frequency(out.left), 880, accuracy: 0.5)
        XCTAssertEqual(Double(soundingLength(out.left)), Double(2 * rate), accuracy: 4096)
    }

    func testTwoTracksWithIdenticalClicksStayAlignedAtEverySpeed() throws {
        let folder = SessionFolder(path: path("s"))
        try folder.create(Session(sampleRate: rate))
        var clicks = [Float](repeating: 0, count: 2 * rate)
        for k in 0..<8 { for i in 0..<48 { clicks[k * rate / 4 + 3000 + i] = 0.8 * Float(sin(Double(i) * .pi / 48)) } }
        try Signals.write([clicks], to: folder.audioFolder + "/a.wav")
        try Signals.write([clicks], to: folder.audioFolder + "/b.wav")
        var s = try folder.load()
        s.tracks = [Track(name: "a", pan: -1, regions: [Region(file: "audio/a.wav", timelineStartFrame: 0, lengthFrames: Int64(2 * rate))]),
                    Track(name: "b", pan: 1, regions: [Region(file: "audio/b.wav", timelineStartFrame: 0, lengthFrames: Int64(2 * rate))])]
        try folder.save(s)
        for speed in ["0.5", "0.75", "1.5", "2"] {
            let out = try play(folder.path, ["--speed", speed])
            let left = centres(out.left), right = centres(out.right)
            XCTAssertGreaterThanOrEqual(left.count, 6, "speed \(speed): clicks heard")
            XCTAssertEqual(left.count, right.count, "speed \(speed)")
            for (l, r) in zip(left, right) { XCTAssertEqual(l, r, accuracy: Double(block), "speed \(speed)") }
            // And they are where the transport says, at this speed (within one stretcher block).
            let v = Double(speed)!
            for (k, l) in left.enumerated() { XCTAssertEqual(l, (Double(k * rate / 4 + 3000) + 24) / v, accuracy: Double(2 * block), "speed \(speed) click \(k)") }
        }
    }

    /// Energy centres of the separate bursts in `x`.
    private func centres(_ x: [Float]) -> [Double] {
        var result: [Double] = []
        var i = 0
        while i < x.count {
            guard abs(x[i]) > 0.05 else { i += 1; continue }
            let end = min(x.count, i + 4000)
            var weighted = 0.0, energy = 0.0
            for j in max(0, i - 500)..<end { let e = Double(x[j] * x[j]); weighted += Double(j) * e; energy += e }
            result.append(weighted / energy)
            i = end
        }
        return result
    }

    func testMasterFxAndTrackChainsShapeLivePlayback() throws {
        let folder = SessionFolder(path: path("s"))
        try folder.create(Session(sampleRate: rate))
        try Signals.write([Signals.sine(hertz: 1000, amplitude: 0.5, frames: rate)], to: folder.audioFolder + "/t.wav")
        var s = try folder.load()
        s.tracks = [Track(name: "t", pan: -1, playbackChain: "gain:-12",
                          regions: [Region(file: "audio/t.wav", timelineStartFrame: 0, lengthFrames: Int64(rate))])]
        try folder.save(s)
        let reference = 0.5 / 2.0.squareRoot()
        let track = try play(folder.path, [])
        XCTAssertEqual(20 * log10(Signals.rms(track.left, 4800..<43200) / reference), -12, accuracy: 0.1, "track chain")
        let both = try play(folder.path, ["--fx", "gain:-6"])
        XCTAssertEqual(20 * log10(Signals.rms(both.left, 4800..<43200) / reference), -18, accuracy: 0.1, "track and master chains")
    }

    func testRecordingThroughAnInputChainKeepsTheWetTakeAndTheDryCopy() throws {
        let frames = 48000
        let input = RecordSupport.signal(frames: frames + 8192, channels: 1, bits: 16, seed: 5)
        RecordSupport.writeRaw(input, bits: 16, to: path("in.raw"))
        let take = path("take.wav")
        let r = try Tapedeck.run(["record", "--out", take, "--device", "filetap:IN=\(path("in.raw"))", "--device-format", "s16",
                                  "--channels", "1", "--bits", "24", "--duration", "\(frames)f", "--fx", "gain:-6", "--keep", "both"],
                                 environment: RecordSupport.environment, timeout: 60)
        XCTAssertEqual(r.status, 0, r.stderr)
        let wet = try Signals.read(take).channels[0]
        let dry = try Signals.read(path("take.dry.wav")).channels[0]
        XCTAssertEqual(wet.count, frames)
        XCTAssertEqual(dry.count, frames)
        let original = input[0..<frames].map { Float($0) / 32768 }
        XCTAssertEqual(dry, original, "the dry copy is the input, bit for bit")
        // Gain glides to its value within its smoothing time; measure after that.
        let ratio = Signals.rms(wet, 4800..<frames) / Signals.rms(dry, 4800..<frames)
        XCTAssertEqual(20 * log10(ratio), -6, accuracy: 0.05)
    }

    func testKeepDryRecordsTheInputUntouchedDespiteTheChain() throws {
        let frames = 24000
        let input = RecordSupport.signal(frames: frames + 8192, channels: 1, bits: 16, seed: 6)
        RecordSupport.writeRaw(input, bits: 16, to: path("in.raw"))
        let r = try Tapedeck.run(["record", "--out", path("dry.wav"), "--device", "filetap:IN=\(path("in.raw"))", "--device-format", "s16",
                                  "--channels", "1", "--bits", "16", "--duration", "\(frames)f", "--fx", "gain:-20", "--keep", "dry"],
                                 environment: RecordSupport.environment, timeout: 60)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(try RecordSupport.readInts(path("dry.wav"), bits: 16).values, Array(input[0..<frames]))
    }

    func testPlayWithClickSoundsEveryBeatOnItsFrameWithTheDownbeatAccented() throws {
        let folder = SessionFolder(path: path("s"))
        try folder.create(Session(sampleRate: rate, tempoBPM: 120))
        try Signals.write([[Float](repeating: 0, count: 4 * rate)], to: folder.audioFolder + "/silence.wav")
        var s = try folder.load()
        s.tracks = [Track(name: "t", regions: [Region(file: "audio/silence.wav", timelineStartFrame: 0, lengthFrames: Int64(4 * rate))])]
        try folder.save(s)
        let out = try play(folder.path, ["--click"])
        var peaks: [Float] = []
        for beat in 0..<8 {
            let at = beat * 24_000
            if beat > 0 { XCTAssertEqual(out.left[at - 1], 0, "silence before beat \(beat + 1)") }
            XCTAssertNotEqual(out.left[at], 0, "beat \(beat + 1) on its frame")
            peaks.append(out.left[at..<(at + 1200)].map(abs).max() ?? 0)
        }
        for beat in 0..<8 {
            let ratio = 20 * log10(Double(peaks[beat] / peaks[1]))
            XCTAssertEqual(ratio, beat % 4 == 0 ? 6 : 0, accuracy: 0.5, "beat \(beat + 1)")
        }
    }
}
