import TapedeckCore
import TapedeckDSP
import TapedeckEngine

/// The recording-workflow options of `record`: count-in, metronome, punch, loop takes,
/// monitoring, speed. Parsed here so RecordCommand stays about running the take.
struct RecordingOptions {
    /// Bars of metronome before the record point (0: none).
    var countInBars: Int
    /// The metronome, if asked for.
    var click: ClickSettings?
    /// `A-B` as typed.
    var punchText: String?
    /// The record point as typed (`--at`).
    var atText: String?
    /// Input monitoring as asked (`--monitor off|input|auto`); nil: the track's own setting
    /// when recording into a session, off otherwise.
    var monitorMode: MonitoringMode?
    /// Record every pass of the session's loop as a take.
    var loop: Bool
    /// Transport speed while recording with --play.
    var timePitch: TimePitchSettings
    /// `--timestamp clock`: takes stamped with the wall-clock time of their first frame.
    var stampsClock = false

    init(_ arguments: inout Arguments) throws {
        countInBars = try arguments.intOption("--count-in", in: 0...16) ?? 0
        let clickOn = arguments.flag("--click")
        let level = try arguments.doubleOption("--click-level", in: -60...0)
        let channelsText = try arguments.option("--click-channels")
        if clickOn || countInBars > 0 || level != nil || channelsText != nil {
            var c = ClickSettings()
            if let level { c.levelDecibels = level }
            if let channelsText { c.outputChannels = try parseChannelList(channelsText, command: "record") }
            // A count-in without --click clicks only until the record point.
            c.recordingOnly = false
            click = c
        }
        clickOnlyForCountIn = !clickOn && level == nil && channelsText == nil && countInBars > 0
        punchText = try arguments.option("--punch")
        atText = try arguments.option("--at")
        if let text = try arguments.option("--monitor") {
            guard let mode = MonitoringMode(rawValue: text) else {
                throw UsageError("record: --monitor '\(text)' must be off, input or auto")
            }
            monitorMode = mode
        }
        loop = arguments.flag("--loop")
        if let stamp = try arguments.option("--timestamp") {
            switch stamp.lowercased() {
            case "clock": stampsClock = true
            case "timeline": stampsClock = false
            default: throw UsageError("record: --timestamp '\(stamp.terminalSafe)' must be clock or timeline")
            }
        }
        timePitch = try TimePitchOptions.parse(&arguments)
    }

    /// The click was only implied by --count-in: it stops at the record point.
    var clickOnlyForCountIn = false

    /// Where a take starts and what it keeps, in frames: the record point (`--at`, the punch
    /// start, the loop start), the punch range, and where the transport starts (the record
    /// point minus the count-in).
    func timing(session: Session, tempo: TempoMap) throws -> (recordPoint: Int64, punch: FrameRange?, transportStart: Int64) {
        var point: Int64 = 0
        var punch: FrameRange?
        if let text = punchText {
            let range = try TimeText.range(from: text, tempoMap: tempo, defaultEnd: session.endFrame)
            point = range.startFrame
            punch = range
        } else if let text = atText {
            point = try TimeText.frames(from: text, tempoMap: tempo)
        }
        if loop {
            guard let range = session.loopRange, range.frameCount > 0 else {
                throw UsageError("record: --loop needs a loop range in the session (set it on the screen with [ and ])")
            }
            point = range.startFrame
        }
        let countIn = tempo.countInFrames(bars: countInBars, into: point)
        return (point, punch, point - countIn)
    }

    /// Checks the options against each other and `--play`.
    func validate(play: Bool) throws(UsageError) {
        if punchText != nil && !play { throw UsageError("record: --punch needs --play (punching in is over playback)") }
        if loop && !play { throw UsageError("record: --loop needs --play and a session loop range") }
        if !timePitch.isIdentity && !play { throw UsageError("record: --speed, --mode and --pitch need --play") }
        if loop && punchText != nil { throw UsageError("record: --loop and --punch cannot be combined") }
    }
}
