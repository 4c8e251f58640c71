import Foundation
import XCTest
@testable import TapedeckDSP

/// Offline rendering and measuring helpers shared by the DSP tests.
enum Offline {
    static let sampleRate = 48000.0

    /// A sine of `frequency` Hz with peak `amplitude`, `count` frames long.
    static func sine(_ frequency: Double, amplitude: Double = 0.5, count: Int, sampleRate: Double = sampleRate) -> [Float] {
        (0..<count).map { Float(amplitude * sin(2 * Double.pi * frequency * Double($0) / sampleRate)) }
    }

    /// Renders `input` (one array per channel) through `node` in blocks, in place.
    /// `midi` frame offsets are absolute; they are split into blocks. The transport advances
    /// block by block; `transportAt` may change it per block (tempo changes).
    static func render(_ node: any Node, input: [[Float]], blockSize: Int = 512, prepare: Bool = true,
                       transport: TransportInfo = TransportInfo(), midi: [MIDIEvent] = [],
                       transportAt: ((Int, TransportInfo) -> TransportInfo)? = nil) -> [[Float]] {
        let channels = input.count, total = input[0].count
        if prepare { node.prepare(format: NodeFormat(sampleRate: transport.sampleRate, channelCount: channels), maxFrames: blockSize) }
        let buffers = ChannelBuffers(channelCount: channels, capacityFrames: blockSize)
        var output = input
        var clock = transport
        var start = 0
        while start < total {
            let n = min(blockSize, total - start)
            for c in 0..<channels { for i in 0..<n { buffers[c][i] = input[c][start + i] } }
            if let change = transportAt { clock = change(start, clock) }
            let events = midi.filter { Int($0.frameOffset) >= start && Int($0.frameOffset) < start + n }
                .map { var e = $0; e.frameOffset -= Int32(start); return e }
            events.withUnsafeBufferPointer { midiBuffer in
                var context = RenderContext(inPlace: buffers.channels, frameCount: n, midiEvents: midiBuffer, transport: clock)
                node.process(&context)
            }
            for c in 0..<channels { for i in 0..<n { output[c][start + i] = buffers[c][i] } }
            clock = clock.advanced(by: n)
            start += n
        }
        return output
    }

    /// Root mean square of `x[range]`.
    static func rms(_ x: [Float], _ range: Range<Int>? = nil) -> Double {
        let r = range ?? 0..<x.count
        var sum = 0.0
        for i in r { sum += Double(x[i]) * Double(x[i]) }
        return (sum / Double(max(r.count, 1))).squareRoot()
    }

    /// Largest absolute sample of `x[range]`.
    static func peak(_ x: [Float], _ range: Range<Int>? = nil) -> Float {
        let r = range ?? 0..<x.count
        return r.reduce(Float(0)) { max($0, abs(x[$1])) }
    }

    /// Decibels of a linear ratio.
    static func db(_ ratio: Double) -> Double { 20 * log10(max(ratio, 1e-30)) }

    /// Gain in dB of `node` for a steady sine at `frequency`, measured after the transient.
    static func measuredGainDecibels(_ node: any Node, frequency: Double, amplitude: Double = 0.25) -> Double {
        let count = 48000
        let x = sine(frequency, amplitude: amplitude, count: count)
        node.reset()
        let y = render(node, input: [x], blockSize: 1024, prepare: false)[0]
        let window = 24000..<count
        return db(rms(y, window) / rms(x, window))
    }
}

/// An independent reading of the RBJ cookbook, for checking the nodes' filters: magnitude in
/// dB of the digital filter at `frequency`, evaluated on the unit circle.
enum Cookbook {
    enum Shape { case lowPass, highPass, peak, lowShelf, highShelf }

    static func magnitudeDecibels(_ shape: Shape, f0: Double, q: Double, gainDecibels: Double = 0,
                                  at frequency: Double, sampleRate: Double = Offline.sampleRate) -> Double {
        let w0 = 2 * Double.pi * f0 / sampleRate, alpha = sin(w0) / (2 * q), A = pow(10, gainDecibels / 40)
        let c = cos(w0), r = 2 * sqrt(A) * alpha
        let (b, a): ([Double], [Double])
        switch shape {
        case .lowPass: (b, a) = ([(1 - c) / 2, 1 - c, (1 - c) / 2], [1 + alpha, -2 * c, 1 - alpha])
        case .highPass: (b, a) = ([(1 + c) / 2, -(1 + c), (1 + c) / 2], [1 + alpha, -2 * c, 1 - alpha])
        case .peak: (b, a) = ([1 + alpha * A, -2 * c, 1 - alpha * A], [1 + alpha / A, -2 * c, 1 - alpha / A])
        case .lowShelf:
            (b, a) = ([A * ((A + 1) - (A - 1) * c + r), 2 * A * ((A - 1) - (A + 1) * c), A * ((A + 1) - (A - 1) * c - r)],
                      [(A + 1) + (A - 1) * c + r, -2 * ((A - 1) + (A + 1) * c), (A + 1) + (A - 1) * c - r])
        case .highShelf:
            (b, a) = ([A * ((A + 1) + (A - 1) * c + r), -2 * A * ((A - 1) + (A + 1) * c), A * ((A + 1) + (A - 1) * c - r)],
                      [(A + 1) - (A - 1) * c + r, 2 * ((A - 1) - (A + 1) * c), (A + 1) - (A - 1) * c - r])
        }
        let w = 2 * Double.pi * frequency / sampleRate
        func response(_ k: [Double]) -> Double {
            let re = k[0] + k[1] * cos(w) + k[2] * cos(2 * w)
            let im = -(k[1] * sin(w) + k[2] * sin(2 * w))
            return (re * re + im * im).squareRoot()
        }
        return 20 * log10(response(b) / response(a))
    }
}
