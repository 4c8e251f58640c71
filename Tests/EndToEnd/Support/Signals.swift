import Foundation
import TapedeckIO

/// Test signals written to and read from real files through libsndfile.
enum Signals {
    /// A sine of `hertz` at `amplitude`.
    static func sine(hertz: Double, amplitude: Float, frames: Int, sampleRate: Int = 48000) -> [Float] {
        (0..<frames).map { amplitude * Float(sin(2 * Double.pi * hertz * Double($0) / Double(sampleRate))) }
    }

    /// Reproducible noise quantised to 16-bit steps, so a 16-bit file holds it exactly.
    static func noise16(frames: Int, seed: UInt64, amplitude: Float = 0.9) -> [Float] {
        var state = seed
        return (0..<frames).map { _ in
            state = state &* 6364136223846793005 &+ 1442695040888963407
            let v = Float(Int32(truncatingIfNeeded: state >> 33)) / Float(1 << 31) * amplitude
            return (v * 32768).rounded() / 32768
        }
    }

    /// Writes `channels` to `path` in `format`.
    static func write(_ channels: [[Float]], to path: String, container: AudioContainer = .wav,
                      encoding: SampleEncoding = .float32, sampleRate: Int = 48000) throws {
        let format = AudioFileFormat(container: container, encoding: encoding, sampleRate: sampleRate, channelCount: channels.count)
        // Writers never replace a file (they create exclusively); a fixture written again is new.
        unlink(path)
        let writer = try AudioFileWriter(path: path, format: format)
        let frames = channels[0].count
        try withPointers(channels) { try writer.write($0, frameCount: frames) }
        try writer.close()
    }

    /// Reads a whole (small) file into one array per channel.
    static func read(_ path: String) throws -> (channels: [[Float]], sampleRate: Int) {
        let reader = try AudioFileReader(path: path)
        var out = [[Float]](repeating: [], count: reader.channelCount)
        let buffers = (0..<reader.channelCount).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: 4096) }
        defer { buffers.forEach { $0.deallocate() } }
        while true {
            let n = try reader.read(into: buffers, frameCount: 4096)
            if n == 0 { break }
            for c in 0..<reader.channelCount { out[c].append(contentsOf: UnsafeBufferPointer(start: buffers[c], count: n)) }
        }
        return (out, reader.sampleRate)
    }

    /// The peak level of a steady `hertz` tone in `x[range]` (Goertzel; exact when the range
    /// holds whole cycles of it).
    static func toneLevel(_ hertz: Double, in x: [Float], _ range: Range<Int>, sampleRate: Int = 48000) -> Double {
        let c = 2 * cos(2 * Double.pi * hertz / Double(sampleRate))
        var s1 = 0.0, s2 = 0.0
        for i in range {
            let s = Double(x[i]) + c * s1 - s2
            s2 = s1
            s1 = s
        }
        return 2 * max(0, s1 * s1 + s2 * s2 - c * s1 * s2).squareRoot() / Double(range.count)
    }

    /// Root-mean-square level of `x[range]`.
    static func rms(_ x: [Float], _ range: Range<Int>) -> Double {
        let s = x[range].reduce(0.0) { $0 + Double($1) * Double($1) }
        return (s / Double(range.count)).squareRoot()
    }

    private static func withPointers<R>(_ channels: [[Float]], _ body: ([UnsafePointer<Float>]) throws -> R) throws -> R {
        let ps = channels.map { ch -> UnsafeMutablePointer<Float> in
            let p = UnsafeMutablePointer<Float>.allocate(capacity: ch.count)
            p.initialize(from: ch, count: ch.count)
            return p
        }
        defer { ps.forEach { $0.deallocate() } }
        return try body(ps.map { UnsafePointer($0) })
    }
}
