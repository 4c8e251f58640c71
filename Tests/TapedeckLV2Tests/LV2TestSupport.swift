import Foundation
import XCTest
import TapedeckDSP
import TapedeckLV2

/// Rendering through real installed LV2 plugins (swh-lv2, x42-plugins, mda-lv2) and
/// measuring the result.
enum LV2Test {
    static let sampleRate = 48000.0
    static let amp = "http://plugin.org.uk/swh-plugins/amp"

    /// The standard registry with the LV2 provider installed.
    static var registry: NodeRegistry {
        NodeRegistry.install(LV2Provider.shared)
        return .standard
    }

    /// Parses `text`, instantiates and prepares it for `channels` channels, renders `input`
    /// (one array per channel) in blocks of `blockSize` with `midi` (absolute frame offsets),
    /// and returns the output and the prepared instance.
    static func render(_ text: String, input: [[Float]], blockSize: Int = 512, midi: [MIDIEvent] = [],
                       isRealtime: Bool = false, stateFolder: String? = nil) throws -> (output: [[Float]], chain: ChainInstance) {
        let chain = try Chain(parsing: text, registry: registry).instantiate(registry: registry, stateFolder: stateFolder)
        chain.prepare(format: NodeFormat(sampleRate: sampleRate, channelCount: input.count, isRealtime: isRealtime), maxFrames: blockSize)
        let buffers = ChannelBuffers(channelCount: input.count, capacityFrames: blockSize)
        var output = input
        var start = 0
        var transport = TransportInfo(sampleRate: sampleRate, isPlaying: true)
        while start < input[0].count {
            let n = min(blockSize, input[0].count - start)
            for c in input.indices { for i in 0..<n { buffers[c][i] = input[c][start + i] } }
            let events = midi.filter { Int($0.frameOffset) >= start && Int($0.frameOffset) < start + n }
                .map { var e = $0; e.frameOffset -= Int32(start); return e }
            events.withUnsafeBufferPointer { midiBuffer in
                var context = RenderContext(inPlace: buffers.channels, frameCount: n, midiEvents: midiBuffer, transport: transport)
                chain.process(&context)
            }
            for c in input.indices { for i in 0..<n { output[c][start + i] = buffers[c][i] } }
            transport = transport.advanced(by: n)
            start += n
        }
        return (output, chain)
    }

    static func sine(_ hertz: Double, amplitude: Double = 0.25, count: Int = 48000) -> [Float] {
        (0..<count).map { Float(amplitude * sin(2 * Double.pi * hertz * Double($0) / sampleRate)) }
    }

    static func rms(_ x: [Float], _ range: Range<Int>) -> Double {
        (range.reduce(0.0) { $0 + Double(x[$1]) * Double(x[$1]) } / Double(range.count)).squareRoot()
    }

    static func decibels(_ ratio: Double) -> Double { 20 * log10(max(ratio, 1e-30)) }
}

/// The pitch of a periodic signal by autocorrelation: the shortest lag whose normalised
/// correlation comes within 10 % of the best in 40 Hz…2 kHz, refined by a parabola.
enum Pitch {
    static func hertz(_ x: [Float], range: Range<Int>, sampleRate: Double = LV2Test.sampleRate) -> Double {
        let minLag = Int(sampleRate / 2000), maxLag = Int(sampleRate / 40)
        let n = range.count - maxLag
        func correlation(_ lag: Int) -> Double {
            var sum = 0.0, e0 = 0.0, e1 = 0.0
            for i in range.lowerBound..<(range.lowerBound + n) {
                let a = Double(x[i]), b = Double(x[i + lag])
                sum += a * b; e0 += a * a; e1 += b * b
            }
            return sum / max((e0 * e1).squareRoot(), 1e-30)
        }
        let values = (minLag...maxLag).map(correlation)
        let best = values.max() ?? 0
        // The first peak close to the best: the period, not a multiple of it.
        var k = 1
        while k < values.count - 1 {
            if values[k] >= 0.9 * best && values[k] >= values[k - 1] && values[k] >= values[k + 1] { break }
            k += 1
        }
        let (a, b, c) = (values[k - 1], values[k], values[min(k + 1, values.count - 1)])
        let shift = (a - 2 * b + c) == 0 ? 0 : 0.5 * (a - c) / (a - 2 * b + c)
        return sampleRate / (Double(minLag + k) + shift)
    }
}
