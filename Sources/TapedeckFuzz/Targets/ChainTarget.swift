import TapedeckCore
import TapedeckDSP

/// Chain text (`--fx`, `tapedeck chain`, the session file, the screen), and what the
/// parsed chain does to audio that holds NaN, infinities and overs.
struct ChainTarget: FuzzTarget {
    static let name = "chain"
    let seeds = ["hpf:80,comp:threshold=-18:ratio=4", "gain:-6", "delay:time=1/8:feedback=0.3", "reverb", "hpf:100,reverb,limiter",
                 "eq:midFreq=2khz:midGain=3db", "lpf:cutoff=8000hz", "chorus,phaser,tremolo", "gate:-50,hpf:100", "limiter:ceiling=-1",
                 "saturation:drive=12", "pan:-0.5", "delay:250ms", "comp:-20:ratio=3", "tremolo:rate=1/4.", ""]
    let mutator = Mutator(tokens: [",", ":", "=", "db", "hz", "khz", "ms", "s", "%", "st", "1/8t", "1/4.", "!", "hpf", "reverb",
                                   "ratio", "-", "e", "1e400", " "].map { Array($0.utf8) })

    init() {}

    func input(seed: UInt64, index: Int) -> [UInt8] {
        mutator.mutate(oneOf: seeds, stream: Self.name, seed: seed, index: index)
    }

    func check(_ input: [UInt8], index: Int) -> String? {
        let text = Oracle.text(input)
        let chain: Chain
        do { chain = try Chain(parsing: text) } catch {
            let d = error.description
            if !d.hasPrefix("chain error at column ") { return "no column in: \(d.terminalSafe)" }
            return Oracle.unclear(d, lines: 3)
        }
        guard let again = try? Chain(parsing: chain.text), again == chain else {
            return "canonical text '\(chain.text.terminalSafe)' does not read back as the same chain"
        }
        // Only every 8th chain is run: building nodes is the slow part, parsing is the point.
        guard index % 8 == 0, !chain.entries.isEmpty else { return nil }
        let instance = chain.instantiate()
        defer { instance.release() }
        instance.prepare(format: NodeFormat(sampleRate: 48000, channelCount: 2), maxFrames: 256)
        let buffers = ChannelBuffers(channelCount: 2, capacityFrames: 256)
        let poison: [Float] = [.nan, .infinity, -.infinity, 1e30, -1e30, .greatestFiniteMagnitude]
        for block in 0..<4 {
            for c in 0..<2 {
                for i in 0..<256 { buffers[c][i] = block == 0 && i < poison.count ? poison[i] : Float(i % 7) * 0.1 - 0.3 }
            }
            var context = RenderContext(inPlace: buffers.channels, frameCount: 256,
                                        transport: TransportInfo(sampleRate: 48000, isPlaying: true))
            instance.process(&context)
            for c in 0..<2 where buffers[c].contains(where: { !$0.isFinite }) {
                return "'\(chain.text.terminalSafe)' put a NaN or infinity out in block \(block)"
            }
        }
        return nil
    }
}
