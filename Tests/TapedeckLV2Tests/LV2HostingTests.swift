import XCTest
import TapedeckDSP
import TapedeckLV2

/// Real plugins from the Debian packages, hosted as chain nodes and measured.
final class LV2HostingTests: XCTestCase {
    private let lowPass = "http://plugin.org.uk/swh-plugins/buttlow_iir"

    func testAmplifierPluginAtSixDecibelsDoublesTheLevel() throws {
        let x = LV2Test.sine(1000)
        let (y, chain) = try LV2Test.render("lv2:\(LV2Test.amp):gain=6.0206", input: [x])
        XCTAssertEqual(chain.problems, [])
        let ratio = LV2Test.rms(y[0], 4800..<48000) / LV2Test.rms(x, 4800..<48000)
        XCTAssertEqual(LV2Test.decibels(ratio), 6.0206, accuracy: 0.01)
    }

    func testAMonoPluginRunsOncePerChannelOnAStereoTrack() throws {
        let left = LV2Test.sine(440, amplitude: 0.2), right = LV2Test.sine(3000, amplitude: 0.05)
        let (y, _) = try LV2Test.render("lv2:amp:gain=-6.0206", input: [left, right])
        // Each side keeps its own signal at half its level: nothing of the other side leaks in.
        XCTAssertEqual(LV2Test.rms(y[0], 4800..<48000) / LV2Test.rms(left, 4800..<48000), 0.5, accuracy: 0.0006)
        XCTAssertEqual(LV2Test.rms(y[1], 4800..<48000) / LV2Test.rms(right, 4800..<48000), 0.5, accuracy: 0.0006)
        let residual = zip(y[1], right).map { $0 - 0.5 * $1 }
        XCTAssertLessThan(LV2Test.rms(residual, 4800..<48000), 1e-5)
    }

    func testLowPassPluginCutsAToneAboveItsCutoffByTheButterworthAmount() throws {
        // swh's Butterworth low-pass is the bilinear transform of 1/(s² + r·s + 1), prewarped
        // at the cutoff: |H|² = 1 / ((1 − Ω²)² + r²Ω²), Ω = tan(πf/fs) / tan(πfc/fs).
        let cutoff = 1000.0, resonance = 1.41
        func expected(_ f: Double) -> Double {
            let omega = tan(Double.pi * f / LV2Test.sampleRate) / tan(Double.pi * cutoff / LV2Test.sampleRate)
            return -10 * log10((1 - omega * omega) * (1 - omega * omega) + resonance * resonance * omega * omega)
        }
        for frequency in [200.0, 4000.0, 8000.0] {
            let x = LV2Test.sine(frequency)
            let (y, chain) = try LV2Test.render("lv2:\(lowPass):cutoff=\(cutoff):resonance=\(resonance)", input: [x])
            XCTAssertEqual(chain.problems, [])
            let measured = LV2Test.decibels(LV2Test.rms(y[0], 9600..<48000) / LV2Test.rms(x, 9600..<48000))
            XCTAssertEqual(measured, expected(frequency), accuracy: 0.2, "\(frequency) Hz")
        }
        XCTAssertLessThan(expected(4000), -24)
    }

    func testAnInstrumentPluginPlaysAMIDINoteAtItsPitch() throws {
        // mda EPiano: MIDI note 57 is A3 (220 Hz), 69 is A4 (440 Hz).
        for (note, hertz) in [(UInt8(57), 220.0), (UInt8(69), 440.0)] {
            let silence = [Float](repeating: 0, count: 24000)
            let midi = [MIDIEvent.noteOn(note: note, velocity: 100, frameOffset: 1000)]
            let (y, chain) = try LV2Test.render("lv2:http://drobilla.net/plugins/mda/EPiano", input: [silence], midi: midi)
            XCTAssertEqual(chain.problems, [])
            XCTAssertEqual(chain.nodes[0].descriptor.kind, .instrument)
            XCTAssertLessThan(LV2Test.rms(y[0], 0..<1000), 1e-6, "silent before the note")
            XCTAssertGreaterThan(LV2Test.rms(y[0], 2000..<12000), 0.01, "the note sounds")
            XCTAssertEqual(Pitch.hertz(y[0], range: 4000..<16000), hertz, accuracy: hertz * 0.005, "note \(note)")
        }
    }
}
