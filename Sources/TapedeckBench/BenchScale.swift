import Foundation
import TapedeckCore
import TapedeckEngine
import TapedeckIO
import TapedeckTransport
import TapedeckUI
import TapedeckDevices

/// Scale: a 32-track × 2-hour session must open (what the screen does before it can draw) in
/// ≤ 0.5 s with RSS ≤ 150 MB — peak files are read, audio is not.
///
/// The session is generated once and kept: every track is one mono region over a 16-bit
/// 48 kHz WAV whose header is real but whose samples are a hole (the file is extended with
/// ftruncate, so 22 GB of audio take a few kilobytes of disk), and whose peak file is written
/// directly from a synthetic envelope, stamped fresh against the audio. Each measurement is a
/// child process (`tapedeck bench scale-open SESSION`) so its peak RSS is its own.
public enum BenchScale {
    static let sampleRate = 48000
    static let goalSeconds = 0.5
    static let goalMegabytes = 150.0
    /// The overview width the open path computes, per track.
    static let columns = 200

    /// What to generate: the benchmark's 32 × 120 minutes, or less for tests.
    public struct Size {
        public var tracks = 32
        public var minutes = 120

        public init(tracks: Int = 32, minutes: Int = 120) {
            self.tracks = tracks
            self.minutes = minutes
        }

        var frames: Int64 { Int64(minutes) * 60 * Int64(BenchScale.sampleRate) }
        var label: String { "\(tracks) × \(minutes >= 60 && minutes % 60 == 0 ? "\(minutes / 60) h" : "\(minutes) min")" }
    }

    /// Generates the session in `folder` when it is missing or stale, then opens it `runs`
    /// times in child processes and reports the medians against the goal.
    public static func run(folder: String, runs: Int, size: Size) throws -> BenchResult {
        let session = SessionFolder(path: "\(folder)/scale-\(size.tracks)x\(size.minutes)m.tapedeck")
        if !isReady(session, size: size) { try generate(session, size: size) }
        var wall: [Double] = [], open: [Double] = [], rss: [Double] = []
        for _ in 0..<runs {
            let child = try measure(sessionPath: session.path)
            wall.append(child.wallSeconds)
            open.append(child.openSeconds)
            rss.append(child.maxRSSMegabytes)
        }
        let (t, o, m) = (BenchSupport.median(wall), BenchSupport.median(open), BenchSupport.median(rss))
        let disk = diskUsage(session.path)
        return BenchResult(
            name: "scale open (\(size.label) mono, \(columns)-column overview)",
            measured: "\(BenchSupport.fixed(t, 3)) s (open \(BenchSupport.fixed(o, 3)) s), RSS \(BenchSupport.fixed(m, 1)) MB",
            peer: "no peer; session on disk \(megabytes(disk.used)) MB of \(megabytes(disk.apparent)) MB",
            ratio: "—", goal: "≤ \(goalSeconds) s, ≤ \(Int(goalMegabytes)) MB",
            met: t <= goalSeconds && m <= goalMegabytes)
    }

    // MARK: - The child: the screen's open path

