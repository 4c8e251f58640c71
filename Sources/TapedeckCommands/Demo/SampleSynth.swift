import TapedeckIO
#if canImport(Glibc)
import Glibc
#endif

/// Synthesises the clips in `Samples/` (nothing is downloaded): a drum loop, a bass line,
/// keys chords and a click, four bars of C–Am–F–G at 120 BPM, 48 kHz, 16-bit FLAC.
/// Deterministic: the same bytes every run.
enum SampleSynth {
    static let sampleRate = 48000
    static let tempoBPM = 120.0
    static let bars = 4
    static var beatFrames: Int { Int(Double(sampleRate) * 60 / tempoBPM) }
    static var totalFrames: Int { beatFrames * 4 * bars }

    /// Writes every clip into `folder`; returns the file names written.
    static func writeAll(to folder: String) throws -> [String] {
        let clips: [(String, [[Float]])] = [
            ("drums.flac", [drums()]),
            ("bass.flac", [bass()]),
            ("keys.flac", keys()),
            ("click.flac", [click()]),
        ]
        for (name, channels) in clips {
            let format = AudioFileFormat(container: .flac, encoding: .int16, sampleRate: sampleRate, channelCount: channels.count)
            let writer = try AudioFileWriter(path: folder + "/" + name, format: format)
            try writer.write(arrays: channels)
            try writer.close()
        }
        return clips.map(\.0)
    }

    /// Deterministic noise in −1…1 (a 32-bit LCG; quality is irrelevant for drums).
    struct Noise {
        var state: UInt32 = 0x1234_5678
        mutating func next() -> Float {
            state = state &* 1_664_525 &+ 1_013_904_223
            return Float(Int32(bitPattern: state)) / Float(Int32.max)
        }
    }

    static func drums() -> [Float] {
        var out = [Float](repeating: 0, count: totalFrames)
        var noise = Noise()
        let sr = Double(sampleRate)
        let eighth = beatFrames / 2
        for step in 0..<(bars * 8) {
            let start = step * eighth
            let beat = step / 2
            if step % 2 == 0 && beat % 2 == 0 {  // kick on 1 and 3
                var phase = 0.0
                for i in 0..<min(Int(0.35 * sr), totalFrames - start) {
                    let t = Double(i) / sr
                    let f = 45 + 75 * exp(-t * 30)
                    phase += 2 * Double.pi * f / sr
                    out[start + i] += Float(0.9 * sin(phase) * exp(-t * 9))
                }
            }
            if step % 2 == 0 && beat % 2 == 1 {  // snare on 2 and 4
                for i in 0..<min(Int(0.2 * sr), totalFrames - start) {
                    let t = Double(i) / sr
                    let body = sin(2 * Double.pi * 185 * t) * exp(-t * 25)
                    out[start + i] += Float(0.35 * body) + 0.4 * noise.next() * Float(exp(-t * 18))
                }
            }
            var previous: Float = 0  // hats: differentiated noise is bright enough
            for i in 0..<min(Int(0.05 * sr), totalFrames - start) {
                let t = Double(i) / sr
                let n = noise.next()
                out[start + i] += 0.12 * (n - previous) * Float(exp(-t * 80))
                previous = n
            }
        }
        return out.map { max(-0.98, min(0.98, $0)) }
    }

    /// Root notes (MIDI) of the four bars: C, A, F, G.
    static let roots = [36, 33, 29, 31]

    static func midiHertz(_ note: Int) -> Double { 440 * pow(2, Double(note - 69) / 12) }

    static func bass() -> [Float] {
        var out = [Float](repeating: 0, count: totalFrames)
        let sr = Double(sampleRate)
        let eighth = beatFrames / 2
        for bar in 0..<bars {
            let f = midiHertz(roots[bar] + 12)
            for e in 0..<8 {
                let start = (bar * 8 + e) * eighth
                let note = e == 6 ? f * 1.5 : f  // a fifth near the end of each bar
                for i in 0..<Int(Double(eighth) * 0.9) {
                    let t = Double(i) / sr
                    let env = min(1, t * 200) * exp(-t * 4)
                    var s = 0.0
                    for h in 1...5 { s += sin(2 * Double.pi * note * Double(h) * t) / Double(h) }
                    out[start + i] += Float(0.35 * env * s)
                }
            }
        }
        return out
    }

    static func keys() -> [[Float]] {
        var left = [Float](repeating: 0, count: totalFrames)
        var right = [Float](repeating: 0, count: totalFrames)
        let sr = Double(sampleRate)
        let chords = [[60, 64, 67], [57, 60, 64], [53, 57, 60], [55, 59, 62]]
        let barFrames = beatFrames * 4
        for bar in 0..<bars {
            for (k, note) in chords[bar].enumerated() {
                let f = midiHertz(note)
                let spread = Double(k - 1) * 0.4  // low note left, high note right
                let gl = Float(0.5 * (1 - spread)), gr = Float(0.5 * (1 + spread))
                for i in 0..<barFrames {
                    let t = Double(i) / sr
                    let env = min(1, t * 50) * exp(-t * 1.2)
                    let s = Float(0.18 * env * (sin(2 * Double.pi * f * t) + 0.3 * sin(4 * Double.pi * f * t)))
                    left[bar * barFrames + i] += s * gl
                    right[bar * barFrames + i] += s * gr
                }
            }
        }
        return [left, right]
    }

    static func click() -> [Float] {
        let n = Int(0.03 * Double(sampleRate))
        return (0..<n).map { i in
            let t = Double(i) / Double(sampleRate)
            return Float(0.8 * sin(2 * Double.pi * 2000 * t) * exp(-t * 150))
        }
    }
}
