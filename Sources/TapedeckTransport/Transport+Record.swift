import Foundation
import TapedeckCore
import TapedeckDSP
import TapedeckEngine
import TapedeckIO
import TapedeckTakes

/// A recording pass under way: its takes and how they go onto the timeline.
struct RecordingPass {
    enum Kind: Equatable {
        /// From the record point on.
        case plain
        /// Only inside this range, punched in with crossfades.
        case punch(FrameRange)
        /// Every pass of this loop, each a take of one group.
        case loop(FrameRange)
    }

    /// One take of the pass.
    struct Take {
        var track: Int
        var trackName: String
        /// Relative to the session folder (nil: a file outside any session).
        var relativeFile: String?
        var path: String
        var peakPath: String?
        var dryPath: String?
        /// Its crash marker: where and how it goes onto its track. The clean stop places it
        /// with the marker's own ``TakeMarker/regions(fileFrames:file:)``, as recovery would.
        var marker: TakeMarker
        /// Frames per piece of a split take (nil: one file); the names above are the first piece's.
        var pieceFrames: Int64?
        /// The take's second copy (``RecordRequest/mirrorFolder``), its first piece's name when split.
        var mirrorPath: String?
        /// The device inputs it records (1-based), and where it is placed from
        /// (``Engine/takeLatency(captureChannels:playing:)``), followed while it records.
        var captureChannels: [Int] = []
        var latency: TakeLatency = .none
    }

    let set: TakeSet
    let kind: Kind
    var takes: [Take]
    /// The MIDI tracks' takes (`.mid` files in `midi/`), in the order of the set's MIDI lanes.
    var midiTakes: [Take] = []
    var tracks: Set<Int> { Set((takes + midiTakes).map(\.track)) }
    let countInFrames: Int64
    let speed: Double
    let stopsWhenDone: Bool
    /// Where the takes are mirrored (``RecordRequest/mirrorFolder``): the MIDI takes are
    /// copied there when they end.
    var mirrorFolder: String? = nil
    /// Stamp the takes with the wall-clock time of their first frame (`--timestamp clock`).
    var stampsClock = false
    /// Whether the first frame's time is in the takes' crash markers (``Transport/noteFirstFrame()``).
    var firstFrameNoted = false
    /// Device xruns and dropped spans told while the pass ran (marked in its takes).
    var incidents: [EngineEvent] = []
}

/// What a recording pass started with, for a front-end to show.
public struct RecordingStart: Sendable {
    /// The take files, in track order.
    public var paths: [String]
    /// Frames the takes are shifted by to line up with what was heard (the first audio take's).
    public var latencyFrames: Int64
    /// Where each audio take is placed from, in track order.
    public var latencies: [TakeLatency] = []
    /// Frames from input to output while monitoring (nil when no recorded track is heard).
    public var monitorLatencyFrames: Int64?
}

extension Transport {
    /// Starts a recording pass on every armed track (or `request.tracks`) at once, each from
    /// its own inputs through its own input chain into its own file, all starting on the same
    /// timeline frame: after the count-in, from the punch's start (only inside the punch
    /// range), or on every pass of the loop (one count-in before the first). While already
    /// rolling straight on, recording starts at once where it is heard. Throws (and records
    /// nothing) when it cannot.
    ///
    /// In steps (Transport+RecordPlan.swift): which tracks, their inputs listening, the pass's
    /// plan (where it rolls from, what the takes keep, where they are placed), the files, then
    /// roll.
    @discardableResult
    public func record(_ request: RecordRequest) throws -> RecordingStart {
        guard pass == nil else { throw TransportError(.usage, "already recording") }
        reopenIfNeeded()
        if engine.isStarted && !engine.isRunning {
            throw TransportError(.device, "\(deviceName) is not running: \(status.lastError ?? "it stopped")")
        }
        let tracks = try tracksToRecord(request)
        try listen(forRecording: tracks, request)
        let plan: RecordPlan, files: RecordFiles, set: TakeSet
        do {
            plan = try planPass(request, tracks: tracks)
            files = try takeFiles(plan)
            set = try roll(plan, files)
        } catch {
            // Nothing recorded: the tracks are no longer this pass's.
            recordingTracks = []
            throw error
        }
        saidFailedTakes = []
        saidFailedMirrors = []
        warnedDiskSeconds = .infinity
        pass = RecordingPass(set: set, kind: plan.kind, takes: files.takes, midiTakes: files.midiTakes, countInFrames: plan.countIn,
                             speed: timePitch.speed, stopsWhenDone: plan.request.stopsWhenDone, mirrorFolder: plan.request.mirrorFolder)
        pass?.stampsClock = options.stampsTakesWithClock
        let monitorLatency = monitoringLatency(tracks)
        if let frames = monitorLatency {
            let ms = Double(frames) * 1000 / Double(engine.configuration.sampleRate)
            notices.append("monitoring: \(frames) frames (\(String(format: "%.1f", ms)) ms) from input to output")
        }
        var start = RecordingStart(paths: (files.takes + files.midiTakes).map(\.path),
                                   latencyFrames: files.takes.first?.latency.totalFrames ?? plan.gate.latencyFrames,
                                   monitorLatencyFrames: monitorLatency)
        start.latencies = files.takes.map(\.latency)
        return start
    }

    /// Frames from input to output while monitoring the recorded `tracks` (nil when none is heard).
    private func monitoringLatency(_ tracks: [Int]) -> Int64? {
        var monitorLatency: Int64?
        let device = engine.device.latency
        for t in tracks where (spec.tracks[t].input?.monitoring ?? .off) != .off {
            let frames = device.capture(channels: spec.tracks[t].input?.deviceChannels ?? [1]) + device.playback(channels: [1, 2])
                + Int64(engine.inputLatencyFrames(track: t))
            monitorLatency = max(monitorLatency ?? 0, frames)
        }
        return monitorLatency
    }
}
