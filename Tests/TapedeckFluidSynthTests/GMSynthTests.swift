import XCTest
import TapedeckDSP
@testable import TapedeckFluidSynth

/// The General MIDI instrument, through FluidSynth and the system's GM SoundFont
/// (fluid-soundfont-gm, which `make test` installs).
final class GMSynthTests: XCTestCase {
    private func font() throws -> String {
        guard let path = GMSynthNode.defaultFontPaths.first(where: { access($0, R_OK) == 0 }) else {
            throw XCTSkip("no General MIDI SoundFont installed (apt-get install fluid-soundfont-gm)")
        }
        return path
    }

    /// Renders `blocks` blocks of stereo through a prepared `gm` node, with `events` in block 0.
    private func render(_ node: GMSynthNode, frames: Int, block: Int = 256, events: [(Int, MIDIEvent)]) -> [[Float]] {
        node.prepare(format: NodeFormat(sampleRate: 48000, channelCount: 2), maxFrames: block)
        node.restart()
        var out: [[Float]] = [[], []]
        let buffers = ChannelBuffers(channelCount: 2, capacityFrames: block)
        var done = 0
        while done < frames {
            let n = min(block, frames - done)
            buffers.clear(frameCount: n)
            var mine: [MIDIEvent] = []
            for (frame, e) in events where frame >= done && frame < done + n {
                var moved = e
                moved.frameOffset = Int32(frame - done)
                mine.append(moved)
            }
            mine.withUnsafeBufferPointer { midi in
                var context = RenderContext(inPlace: buffers.channels, frameCount: n, midiEvents: midi)
                node.process(&context)
            }
            for c in 0..<2 { out[c] += Array(buffers[c][0..<n]) }
            done += n
        }
        return out
    }

    func testANoteSoundsAtItsPitch() throws {
        _ = try font()
        for (note, hertz) in [(69, 440.0), (57, 220.0), (76, 659.255)] {
            let node = GMSynthNode()
            node.parameters.set("program", 73)   // flute: a near-sinusoidal tone
            let y = render(node, frames: 48000, events: [(0, .noteOn(note: UInt8(note), velocity: 110, frameOffset: 0))])
            node.release()
            XCTAssertNil(node.problem)
            // The steady part of the note, after the attack.
            let measured = Spectrum.peakFrequency(Array(y[0][8000..<(8000 + 32768)]), sampleRate: 48000)
            let cents = 1200 * log2(measured / hertz)
            XCTAssertEqual(cents, 0, accuracy: 10, "note \(note) sounds at \(measured) Hz, \(hertz) Hz expected")
        }
    }

    func testTheNoteStartsOnItsFrameWithinFluidSynthsBlock() throws {
        _ = try font()
        let node = GMSynthNode()
        let y = render(node, frames: 8192, events: [(3000, .noteOn(note: 60, velocity: 127, frameOffset: 0))])
        XCTAssertEqual(y[0][0..<3000].map(abs).max() ?? 1, 0, "silent before the note")
        let onset = y[0].firstIndex { abs($0) > 1e-4 } ?? -1
        XCTAssertGreaterThanOrEqual(onset, 3000)
        XCTAssertLessThan(onset, 3000 + 64 + 64, "sounds within FluidSynth's 64-frame block (plus its attack's first samples)")
    }

    func testProgramChangesChooseTheInstrumentAndNoteOffsEndTheNote() throws {
        _ = try font()
        let piano = GMSynthNode(), organ = GMSynthNode()
        let a = render(piano, frames: 48000, events: [(0, .noteOn(note: 60, velocity: 100, frameOffset: 0)),
                                                     (24000, .noteOff(note: 60, frameOffset: 0))])
        let b = render(organ, frames: 48000, events: [(0, MIDIEvent(frameOffset: 0, status: 0xC0, data1: 19, data2: 0)),
                                                     (0, .noteOn(note: 60, velocity: 100, frameOffset: 0)),
                                                     (24000, .noteOff(note: 60, frameOffset: 0))])
        func rms(_ x: ArraySlice<Float>) -> Double { (x.reduce(0) { $0 + Double($1 * $1) } / Double(max(x.count, 1))).squareRoot() }
        XCTAssertGreaterThan(abs(rms(a[0][4000..<20000]) - rms(b[0][4000..<20000])) / rms(a[0][4000..<20000]), 0.05,
                             "another program sounds different")
        // An organ holds at its level until the note-off, then dies away.
        XCTAssertGreaterThan(rms(b[0][20000..<23000]), 0.01)
        XCTAssertLessThan(rms(b[0][40000..<48000]), rms(b[0][20000..<23000]) / 5,
                          "\(rms(b[0][40000..<48000])) after the note-off, \(rms(b[0][20000..<23000])) before")
    }

