import Foundation

/// The sidecar `NAME.wav.recording` that marks a take as in progress. It is written before
/// the first frame and removed only once the take is closed and on its track, so a crash at
/// any moment leaves either a finished take or a marked one that ``TakeRecovery`` can finish.
public struct TakeMarker: Codable, Equatable, Sendable {
    /// The take file, relative to the session folder (or absolute without a session).
    public var file: String
    /// Session folder path, when the take belongs to one.
    public var session: String?
    /// Index of the track (0-based) the take goes onto.
    public var trackIndex: Int?
    /// Timeline frame where the take's first frame (after latency compensation) belongs.
    public var timelineStartFrame: Int64
    /// Frames at the start of the file that precede the timeline start (the round-trip
    /// latency of an overdub); they become the region's source offset.
    public var latencyFrames: Int64
    /// Frames per second of the take.
    public var sampleRate: Int
    /// Device channels recorded (1-based), for the record.
    public var deviceChannels: [Int]
    /// When recording started (seconds since 1970).
    public var startedAtSeconds: Double

    /// Creates a marker.
    public init(file: String, session: String?, trackIndex: Int?, timelineStartFrame: Int64,
                latencyFrames: Int64, sampleRate: Int, deviceChannels: [Int], startedAtSeconds: Double) {
        self.file = file
        self.session = session
        self.trackIndex = trackIndex
        self.timelineStartFrame = timelineStartFrame
        self.latencyFrames = latencyFrames
        self.sampleRate = sampleRate
        self.deviceChannels = deviceChannels
        self.startedAtSeconds = startedAtSeconds
    }

    /// The sidecar path for an audio file path.
    public static func sidecarPath(forAudio path: String) -> String { path + ".recording" }

    /// Writes the sidecar durably (fsync) next to `audioPath`. Control thread.
    public func write(forAudio audioPath: String) throws(TakeError) {
        let path = TakeMarker.sidecarPath(forAudio: audioPath)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        guard let data = try? encoder.encode(self) else { throw TakeError(path: path, reason: "cannot encode the take marker") }
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            let code = errno
            let dir = parentFolderPath(audioPath)
            var st = stat()
            if stat(dir, &st) != 0 { throw TakeError(path: audioPath, reason: "cannot create: folder \(dir) does not exist") }
            if access(dir, W_OK) != 0 { throw TakeError(path: audioPath, reason: "cannot create: permission denied in \(dir)") }
            throw TakeError(path: audioPath, reason: "cannot create: \(String(cString: strerror(code)))")
        }
        defer { close(fd) }
        let ok = data.withUnsafeBytes { raw in Glibc.write(fd, raw.baseAddress, raw.count) == raw.count }
        if !ok || fsync(fd) != 0 {
            let why = String(cString: strerror(errno))
            unlink(path)
            throw TakeError(path: path, reason: "cannot write the take marker: \(why)")
        }
    }

    /// Reads a sidecar.
    public static func read(sidecar path: String) throws(TakeError) -> TakeMarker {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw TakeError(path: path, reason: "cannot read the take marker")
        }
        do { return try JSONDecoder().decode(TakeMarker.self, from: data) } catch {
            throw TakeError(path: path, reason: "the take marker is not valid JSON")
        }
    }

    /// Removes the sidecar of `audioPath` (the take is complete and placed).
    public static func remove(forAudio audioPath: String) {
        unlink(sidecarPath(forAudio: audioPath))
    }
}

/// Why a take could not be written, finished or recovered; one line for the user.
public struct TakeError: Error, CustomStringConvertible, Equatable, Sendable {
    /// The file concerned.
    public var path: String
    /// What went wrong.
    public var reason: String
    /// Creates an error.
    public init(path: String, reason: String) {
        self.path = path
        self.reason = reason
    }
    public var description: String { "\(path): \(reason)" }
}
