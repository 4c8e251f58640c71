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

    /// Puts the closed take on its track and saves the session (a plain file needs nothing).
    func place(target: TakeTarget, frames: Int64, latencyFrames: Int64, speed: Double) throws {
        guard let folder = target.folder, let trackIndex = target.trackIndex else { return }
        var session = try folder.load()
        guard session.tracks.indices.contains(trackIndex) else {
            throw RecordFailure(message: "track \(trackIndex + 1) was removed while recording; the take is kept in \(target.audioPath)")
        }
        if let loop = loopRange {
            // One file holds every pass back to back; each pass becomes a take of one group.
            var group: Int?
            for pass in Region.loopPasses(file: target.relativeFile, loop: loop, firstSourceFrame: latencyFrames, fileFrames: frames) {
                group = try session.addTake(track: trackIndex, region: pass, group: group).group
            }
        } else if let gate {
            // The gate already dropped the latency: the file starts at the record point.
            guard frames > 0 else { return }
            var region = Region(file: target.relativeFile, timelineStartFrame: gate.startFrame, lengthFrames: frames)
            RecordingWorkflow.scale(&region, speed: speed)
            if punch {
                session.punchIn(track: trackIndex, take: region, crossfadeFrames: session.punchCrossfadeFrames)
            } else {
                session.tracks[trackIndex].regions.append(region)
            }
        } else {
            let length = frames - latencyFrames
            guard length > 0 else { return }
            var region = Region(file: target.relativeFile, timelineStartFrame: 0, sourceOffsetFrame: latencyFrames, lengthFrames: length)
            RecordingWorkflow.scale(&region, speed: speed)
            session.tracks[trackIndex].regions.append(region)
        }
        try folder.save(session)
    }

    /// A take recorded while the transport ran at `speed` spans speed × its frames of
    /// timeline: it is placed over exactly that span, played at rate 1/speed (pitch kept), so
    /// a part practised at 70 % plays in time at 100 %, and it is marked with its speed.
    static func scale(_ region: inout Region, speed: Double) {
        guard speed != 1 else { return }
        let sourceFrames = region.lengthFrames
        region.lengthFrames = max(1, Int64((Double(sourceFrames) * speed).rounded()))
        region.rate = Double(sourceFrames) / Double(region.lengthFrames)
        region.recordedSpeed = speed
    }
}
