import Foundation
import TapedeckCore
import TapedeckIO

/// The sidecar `NAME.wav.recording` that marks a take as in progress, and everything needed
/// to place it exactly where a clean stop would. It is written (durably, atomically) before
/// the first frame and removed only once the take is closed and on its track, so a crash,
/// a `kill -9` or a full disk at any moment leaves either a finished take or a marked one
/// that ``TakeRecovery`` finishes and places with ``place(in:fileFrames:)`` — the same
/// function the clean stop uses, so the two cannot disagree.
///
/// Front-ends fill it from what they ask the engine for:
/// - plain take (`record`, `record --at T`): `timelineStartFrame` = the record point,
///   `latencyFrames` = 0 when the engine's gate drops the round trip (any take with a gate),
///   else the round trip the file starts with (an overdub from the start without a gate);
/// - punch: ``Placement/punch(range:crossfadeFrames:)`` with the punch range and the
///   crossfade the session uses; the take replaces what lies under it;
/// - loop recording: ``Placement/loopPasses(loop:)``; every pass becomes a take of one group
///   (``takeGroup``, or a new group; the last complete pass plays), the file starting after
///   `latencyFrames` of round trip;
/// - a take recorded at another transport speed carries ``recordedSpeed``.
public struct TakeMarker: Codable, Equatable, Sendable {
    /// How the finished take goes onto its track.
    public enum Placement: Codable, Equatable, Sendable {
        /// One region at ``TakeMarker/timelineStartFrame``, over whatever is there.
        case plain
        /// One region punched into `range` (the record point is its start), cutting back what
        /// the track had there with `crossfadeFrames` crossfades at both edges.
        case punch(range: FrameRange, crossfadeFrames: Int64)
        /// The file holds every pass of `loop` back to back; each becomes a take.
        case loopPasses(loop: FrameRange)
    }

    /// The take file, relative to the session folder (or absolute without a session).
    public var file: String
    /// Session folder path, when the take belongs to one.
    public var session: String?
    /// Index of the track (0-based) the take goes onto.
    public var trackIndex: Int?
    /// That track's name when recording started, to find it again if tracks moved.
    public var trackName: String?
    /// Timeline frame where the take's first kept frame belongs: the record point (the
    /// punch start, the loop start, `--at`), after latency compensation.
    public var timelineStartFrame: Int64
    /// Frames at the start of the file that precede ``timelineStartFrame`` (the round trip
    /// of an overdub the engine did not gate away); they become the region's source offset.
    /// 0 when the engine's gate already removed the latency.
    public var latencyFrames: Int64
    /// Frames per second of the take.
    public var sampleRate: Int
    /// Device channels recorded (1-based), for the record.
    public var deviceChannels: [Int]
    /// When recording started (seconds since 1970).
    public var startedAtSeconds: Double
    /// How the take goes onto the track.
    public var placement: Placement
    /// The transport speed while recording (1: normal). A take at another speed is placed
    /// over the time it spans, at rate 1/speed, and marked with its speed.
    public var recordedSpeed: Double
    /// The take group loop passes join; nil: a new group.
    public var takeGroup: Int?
    /// The unprocessed copy kept beside the take (`record --keep both`), repaired with it.
    public var dryFile: String?
    /// When the take's first frame arrived (seconds since 1970, wall clock), for a take
    /// stamped with the time of day (`record --timestamp clock`): written once it is known, so
    /// recovery stamps the take as its close would have.
    public var firstFrameWallClock: Double?

    /// Creates a marker for a plain take at 1×; set the other fields for punch, loop and speed.
    public init(file: String, session: String?, trackIndex: Int?, trackName: String? = nil, timelineStartFrame: Int64,
                latencyFrames: Int64, sampleRate: Int, deviceChannels: [Int], startedAtSeconds: Double,
                placement: Placement = .plain, recordedSpeed: Double = 1, takeGroup: Int? = nil, dryFile: String? = nil) {
        self.file = file
        self.session = session
        self.trackIndex = trackIndex
        self.trackName = trackName
        self.timelineStartFrame = timelineStartFrame
        self.latencyFrames = latencyFrames
        self.sampleRate = sampleRate
        self.deviceChannels = deviceChannels
        self.startedAtSeconds = startedAtSeconds
        self.placement = placement
        self.recordedSpeed = recordedSpeed
        self.takeGroup = takeGroup
        self.dryFile = dryFile
    }

