import Foundation
import TapedeckCore
import TapedeckEngine
import TapedeckIO
import TapedeckDevices
#if canImport(Glibc)
import Glibc
#endif

/// Capture: 32 channels at 96 kHz / 24-bit onto 32 armed tracks (one file each) while 32
/// tracks play, 128-frame periods, 10 minutes of audio — through the CLI's device layer
/// (``ALSADuplexDevice``) on the unpaced `filetap` PCM (capture reads /dev/zero: endless
/// silence; playback goes to /dev/null), so it runs as fast as the engine and the disk allow.
/// Goal: not one frame dropped — every take holds exactly duration × rate frames, no xrun.
///
/// Unpaced, the audio thread outruns the disk whenever the disk is the slower side, so the
/// capture rings fill and the audio thread waits for room (``EngineOptions/waitsForDisk``,
/// only ever for unpaced devices; longer than two seconds would drop frames, which this
/// counts). The high-water mark therefore says which side was slower, not how close a paced
/// run came to losing audio (`bench engine --record` measures that); the real-time factor
/// says how much faster than real time the whole path is.
public enum BenchCapture {
    static let sampleRate = 96000
    /// Looped playback material: a few short mono files the tracks share (8 × 2 s ≈ 3 MB).
    static let sourceCount = 8
    static let sourceSeconds = 2
    /// Free space asked for beyond the take itself (the 5.5 GB default take needs 8 GB).
    static let diskMargin = 1.45
    /// The filetap PCM, as in Tests/Fixtures/alsa-test.conf; written beside the material when
    /// `TAPEDECK_ALSA_CONFIG` does not name a config, so the benchmark runs anywhere.
    static let filetapConfig = """
    pcm.filetap {
        @args [ IN OUT ]
        @args.IN  { type string default "/dev/zero" }
        @args.OUT { type string default "/dev/null" }
        type file
        slave.pcm { type null }
        infile $IN
        file $OUT
        format "raw"
        perm 0644
    }

    """

    /// What to run.
    public struct Size {
        public var channels = 32
        public var tracks = 32
        public var minutes = 10.0
        public var periodFrames = 128

        public init(channels: Int = 32, tracks: Int = 32, minutes: Double = 10, periodFrames: Int = 128) {
            self.channels = channels
            self.tracks = tracks
            self.minutes = minutes
            self.periodFrames = periodFrames
        }

        /// Whole periods, so "no frame dropped" is exact: the device delivers exactly this many.
        var frames: Int64 {
            let wanted = Int64((minutes * 60 * Double(BenchCapture.sampleRate)).rounded())
            let p = Int64(periodFrames)
            return max(p, (wanted + p - 1) / p * p)
        }
        /// Bytes of 24-bit samples in the take.
        var takeBytes: Int64 { frames * Int64(channels) * 3 }
        var label: String {
            let m = minutes >= 1 && minutes == minutes.rounded() ? "\(Int(minutes)) min" : "\(BenchSupport.fixed(minutes * 60, 1)) s"
            return "\(channels) ch 96 kHz/24-bit × \(m), \(tracks) track\(tracks == 1 ? "" : "s") playing, \(periodFrames)-frame periods"
        }
    }