    /// `tapedeck bench scale-open SESSION`: exactly what the screen does before it can draw —
    /// load session.json, make the peak cache, transport and model — plus one full-width
    /// overview per track at ``columns`` columns, computed as the timeline draws its lanes.
    /// Returns one line `scale-open seconds=… maxrss_kb=… tracks=… regions=… problems=…`,
    /// and the first problem when any region has no peaks (the command then exits 1).
    public static func openSession(path: String) throws -> (line: String, problem: String?) {
        let start = monotonicSeconds()
        let folder = SessionFolder(path: path)
        let session = try folder.load()
        let peaks = PeakCache(folder: folder)
        let device = OfflineClockDevice(sampleRate: session.sampleRate, periodFrames: 256, capacityPeriods: 0, paced: true)
        let link = try Transport(session: session, folder: folder, device: device, deviceName: OfflineClockDevice.displayName,
                                 isOffline: true)
        defer { link.close() }
        let model = ScreenModel(document: SessionDocument(session: session), folder: folder, link: link,
                                hooks: ScreenHooks(), peaks: peaks)
        let framesPerColumn = max(1, (max(1, model.session.endFrame) + Int64(columns) - 1) / Int64(columns))
        var regions = 0
        var sum: Double = 0 // printed, so the overview cannot be optimised away
        for track in model.session.tracks {
            regions += track.regions.count
            for col in 0..<columns {
                let from = Int64(col) * framesPerColumn
                let to = from + framesPerColumn
                var amplitude: Float = 0
                for region in track.regions where region.timelineStartFrame < to && region.timelineEndFrame > from {
                    for c in 0..<max(1, track.inputChannels.count) {
                        amplitude = max(amplitude, model.peaks.amplitude(region: region, channel: c, fromFrame: from, toFrame: to))
                    }
                }
                sum += Double(amplitude)
            }
        }
        let seconds = monotonicSeconds() - start
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        let problems = peaks.problems
        let line = "scale-open seconds=\(BenchSupport.fixed(seconds, 4)) maxrss_kb=\(usage.ru_maxrss) "
            + "tracks=\(session.tracks.count) regions=\(regions) problems=\(problems.count) "
            + "overview=\(BenchSupport.fixed(sum, 3))"
        return (line, problems.sorted(by: { $0.key < $1.key }).first?.value)
    }

    /// What one child run reported.
    struct ChildRun {
        var wallSeconds: Double
        var openSeconds: Double
        var maxRSSMegabytes: Double
    }

