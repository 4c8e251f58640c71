import Foundation
import TapedeckCore
import TapedeckEngine
import TapedeckIO
#if canImport(Glibc)
import Glibc
#endif

/// Capture: 32 channels at 96 kHz / 24-bit to disk while 32 tracks play, 128-frame periods,
/// 10 minutes of audio — through the CLI's device layer (``ALSADuplexDevice``) on the unpaced
/// `filetap` PCM (capture reads /dev/zero: endless silence; playback goes to /dev/null), so
/// it runs as fast as the engine and the disk allow. Goal: not one frame dropped — the take
/// holds exactly the frames the device delivered, duration × rate, with no xrun.
///
/// Unpaced, the audio thread outruns the disk whenever the disk is the slower side, so the
/// capture ring fills and the audio thread waits for room (up to
/// ``EngineOptions/ringWaitNanoseconds``; longer would drop frames, which this counts). The
/// high-water mark therefore says which side was slower, not how close a paced run came to
/// losing audio; the real-time factor says how much faster than real time the whole path is.
enum BenchCapture {
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
    struct Size {
        var channels = 32
        var tracks = 32
        var minutes = 10.0
        var periodFrames = 128
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

    /// Counts what the device delivers, so frames captured but never written (a ring that
    /// stayed full too long) show up as the difference from the take's length.
    final class CountingDevice: AudioDevice, @unchecked Sendable {
        let inner: AudioDevice
        /// Frames read successfully plus device time lost in xruns; audio thread, read after
        /// the engine finished.
        private(set) var deliveredFrames: Int64 = 0
        var configuration: DeviceConfiguration { inner.configuration }

        init(_ inner: AudioDevice) { self.inner = inner }
        func start() throws(DeviceError) { deliveredFrames = 0; try inner.start() }
        func stop() { inner.stop() }

        /// Audio thread: no allocation, no locks.
        func read(into channels: UnsafePointer<UnsafeMutablePointer<Float>>, frameCount: Int) -> DeviceIOResult {
            let r = inner.read(into: channels, frameCount: frameCount)
            switch r {
            case .ok: deliveredFrames += Int64(frameCount)
            case .xrun(let lost): deliveredFrames += lost
            case .failed: break
            }
            return r
        }

        /// Audio thread: no allocation, no locks.
        func write(from channels: UnsafePointer<UnsafeMutablePointer<Float>>, frameCount: Int) -> DeviceIOResult {
            inner.write(from: channels, frameCount: frameCount)
        }
    }

    /// Checks the disk, builds the session, records, verifies the take and deletes it.
    static func run(folder: String, size: Size) throws -> BenchResult {
        try checkFreeSpace(folder: folder, size: size)
        let session = try prepare(folder: folder, size: size)
        let loaded = try session.load()
        let loopFrames = Int64(sourceSeconds * sampleRate)
        let plan = try PlaybackPlan(session: loaded, folder: session, from: 0, to: loopFrames, loop: true)
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
        let alsa = try withStderrSilenced { () throws(DeviceError) in try ALSADuplexDevice(request: request, config: config) }
        let device = CountingDevice(alsa)
        let takePath = folder + "/capture-take.wav"
        let peakPath = folder + "/capture-take.wav.peak"
        defer {
            unlink(takePath)
            unlink(peakPath)
        }
        let take = TakeRequest(path: takePath, container: .wav, encoding: .int24,
                               deviceChannels: Array(1...size.channels), peakPath: peakPath, maxFrames: size.frames)
        let options = EngineOptions()
        let engine: Engine
        do { engine = try Engine(device: device, take: take, playback: plan, options: options) } catch {
            alsa.stop()
            throw error
        }
        let start = monotonicSeconds()
        try engine.start()
        while !engine.isDone { usleep(20_000) }
        let summary = try engine.finish()
        let wall = monotonicSeconds() - start
        let status = engine.status()
        if let error = summary.error { throw BenchError("capture failed: \(error)") }
        let fileFrames = try AudioFileReader(path: takePath, blockFrames: 16).frameCount
        let dropped = max(0, device.deliveredFrames - fileFrames)
        // The engine sizes its capture ring so (Engine.init): the option's seconds plus a period.
        let capacity = Int(options.captureRingSeconds * Double(sampleRate)) + device.configuration.periodFrames
        let highWater = status.captureRingHighWaterFrames
        let seconds = Double(size.frames) / Double(sampleRate)
        let exact = fileFrames == size.frames
        let format = device.configuration.captureFormat?.rawValue ?? "?"
        return BenchResult(
            name: "capture (\(size.label))",
            measured: "\(dropped) dropped frames, \(summary.xruns.count) xruns, "
                + "\(BenchSupport.fixed(seconds, 1)) s of audio in \(BenchSupport.fixed(wall)) s "
                + "(\(BenchSupport.fixed(seconds / max(wall, 1e-9), 1))× real time)",
            peer: "no peer; take \(fileFrames) of \(size.frames) frames\(exact ? "" : " (SHORT)"), "
                + "ring high water \(highWater) of \(capacity) frames (\(BenchSupport.fixed(Double(highWater) * 100 / Double(capacity), 0)) %), "
                + "device \(format), take \(bytesText(size.takeBytes)) (deleted)",
            ratio: "—", goal: "0 dropped, 0 xruns",
            met: dropped == 0 && summary.xruns.isEmpty && exact)
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
        try session.save(s)
        return session
    }
}