    /// Checks the disk, builds the session, records, verifies the takes and deletes them.
    public static func run(folder: String, size: Size) throws -> BenchResult {
        try checkFreeSpace(folder: folder, size: size)
        let sessionFolder = try prepare(folder: folder, size: size)
        let session = try sessionFolder.load()
        let loopFrames = Int64(sourceSeconds * sampleRate)
        let config: ALSAConfig
        if let fromEnvironment = try ALSAConfig.fromEnvironment() {
            config = fromEnvironment
        } else {
            let path = folder + "/filetap.conf"
            try filetapConfig.write(toFile: path, atomically: true, encoding: .utf8)
            config = try ALSAConfig(path: path)
        }
        // 24-bit interfaces deliver S32_LE; float and the rest only if the PCM refuses it.
        let request = DeviceRequest(name: "filetap", sampleRate: sampleRate, captureChannels: size.channels,
                                    playbackChannels: 2, periodFrames: size.periodFrames, periodCount: 3,
                                    formats: [.s32] + DeviceSampleFormat.allCases.filter { $0 != .s32 }, exactRate: true)
        let device = try withStderrSilenced { () throws(DeviceError) in try ALSADuplexDevice(request: request, config: config) }
        var options = EngineOptions()
        // An unpaced file tap outruns any disk: here the audio thread waits for the writer
        // (never on a real device), so what is measured is whether every frame arrives.
        options.waitsForDisk = true
        let engine = Engine(device: device, options: options)
        let recordTracks = Array(size.tracks..<(size.tracks + size.channels))
        try engine.start(try GraphSpec(session: session, folder: sessionFolder), position: 0)
        engine.setLoop(FrameRange(startFrame: 0, endFrame: loopFrames), enabled: true)
        let requests = recordTracks.enumerated().map { k, track in
            TakeRequest(track: track, channelCount: 1, path: "\(folder)/capture-take-\(k + 1).wav", container: .wav,
                        encoding: .int24, peakPath: "\(folder)/capture-take-\(k + 1).wav.peak")
        }
        defer {
            for r in requests {
                unlink(r.path)
                if let p = r.peakPath { unlink(p) }
            }
        }
        let start = monotonicSeconds()
        let set = try engine.startTakes(requests, gate: TakeGate(recordPoint: 0, maxFrames: size.frames))
        engine.play()
        while engine.isRunning && !set.hasEnded { usleep(20_000) }
        let outcomes = engine.finish(set)
        let wall = monotonicSeconds() - start
        let status = engine.status()
        engine.close()
        if let error = status.lastError { throw BenchError("capture failed: \(error)") }
        var short = 0
        for r in requests where (try? AudioFileReader(path: r.path, blockFrames: 16).frameCount) != size.frames { short += 1 }
        let dropped = outcomes.reduce(0) { $0 + $1.droppedFrames }
        let capacity = Int(options.captureRingSeconds * Double(sampleRate)) + device.configuration.periodFrames
        let highWater = status.captureRingHighWaterFrames
        let seconds = Double(size.frames) / Double(sampleRate)
        let format = device.configuration.captureFormat?.rawValue ?? "?"
        return BenchResult(
            name: "capture (\(size.label))",
            measured: "\(dropped) dropped frames, \(status.xrunCount) xruns, "
                + "\(BenchSupport.fixed(seconds, 1)) s of audio in \(BenchSupport.fixed(wall)) s "
                + "(\(BenchSupport.fixed(seconds / max(wall, 1e-9), 1))× real time)",
            peer: "no peer; \(size.channels) takes of \(size.frames) frames\(short == 0 ? "" : " (\(short) SHORT)"), "
                + "ring high water \(highWater) of \(capacity) frames (\(BenchSupport.fixed(Double(highWater) * 100 / Double(capacity), 0)) %), "
                + "device \(format), takes \(bytesText(size.takeBytes)) (deleted)",
            ratio: "—", goal: "0 dropped, 0 xruns",
            met: dropped == 0 && status.xrunCount == 0 && short == 0)
    }

    /// `5.53 GB` or `3.5 MB`.
    static func bytesText(_ bytes: Int64) -> String {
        bytes >= 1_000_000_000 ? "\(BenchSupport.fixed(Double(bytes) / 1e9, 2)) GB" : "\(BenchSupport.fixed(Double(bytes) / 1e6, 1)) MB"
    }

    /// Refuses, with the numbers, when the take would not fit with room to spare.
    static func checkFreeSpace(folder: String, size: Size) throws {
        var fs = statvfs()
        guard statvfs(folder, &fs) == 0 else {
            throw BenchError("\(folder): cannot read free space: \(String(cString: strerror(errno)))")
        }
        let free = Double(fs.f_bavail) * Double(fs.f_frsize)
        let needed = Double(size.takeBytes) * diskMargin
        guard free >= needed else {
            throw BenchError("capture needs \(BenchSupport.fixed(needed / 1e9, 1)) GB free in \(folder) for a "
                             + "\(BenchSupport.fixed(Double(size.takeBytes) / 1e9, 1)) GB take; only "
                             + "\(BenchSupport.fixed(free / 1e9, 1)) GB is (use --minutes or --folder)")
        }
    }

    /// The session `FOLDER/capture.tapedeck` at 96 kHz: `size.tracks` mono tracks, each one
    /// region over one of the short shared sources, played in a loop.
    static func prepare(folder: String, size: Size) throws -> SessionFolder {
        let session = SessionFolder(path: folder + "/capture.tapedeck")
        var s = Session(sampleRate: sampleRate)
        if !session.exists { try session.create(s) }
        let frames = Int64(sourceSeconds * sampleRate)
        for k in 0..<sourceCount {
            let path = "\(session.audioFolder)/src\(k).wav"
            if (try? AudioFileReader(path: path, blockFrames: 16).frameCount) != frames {
                try BenchSupport.writeTestTrack(path: path, seconds: sourceSeconds, sampleRate: sampleRate, seed: k, channels: 1)
            }
        }
        for t in 0..<size.tracks {
            s.tracks.append(Track(name: "t\(t)", gainDecibels: -12, pan: Double(t % 9) / 4 - 1,
                                  regions: [Region(file: "audio/src\(t % sourceCount).wav", timelineStartFrame: 0, lengthFrames: frames)]))
        }
        // One armed mono track per input channel: each records its own file.
        for c in 0..<size.channels {
            s.tracks.append(Track(name: "in\(c + 1)", inputChannels: [c + 1], armed: true, monitoring: .off))
        }
        try session.save(s)
        return session
    }
}