    func testAfterTheChainsWarmUpTheSynthIsSilent() throws {
        _ = try font()
        // A chain warms every node up with a quiet note; the synth must not ring on after it.
        NodeRegistry.install(type: GMSynthNode.self)
        let chain = try Chain(parsing: "gm").instantiate()
        chain.prepare(format: NodeFormat(sampleRate: 48000, channelCount: 2), maxFrames: 256)
        let buffers = ChannelBuffers(channelCount: 2, capacityFrames: 256)
        var peak: Float = 0
        for _ in 0..<100 {
            buffers.clear(frameCount: 256)
            var context = RenderContext(inPlace: buffers.channels, frameCount: 256)
            chain.process(&context)
            for c in 0..<2 { for i in 0..<256 { peak = max(peak, abs(buffers[c][i])) } }
        }
        chain.release()
        XCTAssertEqual(peak, 0, "silent, not the warm-up note's tail")
    }

    func testAMissingSoundFontIsSaidAndTheNodeIsSilent() {
        let node = GMSynthNode()
        node.setText("font", "/nonexistent/none.sf2", files: nil)
        let y = render(node, frames: 4096, events: [(0, .noteOn(note: 60, velocity: 100, frameOffset: 0))])
        XCTAssertNotNil(node.problem)
        XCTAssertTrue(node.problem?.contains("/nonexistent/none.sf2") == true, node.problem ?? "")
        XCTAssertEqual(y[0].map(abs).max() ?? 1, 0)
    }

    func testAFileThatIsNoSoundFontIsRefusedWithFluidSynthsReason() throws {
        let path = NSTemporaryDirectory() + "not-a-font-\(getpid()).sf2"
        FileManager.default.createFile(atPath: path, contents: Data("hello".utf8))
        defer { unlink(path) }
        let node = GMSynthNode()
        node.setText("font", path, files: nil)
        _ = render(node, frames: 256, events: [])
        XCTAssertTrue(node.problem?.contains("could not be loaded") == true, node.problem ?? "nil")
    }
}

/// Finds a tone's frequency: a Hann-windowed FFT and the strongest bin, refined by fitting a
/// parabola through it and its neighbours (good to well under a cent on a steady tone).
enum Spectrum {
    static func peakFrequency(_ x: [Float], sampleRate: Double) -> Double {
        var n = 1
        while n * 2 <= x.count { n *= 2 }
        var re = (0..<n).map { Double(x[$0]) * (0.5 - 0.5 * cos(2 * Double.pi * Double($0) / Double(n - 1))) }
        var im = [Double](repeating: 0, count: n)
        fft(&re, &im)
        let mags = (0..<n / 2).map { (re[$0] * re[$0] + im[$0] * im[$0]).squareRoot() }
        let top = (2..<n / 2 - 1).max { mags[$0] < mags[$1] }!
        // The strongest bin may be a harmonic: the fundamental is the lowest sub-multiple of
        // it that is itself a clear peak (a tenth of the strongest or more).
        var k = top
        for divisor in stride(from: 6, through: 2, by: -1) {
            let guess = Int((Double(top) / Double(divisor)).rounded())
            guard guess > 2 else { continue }
            let local = (guess - 2...guess + 2).max { mags[$0] < mags[$1] }!
            if mags[local] >= mags[top] / 10 { k = local; break }
        }
        let a = log(mags[k - 1]), b = log(mags[k]), c = log(mags[k + 1])
        let shift = 0.5 * (a - c) / (a - 2 * b + c)
        return (Double(k) + shift) * sampleRate / Double(n)
    }

    /// In-place iterative radix-2 FFT.
    static func fft(_ re: inout [Double], _ im: inout [Double]) {
        let n = re.count
        var j = 0
        for i in 1..<n {
            var bit = n >> 1
            while j & bit != 0 { j ^= bit; bit >>= 1 }
            j |= bit
            if i < j { re.swapAt(i, j); im.swapAt(i, j) }
        }
        var len = 2
        while len <= n {
            let angle = -2 * Double.pi / Double(len)
            for start in stride(from: 0, to: n, by: len) {
                for k in 0..<len / 2 {
                    let wr = cos(angle * Double(k)), wi = sin(angle * Double(k))
                    let ur = re[start + k], ui = im[start + k]
                    let vr = re[start + k + len / 2] * wr - im[start + k + len / 2] * wi
                    let vi = re[start + k + len / 2] * wi + im[start + k + len / 2] * wr
                    re[start + k] = ur + vr; im[start + k] = ui + vi
                    re[start + k + len / 2] = ur - vr; im[start + k + len / 2] = ui - vi
                }
            }
            len <<= 1
        }
    }
}
