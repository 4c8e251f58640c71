import TapedeckCore
import TapedeckDSP
import TapedeckIO

/// The master section of an export at another speed, after the offline stretcher (as in
/// playback, where the master chain and fader run at device rate after the mix's time-pitch):
/// the master chain, its latency made up (the first frames it delays are dropped, and as many
/// frames of silence pushed through at the end), then the master fader, into the writer.
/// Export thread.
final class MasterSection {
    private let chain: ChainInstance?
    private let gain: Float
    private let writer: AudioFileWriter
    private let buffers: [UnsafeMutablePointer<Float>]
    private let maxFrames: Int
    private let sampleRate: Int
    /// What nodes are told: the session's tempo at the range's start × the speed (as playback
    /// tells them at speed), the timeline moving `speed` frames a frame.
    private var transport: TransportInfo
    private let speed: Double
    private var toDrop: Int
    private var done = 0

    /// The master section of `request` (its master chain and the session's master fader) in
    /// front of `writer`. Throws what the session's master chain text met when it was read.
    init(_ request: Mixdown.Request, writer: AudioFileWriter, maxFrames: Int = 8192) throws {
        let text = try request.playedMasterChain()
        let rate = request.session.sampleRate
        if text.entries.isEmpty {
            chain = nil
        } else {
            let instance = text.instantiate(stateFolder: request.folder.pluginStateFolder,
                                            files: SessionNodeFiles(folder: request.folder.path))
            instance.prepare(format: NodeFormat(sampleRate: Double(rate), channelCount: 2, isRealtime: false), maxFrames: maxFrames)
            chain = instance
        }
        gain = Float(Decibels.toLinear(request.session.masterGainDecibels))
        self.writer = writer
        self.maxFrames = maxFrames
        sampleRate = rate
        speed = request.timePitch.speed
        buffers = (0..<2).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: maxFrames) }
        toDrop = chain?.latencyFrames ?? 0
        let start = request.range.startFrame
        transport = TransportInfo(tempoBPM: request.session.tempoMap.tempo(atFrame: start) * speed, sampleRate: Double(rate),
                                  timelineFrame: start, isPlaying: true)
    }

    deinit {
        chain?.release()
        buffers.forEach { $0.deallocate() }
    }

    /// The chain's problems (a plugin missing, passed through), one line each.
    var problems: [String] { (chain?.problems ?? []).map { "master chain: \($0)" } }

    /// `frameCount` frames of the stretched mix (two channels) through the section.
    func write(_ channels: [UnsafePointer<Float>], frameCount n: Int) throws {
        var at = 0
        while at < n {
            let k = min(maxFrames, n - at)
            for c in 0..<2 { buffers[c].update(from: channels[min(c, channels.count - 1)] + at, count: k) }
            try pass(k)
            at += k
        }
    }

    /// Pushes the chain's latency of silence through: the last frames it held back come out.
    func finish() throws {
        var left = chain?.latencyFrames ?? 0
        while left > 0 {
            let k = min(maxFrames, left)
            for c in 0..<2 { buffers[c].update(repeating: 0, count: k) }
            try pass(k)
            left -= k
        }
    }

    private func pass(_ k: Int) throws {
        if let chain {
            let table = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: 2)
            defer { table.deallocate() }
            table[0] = buffers[0]
            table[1] = buffers[1]
            var context = RenderContext(inPlace: UnsafeBufferPointer(start: table, count: 2), frameCount: k, transport: transport)
            chain.process(&context)
        }
        if gain != 1 { for c in 0..<2 { MixKernels.scale(buffers[c], frameCount: k, gain: gain) } }
        done += k
        transport.timelineFrame = transport.timelineFrame + Int64((Double(k) * speed).rounded())
        transport.beatPosition += Double(k) * transport.tempoBPM / 60 / Double(sampleRate)
        let skip = min(toDrop, k)
        toDrop -= skip
        guard k > skip else { return }
        try writer.write([UnsafePointer(buffers[0] + skip), UnsafePointer(buffers[1] + skip)], frameCount: k - skip)
    }
}
