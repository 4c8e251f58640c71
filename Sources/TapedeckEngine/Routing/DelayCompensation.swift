import TapedeckCore
import TapedeckDSP

/// Delay compensation across the routing, as numbers: how late each strip's output is, where
/// each summing point lines its inputs up, and the output's total. The live graph
/// (``RouteTable``) holds paths back by these; `info` and the screen show them.
///
/// A track's output lags by nothing (its own chain is made up for by reading its material
/// ahead); a bus's input lines up with the slowest path into it and its output lags by that
/// and its chain; the master lines up every path into it, and device outputs line up with the
/// master's output.
public struct DelayCompensation: Sendable, Equatable {
    /// Per strip, frames its output lags the timeline.
    public var outputDelayFrames: [Int]
    /// Per strip, frames its input is lined up to (a bus: its slowest feed; a track: 0).
    public var arrivalFrames: [Int]
    /// Where the paths into the master line up.
    public var masterArrivalFrames: Int
    /// Frames the master's output, and every device output, lags the timeline.
    public var outputLatencyFrames: Int

    /// The numbers for `tracks` (strips in session order, routed by index) whose chains delay
    /// by `chainLatencyFrames` each, with a master chain of `masterLatencyFrames`, walked in
    /// `order` (every strip before the buses it feeds).
    public init(tracks: [GraphSpec.Track], chainLatencyFrames: [Int], masterLatencyFrames: Int, order: [Int]) {
        let n = tracks.count
        var outDelay = [Int](repeating: 0, count: n)
        var arrival = [Int](repeating: 0, count: n)
        for i in order where i < n {
            if tracks[i].isBus { outDelay[i] = arrival[i] + (i < chainLatencyFrames.count ? chainLatencyFrames[i] : 0) }
            for t in DelayCompensation.targets(tracks, i) { arrival[t] = max(arrival[t], outDelay[i]) }
        }
        var master = 0, direct = 0
        for i in 0..<n {
            switch tracks[i].output {
            case .device: direct = max(direct, outDelay[i])
            case .strip(let b) where tracks.indices.contains(b): break
            default: master = max(master, outDelay[i])
            }
        }
        master = max(master, direct - masterLatencyFrames)
        outputDelayFrames = outDelay
        arrivalFrames = arrival
        masterArrivalFrames = master
        outputLatencyFrames = master + masterLatencyFrames
    }

    /// The buses strip `i` feeds (its output's and its sends'), each once.
    public static func targets(_ tracks: [GraphSpec.Track], _ i: Int) -> [Int] {
        var out: [Int] = []
        if case .strip(let b) = tracks[i].output, tracks.indices.contains(b) { out.append(b) }
        for s in tracks[i].sends where tracks.indices.contains(s.target) && !out.contains(s.target) { out.append(s.target) }
        return out
    }

    /// Strips in render order (``RenderOrder``).
    public static func renderOrder(_ tracks: [GraphSpec.Track]) -> [Int] {
        RenderOrder.of(count: tracks.count, isBus: { tracks[$0].isBus }, targets: { targets(tracks, $0) }).order
    }
}

extension GraphSpec {
    /// The delay compensation this spec gets at `sampleRate`, with every chain (tracks',
    /// buses', the master's) instantiated and prepared offline to learn its latency, then
    /// released. For `info` and the screen. Control thread.
    public func delayCompensation(sampleRate rate: Int) -> DelayCompensation {
        let files = SessionNodeFiles(folder: sessionFolder)
        func latency(_ chain: Chain, channels: Int) -> Int {
            guard !chain.entries.isEmpty else { return 0 }
            let instance = chain.instantiate(stateFolder: pluginStateFolder, files: files)
            instance.prepare(format: NodeFormat(sampleRate: Double(rate), channelCount: channels, isRealtime: false), maxFrames: 1024)
            defer { instance.release() }
            return instance.latencyFrames
        }
        let latencies = tracks.map { latency($0.chain, channels: $0.channelCount) }
        return DelayCompensation(tracks: tracks, chainLatencyFrames: latencies, masterLatencyFrames: latency(masterChain, channels: 2),
                                 order: DelayCompensation.renderOrder(tracks))
    }
}
