import XCTest
@testable import TapedeckDSP

final class TimingTests: XCTestCase {
    func testDelayImpulseArrivesOnTheExactFrameAndFeedsBack() throws {
        let chain = try Chain(parsing: "delay:time=250ms:feedback=0.5:mix=1")
        let node = chain.instantiate().nodes[0]
        var x = [Float](repeating: 0, count: 30000)
        x[0] = 1
        let y = Offline.render(node, input: [x], blockSize: 500)[0]
        XCTAssertEqual(y[12000], 1, accuracy: 1e-6)
        XCTAssertEqual(y[24000], 0.5, accuracy: 1e-6)
        let elsewhere = y.indices.filter { $0 != 12000 && $0 != 24000 }.map { abs(y[$0]) }.max()!
        XCTAssertEqual(elsewhere, 0, accuracy: 1e-7)
    }

    func testTempoSyncedDelayFollowsATempoChange() throws {
        let node = try Chain(parsing: "delay:time=1/4:feedback=0:mix=1").instantiate().nodes[0]
        let count = 48000 * 3
        var x = [Float](repeating: 0, count: count)
        x[0] = 1                 // at 120 BPM a quarter lasts 24000 frames
        x[72000] = 1             // after the change to 60 BPM it lasts 48000
        let playing = TransportInfo(tempoBPM: 120, isPlaying: true)
        let y = Offline.render(node, input: [x], blockSize: 1000, transport: playing) { frame, t in
            var t = t
            t.tempoBPM = frame >= 30000 ? 60 : 120
            return t
        }[0]
        XCTAssertEqual(y[24000], 1, accuracy: 1e-6)
        XCTAssertEqual(y[72000 + 48000], 1, accuracy: 1e-6)
        XCTAssertEqual(y[72000 + 24000], 0, accuracy: 1e-6)
    }

    func testDottedAndTripletNoteValuesSetTheDelayLength() throws {
        for (text, frames) in [("1/8.", 18000), ("1/8t", 8000), ("1/16", 6000)] {
            let node = try Chain(parsing: "delay:\(text):feedback=0:mix=1").instantiate().nodes[0]
            var x = [Float](repeating: 0, count: 20000)
            x[0] = 1
            let y = Offline.render(node, input: [x], transport: TransportInfo(tempoBPM: 120))[0]
            XCTAssertEqual(y[frames], 1, accuracy: 1e-6, text)
        }
    }

    func testMetronomeClicksOnEveryBeatToTheFrameWithAnAccentedDownbeat() {
        let node = MetronomeNode()
        // 100 BPM at 48 kHz: 28800 frames per beat; start mid-way through beat 3 of bar 1.
        let transport = TransportInfo(tempoBPM: 100, beatPosition: 2.5, beatsPerBar: 4, beatUnit: 4, isPlaying: true)
        let y = Offline.render(node, input: [[Float](repeating: 0, count: 28800 * 6)], blockSize: 480, transport: transport)[0]
        // Beats 3, 4 (bar 2's downbeat; beats count from 0), 5, … fall at 14400 + k × 28800.
        var onsets: [Int] = []
        var i = 0
        while i < y.count {
            if y[i] != 0 { onsets.append(i); i += 2000 } else { i += 1 }
        }
        XCTAssertEqual(onsets, [14400, 43200, 72000, 100800, 129600, 158400])
        let peaks = onsets.map { Offline.peak(y, $0..<($0 + 600)) }
        XCTAssertGreaterThan(peaks[1], peaks[0] * 1.5, "beat 4 is bar 2's downbeat")
        XCTAssertGreaterThan(peaks[5], peaks[4] * 1.5, "beat 8 is bar 3's downbeat")
        XCTAssertEqual(peaks[0], peaks[2], accuracy: 0.01)
    }

    func testMetronomeIsSilentWhileTheTransportIsStopped() {
        let y = Offline.render(MetronomeNode(), input: [[Float](repeating: 0, count: 48000)], transport: TransportInfo())[0]
        XCTAssertEqual(Offline.peak(y), 0)
    }

    func testSyncedTremoloDipsOnTheBeatGrid() throws {
        let node = try Chain(parsing: "tremolo:rate=1/4:depth=1").instantiate().nodes[0]
        let x = [Float](repeating: 0.5, count: 48000)
        let y = Offline.render(node, input: [x], transport: TransportInfo(tempoBPM: 120, isPlaying: true))[0]
        // One cycle per quarter (24000 frames): peak on the beat, silence half-way.
        XCTAssertEqual(y[0], 0.5, accuracy: 1e-3)
        XCTAssertEqual(y[12000], 0, accuracy: 1e-3)
        XCTAssertEqual(y[24000], 0.5, accuracy: 1e-3)
        XCTAssertEqual(y[36000], 0, accuracy: 1e-3)
    }

    func testTremoloInHertzModulatesAtThatRate() {
        let node = TremoloNode()
        node.parameters.set("rate", 10)
        node.parameters.set("depth", 0.5)
        let y = Offline.render(node, input: [[Float](repeating: 1, count: 9600)])[0]
        XCTAssertEqual(y[0], 1, accuracy: 1e-3)
        XCTAssertEqual(y[2400], 0.5, accuracy: 2e-3)   // half a 10 Hz cycle
        XCTAssertEqual(y[4800], 1, accuracy: 2e-3)
    }
}