    /// Reads a marker; fields added after the first version may be missing (a plain take
    /// at 1×, as those markers were).
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        file = try c.decode(String.self, forKey: .file)
        session = try c.decodeIfPresent(String.self, forKey: .session)
        trackIndex = try c.decodeIfPresent(Int.self, forKey: .trackIndex)
        trackName = try c.decodeIfPresent(String.self, forKey: .trackName)
        timelineStartFrame = try c.decode(Int64.self, forKey: .timelineStartFrame)
        latencyFrames = try c.decode(Int64.self, forKey: .latencyFrames)
        sampleRate = try c.decode(Int.self, forKey: .sampleRate)
        deviceChannels = try c.decodeIfPresent([Int].self, forKey: .deviceChannels) ?? []
        startedAtSeconds = try c.decodeIfPresent(Double.self, forKey: .startedAtSeconds) ?? 0
        placement = try c.decodeIfPresent(Placement.self, forKey: .placement) ?? .plain
        recordedSpeed = try c.decodeIfPresent(Double.self, forKey: .recordedSpeed) ?? 1
        takeGroup = try c.decodeIfPresent(Int.self, forKey: .takeGroup)
        dryFile = try c.decodeIfPresent(String.self, forKey: .dryFile)
        firstFrameWallClock = try c.decodeIfPresent(Double.self, forKey: .firstFrameWallClock)
    }

    /// The sidecar path for an audio file path.
    public static func sidecarPath(forAudio path: String) -> String { path + ".recording" }

    /// Writes the sidecar next to `audioPath`, atomically and durably (a crash leaves the
    /// previous marker or this one, never half of one). Control thread.
    public func write(forAudio audioPath: String) throws(TakeError) {
        let path = TakeMarker.sidecarPath(forAudio: audioPath)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        guard let data = try? encoder.encode(self) else { throw TakeError(path: path, reason: "cannot encode the take marker") }
        do { try DurableFile.replace(path, with: [UInt8](data)) } catch {
            throw TakeError(path: audioPath, reason: "cannot write its take marker: \(error.reason)")
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

    /// The track this take goes onto in `session`: the marker's track when its name still
    /// matches, else the track with that name, else the marker's index; nil when none exists.
    public func track(in session: Session) -> Int? {
        let tracks = session.tracks
        if let i = trackIndex, tracks.indices.contains(i), trackName == nil || tracks[i].name == trackName { return i }
        if let name = trackName, let i = tracks.firstIndex(where: { $0.name == name }) { return i }
        if let i = trackIndex, tracks.indices.contains(i) { return i }
        return nil
    }

    /// Whether the take is a MIDI take (a `.mid` file): its regions are MIDI regions.
    public var isMIDI: Bool { file.lowercased().hasSuffix(".mid") }

    /// The regions a take file of `fileFrames` frames becomes: one (plain, punch) or one per
    /// loop pass, none when nothing lies past the latency.
    public func regions(fileFrames: Int64, file relative: String) -> [Region] {
        // The timeline ends at 2^40 frames: what a take holds beyond stays in its file, unplaced,
        // so a take recorded at the very end never makes a session that cannot be saved.
        let limit = SessionLimits.maximumTimelineFrames
        return unclippedRegions(fileFrames: fileFrames, file: relative).compactMap { region in
            guard region.timelineStartFrame >= 0, region.timelineStartFrame < limit else { return nil }
            var r = region
            if r.timelineEndFrame > limit { r.lengthFrames = limit - r.timelineStartFrame }
            if isMIDI { r.midi = true }
            return r
        }
    }

    private func unclippedRegions(fileFrames: Int64, file relative: String) -> [Region] {
        switch placement {
        case .loopPasses(let loop):
            // At another speed each pass of the loop holds loop ÷ speed frames of the file;
            // each is then placed over the loop at rate 1/speed.
            let speed = recordedSpeed.isFinite && recordedSpeed >= 1.0 / 64 && recordedSpeed <= 64 ? recordedSpeed : 1
            // (A marker is a file anyone can edit: no arithmetic on its numbers may trap.)
            let scaled = (Double(loop.frameCount) / speed).rounded()
            let passFrames = speed == 1 ? loop.frameCount : max(1, scaled < 0x1p62 ? Int64(scaled) : Int64(1) << 62)
            let (end, overflow) = loop.startFrame.addingReportingOverflow(passFrames)
            guard !overflow, loop.frameCount > 0 else { return [] }
            var passes = Region.loopPasses(file: relative, loop: FrameRange(startFrame: loop.startFrame, endFrame: end),
                                           firstSourceFrame: latencyFrames, fileFrames: fileFrames)
            for i in passes.indices { passes[i].scale(recordedSpeed: speed) }
            return passes
        case .plain, .punch:
            let length = fileFrames - latencyFrames
            guard length > 0 else { return [] }
            var region = Region(file: relative, timelineStartFrame: timelineStartFrame, sourceOffsetFrame: latencyFrames,
                                lengthFrames: length)
            region.scale(recordedSpeed: recordedSpeed)
            return [region]
        }
    }

    /// Puts a closed take of `fileFrames` frames on its track in `session`, as a clean stop
    /// does: appended, punched in, or stacked as loop-pass takes. Returns the regions placed
    /// (none when the take holds nothing past its latency). Throws when its track is gone.
    @discardableResult
    public func place(in session: inout Session, fileFrames: Int64, file relative: String? = nil) throws(TakeError) -> [Region] {
        let regions = regions(fileFrames: fileFrames, file: relative ?? file)
        guard !regions.isEmpty else { return [] }
        guard let t = track(in: session) else {
            throw TakeError(path: relative ?? file, reason: "its track (\(trackIndex.map { "\($0 + 1)" } ?? "none")\(trackName.map { ", \($0.terminalSafe)" } ?? "")) no longer exists; the file is kept")
        }
        switch placement {
        case .plain:
            session.tracks[t].regions.append(contentsOf: regions)
        case .punch(_, let crossfade):
            session.punchIn(track: t, take: regions[0], crossfadeFrames: crossfade)
        case .loopPasses:
            do { try session.addLoopPasses(track: t, passes: regions, group: takeGroup) } catch {
                throw TakeError(path: relative ?? file, reason: error.description)
            }
        }
        return regions
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
    public var description: String { "\(path.terminalSafe): \(reason)" }
}
