import Foundation
import TapedeckDSP
#if canImport(Glibc)
import Glibc
#endif

/// What the per-strip DSP of `bench load`'s big row costs, without a device, a disk or the
/// mix: 1,024 mono chains (`hpf,comp,eq,gain`, as the engine's tracks build them) run one
/// after another on one thread over 256-frame blocks of varied material, timed by that
/// thread's CPU clock. The result is CPU seconds per second of audio: the cores the strips
/// need. On a machine shared with other work, CPU time moves far less than wall time.
///
/// Two chains: the (its `eq` left flat, as the bench session builds it) and one whose
/// three EQ bands all cut or boost, so every biquad runs.
public enum BenchStrips {
    static let sampleRate = 48000.0
    static let blockFrames = 256
    static let chains = [
        BenchEngine.defaultChain,
        "hpf:80,comp:-18,eq:lowGain=3:midGain=-4:highGain=2,gain:-3",
    ]

    /// Runs both chains `runs` times, alternating, over `seconds` of audio on `strips` strips.
    public static func run(runs: Int, seconds: Double, strips: Int) throws -> [BenchResult] {
        var costs = Array(repeating: [Double](), count: chains.count)
        for _ in 0..<max(runs, 1) {
            for (i, text) in chains.enumerated() { costs[i].append(try measure(chain: text, strips: strips, seconds: seconds)) }
        }
        return chains.indices.map { i in
            let median = BenchSupport.median(costs[i])
            let perStripFrame = median / (Double(strips) * sampleRate) * 1e9
            return BenchResult(
                name: "strip DSP: \(strips) mono strips × \(chains[i]), \(blockFrames)-frame blocks, one thread",
                measured: "\(BenchSupport.fixed(median, 3)) CPU s per s of audio (\(BenchSupport.fixed(perStripFrame, 2)) ns a strip-frame), "
                    + "runs \(costs[i].map { BenchSupport.fixed($0, 3) }.joined(separator: ", "))",
                peer: "—", ratio: "—", goal: "< 1 core (the live row's share on 2)", met: median < 1)
        }
    }

    /// CPU seconds per second of audio for `strips` chains of `text`. Off the audio thread
    /// (it is a measurement), but the loop is the engine's: prepared chains, in-place blocks.
    static func measure(chain text: String, strips: Int, seconds: Double) throws -> Double {
        let chain: Chain
        do { chain = try Chain(parsing: text) } catch { throw BenchError("bench chain '\(text)': \(error)") }
        let format = NodeFormat(sampleRate: sampleRate, channelCount: 1)
        let instances = (0..<strips).map { _ in
            let instance = chain.instantiate()
            instance.prepare(format: format, maxFrames: blockFrames)
            instance.inputIsClean = true
            return instance
        }
        defer { for instance in instances { instance.release() } }
        let material = Self.material()
        let buffers = ChannelBuffers(channelCount: 1, capacityFrames: blockFrames)
        let blocks = Int(seconds * sampleRate) / blockFrames
        let sources = material.count
        let sourceFrames = material[0].count
        // A second's blocks first, unmeasured: the compressors settle, the caches fill.
        func pass(_ count: Int, from first: Int) {
            for b in first..<(first + count) {
                let offset = (b * blockFrames) % (sourceFrames - blockFrames)
                for (s, instance) in instances.enumerated() {
                    material[s % sources].withUnsafeBufferPointer { src in
                        buffers.channels[0].update(from: src.baseAddress! + offset, count: blockFrames)
                    }
                    var context = RenderContext(inPlace: buffers.channels, frameCount: blockFrames)
                    instance.process(&context)
                }
            }
        }
        pass(Int(sampleRate) / blockFrames, from: 0)
        let before = threadCPUSeconds()
        pass(blocks, from: 0)
        let cpu = threadCPUSeconds() - before
        return cpu / (Double(blocks * blockFrames) / sampleRate)
    }

    /// Sixteen seconds-long signals: noise and tones under moving envelopes, loud enough at
    /// times to drive the compressor (-18 dB) and quiet between.
    static func material() -> [[Float]] {
        var seed: UInt32 = 0x1234_5678
        func noise() -> Float {
            seed ^= seed << 13; seed ^= seed >> 17; seed ^= seed << 5
            return Float(Int32(bitPattern: seed)) / 2_147_483_648
        }
        return (0..<16).map { k in
            let frequency = 55.0 * Double(k + 1)
            let rate = 0.5 + Double(k) * 0.25
            return (0..<Int(sampleRate)).map { i in
                let t = Double(i) / sampleRate
                let envelope = 0.05 + 0.6 * (0.5 + 0.5 * sin(2 * Double.pi * rate * t))
                let tone = sin(2 * Double.pi * frequency * t)
                return Float(envelope * (0.7 * tone)) + Float(envelope) * 0.3 * noise()
            }
        }
    }

    static func threadCPUSeconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}
