import Foundation
import TapedeckCore
import TapedeckIO
#if canImport(Glibc)
import Glibc
#endif

/// Loudness normalising (issue 43): `export --normalize` against ffmpeg's two-pass `loudnorm`
/// on the same material, by CPU time (user + system of the process and its threads), side by
/// side in one run: 4 minutes of speech-like stereo at `podcast` (−16 LUFS, −1 dBTP), and 8 s
/// of a dense, peaky mix at −8 LUFS (where the limiter works hardest). ffmpeg gets the plain
/// mix Tapedeck exports, and both of its passes are counted (the measuring one and the
/// writing one with `linear=true`); Tapedeck's time includes rendering the mix.
public enum BenchLoudness {
    /// Tapedeck's CPU over ffmpeg's.
    static let goal = 1.5
    static let rate = 48000

    public static func run(folder: String, runs: Int) throws -> [BenchResult] {
        guard let ffmpeg = BenchSupport.which("ffmpeg") else { throw BenchError("loudness needs ffmpeg (make bench installs it)") }
        var rows: [BenchResult] = []
        for (name, seconds, target, speech) in [("loudness podcast (4 min speech)", 240, "podcast", true),
                                                ("loudness -8 LUFS (8 s dense mix)", 8, "-8", false)] {
            let session = SessionFolder(path: folder + "/loudness-\(seconds).tapedeck")
            if !session.exists { try build(session, seconds: seconds, speech: speech) }
            let plain = folder + "/loudness-\(seconds)-plain.wav"
            unlink(plain)
            _ = try BenchSupport.time(BenchSupport.tapedeckPath, ["export", session.path, "-o", plain, "--bits", "32f"])
            let lufs = target == "podcast" ? "-16" : target
            let out = folder + "/loudness-\(seconds)-tapedeck.wav"
            let (ours, theirs) = try BenchSupport.alternate(runs: runs, {
                unlink(out)
                return try cpuSeconds(BenchSupport.tapedeckPath, ["export", session.path, "-o", out, "--normalize", target]).cpu
            }, {
                try ffmpegTwoPass(ffmpeg, input: plain, output: folder + "/loudness-\(seconds)-ffmpeg.wav", lufs: lufs)
            })
            let ratio = ours / theirs
            rows.append(BenchResult(name: name, measured: "\(BenchSupport.fixed(ours, 2)) s CPU",
                                    peer: "ffmpeg loudnorm 2-pass \(BenchSupport.fixed(theirs, 2)) s CPU",
                                    ratio: BenchSupport.fixed(ratio, 2), goal: "≤ \(BenchSupport.fixed(goal))", met: ratio <= goal))
        }
        return rows
    }

    /// ffmpeg's documented two passes: measure, then normalise linearly to the measured values.
    static func ffmpegTwoPass(_ ffmpeg: String, input: String, output: String, lufs: String) throws -> Double {
        let first = try cpuSeconds(ffmpeg, ["-hide_banner", "-nostats", "-i", input, "-af",
                                            "loudnorm=I=\(lufs):TP=-1:LRA=11:print_format=json", "-f", "null", "-"])
        guard let open = first.stderr.lastIndex(of: "{"), let close = first.stderr.lastIndex(of: "}"),
              let json = try? JSONSerialization.jsonObject(with: Data(first.stderr[open...close].utf8)) as? [String: Any] else {
            throw BenchError("ffmpeg loudnorm printed no measurement")
        }
        func v(_ key: String) -> String { json[key] as? String ?? "0" }
        unlink(output)
        let second = try cpuSeconds(ffmpeg, ["-hide_banner", "-nostats", "-y", "-i", input, "-af",
                                             "loudnorm=I=\(lufs):TP=-1:LRA=11:measured_I=\(v("input_i")):measured_TP=\(v("input_tp"))"
                                             + ":measured_LRA=\(v("input_lra")):measured_thresh=\(v("input_thresh")):offset=\(v("target_offset"))"
                                             + ":linear=true", "-ar", "48000", "-c:a", "pcm_s24le", output])
        return first.cpu + second.cpu
    }

    /// Runs a program to its end; its CPU seconds (user + system, its threads and children)
    /// and what it wrote to stderr.
    static func cpuSeconds(_ executable: String, _ args: [String]) throws -> (cpu: Double, stderr: String) {
        let errPath = NSTemporaryDirectory() + "tapedeck-bench-\(UUID().uuidString).err"
        defer { unlink(errPath) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, errPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let argv = ([executable] + args).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var child: pid_t = 0
        let code = posix_spawn(&child, executable, &actions, nil, argv, environ)
        guard code == 0 else { throw BenchError("cannot start \(executable): \(String(cString: strerror(code)))") }
        var status: Int32 = 0
        var usage = rusage()
        while wait4(child, &status, 0, &usage) < 0 && errno == EINTR {}
        let err = (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? ""
        guard status & 0x7f == 0, (status >> 8) & 0xff == 0 else {
            throw BenchError("\(executable) \(args.joined(separator: " ")) failed: \(err.suffix(300))")
        }
        let cpu = Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
            + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
        return (cpu, err)
    }

    /// One stereo track: speech-like (noise shaped into syllables of 120–300 ms with pauses,
    /// two voices at different levels) or a dense mix (a saw chord, noise and sharp clicks).
    private static func build(_ session: SessionFolder, seconds: Int, speech: Bool) throws {
        var s = Session(sampleRate: rate)
        try session.create(s)
        let frames = seconds * rate
        var left = [Float](repeating: 0, count: frames), right = left
        var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
        func random() -> Float {
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            return Float(Int32(truncatingIfNeeded: seed >> 33)) / Float(Int32.max)
        }
        var low: Float = 0
        var i = 0
        if speech {
            while i < frames {
                let syllable = Int(Float(rate) * (0.12 + 0.18 * abs(random())))
                let pause = random() > 0.6 ? Int(Float(rate) * 0.3 * abs(random())) : rate / 50
                let level: Float = (i / (rate * 20)) % 2 == 0 ? 0.25 : 0.1
                let pitch = Float.pi * 2 * (110 + 60 * abs(random())) / Float(rate)
                for k in 0..<min(syllable, frames - i) {
                    let envelope = sin(Float.pi * Float(k) / Float(syllable))
                    low += 0.2 * (random() - low)
                    let voice = level * envelope * (0.6 * sin(pitch * Float(k)) + 0.4 * low)
                    left[i + k] = voice
                    right[i + k] = 0.8 * voice
                }
                i += syllable + pause
            }
        } else {
            for j in 0..<frames {
                let t = Float(j) / Float(rate)
                var x: Float = 0
                for f in [110, 138.6, 164.8] as [Float] { x += 0.12 * (2 * (t * f - (t * f).rounded(.down)) - 1) }
                x += 0.08 * random()
                if j % (rate / 4) == 0 { x += 0.9 }
                left[j] = x
                right[j] = -0.9 * x
            }
        }
        let path = session.audioFolder + "/mix.wav"
        let writer = try AudioFileWriter(path: path, format: AudioFileFormat(container: .wav, encoding: .float32, sampleRate: rate, channelCount: 2),
                                         expectedFrameCount: Int64(frames))
        try writer.write(arrays: [left, right])
        try writer.close()
        s.tracks.append(Track(name: "mix", inputChannels: [1, 2], regions: [Region(file: "audio/mix.wav", timelineStartFrame: 0,
                                                                                  lengthFrames: Int64(frames))]))
        try session.save(s)
    }
}
