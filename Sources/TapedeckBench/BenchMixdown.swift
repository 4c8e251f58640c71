import Foundation
import TapedeckCore
import TapedeckIO

/// W8: 8 stereo 16-bit 48 kHz tracks × 60 s, each through gain + low-pass + delay, mixed to
/// one WAV — Tapedeck's `export` against ecasound's equivalent chain setup.
public enum BenchMixdown {
    static let trackCount = 8
    /// Tapedeck's wall time over ecasound's (issue 41; 0.15 in issue 17, 0.33 before).
    static let goal = 0.10
    static let seconds = 60
    static let rate = 48000
    /// The same chain on both sides: −6 dB, 5 kHz low-pass, 250 ms delay with 30 % feedback
    /// and a 50 % mix.
    static let chain = "gain:-6,lpf:cutoff=5000,delay:time=250ms:feedback=0.3:mix=0.5"
    static let ecasoundChain = ["-ea:50", "-efl:5000", "-etd:250,0,1,50,30"]

    public static func run(folder: String, runs: Int) throws -> BenchResult {
        guard let ecasound = BenchSupport.which("ecasound") else {
            throw BenchError("W8 mixdown needs ecasound (make bench installs it)")
        }
        let session = SessionFolder(path: folder + "/w8.tapedeck")
        if !session.exists { try build(session) }
        let tapedeck = BenchSupport.tapedeckPath
        let out = folder + "/w8-tapedeck.wav"
        var ecaArgs = ["-q", "-z:mixmode,sum", "-f:16,2,\(rate)"]
        for t in 0..<trackCount {
            ecaArgs += ["-a:\(t + 1)", "-i:\(session.audioFolder)/t\(t).wav"] + ecasoundChain
        }
        ecaArgs += ["-a:all", "-o:\(folder)/w8-ecasound.wav", "-y"]
        let (ours, theirs) = try BenchSupport.alternate(runs: runs, {
            try BenchSupport.time(tapedeck, ["export", session.path, "-o", out, "--bits", "16"])
        }, {
            try BenchSupport.time(ecasound, ecaArgs)
        })
        let ratio = ours / theirs
        return BenchResult(name: "W8 mixdown (8 × 60 s stereo, gain+lpf+delay)",
                           measured: "\(BenchSupport.fixed(ours, 3)) s", peer: "ecasound \(BenchSupport.fixed(theirs, 3)) s",
                           ratio: BenchSupport.fixed(ratio, 3), goal: "≤ \(BenchSupport.fixed(goal))", met: ratio <= goal)
    }

    /// `export --threads N` against `--threads 1` on 64 mono tracks × 30 s, each through the
    /// engine bench's chain (`hpf,comp,eq,gain`), wall times of alternating runs (issue 41:
    /// ≤ 0.6 × on two threads).
    public static func threads(folder: String, runs: Int, threads: Int) throws -> BenchResult {
        let size = BenchEngine.Size(tracks: 64, seconds: 30)
        let session = try BenchEngine.prepare(folder: folder, size: size)
        let tapedeck = BenchSupport.tapedeckPath
        let out = folder + "/threads-export.wav"
        let (many, one) = try BenchSupport.alternate(runs: runs, {
            try BenchSupport.time(tapedeck, ["export", session.path, "-o", out, "--threads", "\(threads)"])
        }, {
            try BenchSupport.time(tapedeck, ["export", session.path, "-o", out, "--threads", "1"])
        })
        let ratio = many / max(one, 1e-9)
        return BenchResult(name: "export on \(threads) threads (64 mono tracks × 30 s × \(size.chain))",
                           measured: "--threads \(threads): \(BenchSupport.fixed(many, 3)) s", peer: "--threads 1: \(BenchSupport.fixed(one, 3)) s",
                           ratio: BenchSupport.fixed(ratio, 2), goal: "≤ 0.60", met: ratio <= 0.6)
    }

    private static func build(_ session: SessionFolder) throws {
        var s = Session(sampleRate: rate)
        try session.create(s)
        for t in 0..<trackCount {
            let path = "\(session.audioFolder)/t\(t).wav"
            try BenchSupport.writeTestTrack(path: path, seconds: seconds, sampleRate: rate, seed: t)
            s.tracks.append(Track(name: "t\(t)", inputChannels: [1, 2], playbackChain: chain,
                                  regions: [Region(file: "audio/t\(t).wav", timelineStartFrame: 0,
                                                   lengthFrames: Int64(seconds * rate))]))
        }
        try session.save(s)
    }
}
