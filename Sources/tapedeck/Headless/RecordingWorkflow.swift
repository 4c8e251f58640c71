import Foundation
import TapedeckCore
import TapedeckEngine
import TapedeckIO

/// Turns the recording options into the engine's terms (where the transport starts, which
/// timeline range the take keeps, the click) and places the finished take: at its record
/// point, punched in with crossfades, split into loop-pass takes, or scaled by its speed.
struct RecordingWorkflow {
    /// Where the transport starts: the record point minus the count-in.
    let transportStart: Int64
    /// The timeline range the take keeps (nil: everything from the start, as before).
    let gate: FrameRange?
    /// The loop range for loop recording.
    let loopRange: FrameRange?
    /// The click the engine plays.
    let click: ClickSettings?
    /// Whether the take replaces what is under it (punch).
    let punch: Bool

    init(_ options: RecordingOptions, session: Session?, tempo: TempoMap, play: Bool) throws {
        var recordPoint: Int64 = 0
        var gate: FrameRange?
        if let text = options.punchText {
            let range = try TimeText.range(from: text, tempoMap: tempo, defaultEnd: session?.endFrame ?? 0)
            recordPoint = range.startFrame
            gate = range
        } else if let text = options.atText {
            recordPoint = try TimeText.frames(from: text, tempoMap: tempo)
            gate = FrameRange(startFrame: recordPoint, endFrame: Int64.max)
        }
        var loop: FrameRange?
        if options.loop {
            guard let range = session?.loopRange else {
                throw UsageError("record: --loop needs a loop range in the session (set it on the screen with [ and ])")
            }
            loop = range
            recordPoint = range.startFrame
        }
        let countIn = Int64((Double(options.countInBars) * tempo.framesPerBar).rounded())
        if countIn > 0 && gate == nil && loop == nil { gate = FrameRange(startFrame: recordPoint, endFrame: Int64.max) }
        transportStart = recordPoint - countIn
        self.gate = gate
        loopRange = loop
        punch = options.punchText != nil
        var click = options.click
        if options.clickOnlyForCountIn { click?.untilFrame = recordPoint }
        self.click = click
    }

    /// The crash marker of a take with these options: where and how the take goes onto its
    /// track, so that `recover` places a killed take exactly where this command's own
    /// ``place(target:marker:frames:)`` would have. `latencyFrames` is the engine's round trip
    /// (only an ungated take keeps it at the start of its file).
    func marker(target: TakeTarget, latencyFrames: Int64, sampleRate: Int, channels: [Int], speed: Double) -> TakeMarker {
        let trackName = target.trackIndex.flatMap { i in target.session?.tracks.indices.contains(i) == true ? target.session?.tracks[i].name : nil }
        var marker = TakeMarker(file: target.markerFile, session: target.folder?.path, trackIndex: target.trackIndex,
                                trackName: trackName, timelineStartFrame: 0, latencyFrames: latencyFrames, sampleRate: sampleRate,
                                deviceChannels: channels, startedAtSeconds: Date().timeIntervalSince1970, recordedSpeed: speed)
        if let loop = loopRange {
            marker.placement = .loopPasses(loop: loop)
            marker.timelineStartFrame = loop.startFrame
        } else if let gate {
            // The gate already dropped the latency: the file starts at the record point.
            marker.timelineStartFrame = gate.startFrame
            marker.latencyFrames = 0
            if punch {
                marker.placement = .punch(range: gate, crossfadeFrames: target.session?.punchCrossfadeFrames ?? 0)
            }
        }
        return marker
    }

    /// Puts the closed take on its track as its marker says and saves the session (a plain
    /// file needs nothing).
    func place(target: TakeTarget, marker: TakeMarker, frames: Int64) throws {
        guard let folder = target.folder, target.trackIndex != nil else { return }
        var session = try folder.load()
        let placed = try marker.place(in: &session, fileFrames: frames, file: target.relativeFile)
        if !placed.isEmpty { try folder.save(session) }
    }
}