    /// Runs `tapedeck bench scale-open SESSION` and reads its line.
    static func measure(sessionPath: String) throws -> ChildRun {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: BenchSupport.tapedeckPath)
        p.arguments = ["bench", "scale-open", sessionPath]
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        p.standardInput = FileHandle.nullDevice
        let start = monotonicSeconds()
        try p.run()
        // The child prints one short line per stream, well under a pipe's buffer.
        p.waitUntilExit()
        let wall = monotonicSeconds() - start
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let errText = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        guard p.terminationStatus == 0 else {
            throw BenchError("scale-open failed (\(p.terminationStatus)): \(errText.prefix(300))")
        }
        var fields: [String: String] = [:]
        for word in text.split(whereSeparator: \.isWhitespace) {
            let kv = word.split(separator: "=", maxSplits: 1)
            if kv.count == 2 { fields[String(kv[0])] = String(kv[1]) }
        }
        guard let seconds = fields["seconds"].flatMap(Double.init), let kb = fields["maxrss_kb"].flatMap(Double.init) else {
            throw BenchError("scale-open printed no numbers: \(text.prefix(200))")
        }
        return ChildRun(wallSeconds: wall, openSeconds: seconds, maxRSSMegabytes: kb / 1024)
    }

    // MARK: - Generating the session

    /// Whether `session` holds `size.tracks` regions whose peak files are fresh.
    static func isReady(_ session: SessionFolder, size: Size) -> Bool {
        guard session.exists, let s = try? session.load(), s.tracks.count == size.tracks else { return false }
        return s.tracks.allSatisfy { track in
            track.regions.count == 1 && track.regions[0].lengthFrames == size.frames
                && !PeakFile.isStale(peakPath: session.peakPath(forAudio: track.regions[0].file),
                                     sourcePath: session.absolutePath(of: track.regions[0].file))
        }
    }

    /// Writes the session from scratch (replacing whatever was at its path).
    static func generate(_ session: SessionFolder, size: Size) throws {
        if FileManager.default.fileExists(atPath: session.path) {
            try FileManager.default.removeItem(atPath: session.path)
        }
        var s = Session(sampleRate: sampleRate)
        try session.create(s)
        for t in 0..<size.tracks {
            let file = "audio/t\(t < 10 ? "0" : "")\(t).wav"
            let audio = session.absolutePath(of: file)
            try writeSparseWAV(path: audio, frames: size.frames)
            guard let stamp = FileStamp.of(path: audio) else { throw BenchError("\(audio): vanished after writing") }
            let peaks = PeakFile(channelCount: 1, sourceFrameCount: size.frames, sourceStamp: stamp,
                                 level0: envelope(frames: size.frames, seed: t))
            try peaks.save(path: session.peakPath(forAudio: file))
            s.tracks.append(Track(name: "t\(t)", inputChannels: [1],
                                  regions: [Region(file: file, timelineStartFrame: 0, lengthFrames: size.frames)]))
        }
        try session.save(s)
    }

    /// A 16-bit mono WAV of `frames` frames: a real 44-byte header, then a hole of the data's
    /// size (ftruncate allocates nothing), which reads as silence.
    static func writeSparseWAV(path: String, frames: Int64) throws {
        let dataBytes = frames * 2
        guard dataBytes + 36 <= Int64(UInt32.max) else { throw BenchError("\(path): too long for a plain WAV") }
        var h: [UInt8] = []
        func u32(_ v: UInt32) { withUnsafeBytes(of: v.littleEndian) { h += $0 } }
        func u16(_ v: UInt16) { withUnsafeBytes(of: v.littleEndian) { h += $0 } }
        h += Array("RIFF".utf8); u32(UInt32(36 + dataBytes)); h += Array("WAVE".utf8)
        h += Array("fmt ".utf8); u32(16); u16(1); u16(1); u32(UInt32(sampleRate)); u32(UInt32(sampleRate * 2)); u16(2); u16(16)
        h += Array("data".utf8); u32(UInt32(dataBytes))
        let fd = Foundation.open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw BenchError("\(path): cannot create: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        let written = h.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        guard written == h.count, ftruncate(fd, off_t(44 + dataBytes)) == 0 else {
            throw BenchError("\(path): cannot write: \(String(cString: strerror(errno)))")
        }
    }

    /// Synthetic level-0 peaks: a slowly swelling envelope (phrases of a few seconds under a
    /// slower swell), different per `seed`, with the min a little smaller than the max.
    static func envelope(frames: Int64, seed: Int) -> [Float] {
        let bucket = Int64(PeakFile.defaultBaseBucketFrames)
        let count = Int((frames + bucket - 1) / bucket)
        let bucketsPerSecond = Double(sampleRate) / Double(bucket)
        let phrase = 2 * Double.pi / (bucketsPerSecond * Double(3 + seed % 5))
        let swell = 2 * Double.pi / (bucketsPerSecond * Double(240 + 17 * seed))
        var out = [Float](repeating: 0, count: count * 2)
        for b in 0..<count {
            let x = Double(b)
            let a = 0.05 + 0.45 * (0.5 + 0.5 * sin(x * swell + Double(seed))) * (0.6 + 0.4 * sin(x * phrase))
            out[2 * b] = Float(-0.9 * a)
            out[2 * b + 1] = Float(a)
        }
        return out
    }

    // MARK: - Helpers

    /// Bytes the tree at `path` occupies on disk, and its apparent size.
    static func diskUsage(_ path: String) -> (used: Int64, apparent: Int64) {
        var used: Int64 = 0, apparent: Int64 = 0
        let files = FileManager.default.enumerator(atPath: path)
        while let name = files?.nextObject() as? String {
            var st = stat()
            guard lstat("\(path)/\(name)", &st) == 0 else { continue }
            used += Int64(st.st_blocks) * 512
            apparent += Int64(st.st_size)
        }
        return (used, apparent)
    }

    static func megabytes(_ bytes: Int64) -> String {
        BenchSupport.fixed(Double(bytes) / 1_048_576, bytes < 10 << 20 ? 1 : 0)
    }
}
