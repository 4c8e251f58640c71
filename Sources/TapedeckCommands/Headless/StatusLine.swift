import Foundation
import TapedeckCore
import TapedeckEngine
import TapedeckTransport

/// Draws the "recording" banner (stderr) or the JSON status lines (stdout).
struct StatusLine {
    let label: String
    let file: String
    let sampleRate: Int
    let json: Bool
    private let tty = Terminal.stderrIsTTY
    private var lastDrawNanoseconds: Int64 = 0
    private var xrunFrames: [Int64] = []

    init(label: String, file: String, sampleRate: Int, json: Bool) {
        self.label = label
        self.file = file
        self.sampleRate = sampleRate
        self.json = json
    }

    /// Every xrun frame reported so far.
    var xruns: [Int64] { xrunFrames }

    /// Shows `snapshot` if it is time (10 × a second on a terminal, once a second otherwise):
    /// `levels` are the meters to show (the recorded inputs, or the master), `elapsedFrames`
    /// the take's length or the playhead. New engine events become JSON lines at once.
    mutating func update(_ snapshot: TransportSnapshot, levels: [ChannelLevel], events: [EngineEvent], elapsedFrames: Int64,
                         force: Bool = false) {
        let now = DispatchTime.now().uptimeNanoseconds
        for e in events {
            switch e.kind {
            case .deviceXrun:
                xrunFrames.append(e.frame)
                // Standing: the playhead waited there; no take holds the loss.
                if json { emit(["event": "xrun", "frame": e.frame, "lost_frames": e.frames, "transport_stopped": e.whileStopped, "file": file]) }
            case .playbackUnderrun:
                if json { emit(["event": "underrun", "track": e.track + 1, "frame": e.frame, "frames": e.frames]) }
            case .captureDropped:
                if json { emit(["event": "dropped", "track": e.track + 1, "take_frame": e.frame, "frames": e.frames]) }
            case .takeLatencyChanged:
                if json {
                    emit(["event": "latency_changed", "track": e.track + 1, "take_frame": e.frame, "latency_frames": e.frames,
                          "previous_latency_frames": e.previousFrames])
                }
            case .hostStarted, .hostStopped, .hostLocated:
                let what = e.kind == .hostStarted ? "started" : e.kind == .hostStopped ? "stopped" : "located"
                if json { emit(["event": "jack_transport", "what": what, "frame": e.frame, "by": e.external ? "another program" : "tapedeck"]) }
            }
        }
        let interval: UInt64 = (tty && !json) ? 100_000_000 : 1_000_000_000
        guard force || lastDrawNanoseconds == 0 || now - UInt64(lastDrawNanoseconds) >= interval else { return }
        lastDrawNanoseconds = Int64(now)
        let clock = TimeText.clock(frames: elapsedFrames, sampleRate: sampleRate)
        if json {
            emit(["event": "status", "state": snapshot.state.rawValue, "elapsed_seconds": Double(elapsedFrames) / Double(max(sampleRate, 1)),
                  "frames": elapsedFrames, "position_frame": snapshot.positionFrame,
                  "peak_dbfs": levels.map { dB($0.peakDecibels) }, "rms_dbfs": levels.map { dB($0.rmsDecibels) },
                  "clipped": levels.map(\.clipped), "xruns": snapshot.xrunCount, "xrun_frames": xrunFrames,
                  "underrun_frames": snapshot.underrunFrames, "dropped_frames": snapshot.droppedFrames,
                  "disk_seconds_left": snapshot.diskSecondsLeft.map { ($0 * 10).rounded() / 10 } ?? NSNull(),
                  "disk_free_bytes": snapshot.diskFreeBytes ?? -1,
                  "dsp_load": (snapshot.dspLoad * 1000).rounded() / 1000, "file": file])
            return
        }
        let meters = levels.enumerated().map { "\($0.offset + 1) \(bar($0.element.peakDecibels)) \(Decibels.text(dB($0.element.peakDecibels)))\($0.element.clipped ? " CLIP" : "")" }
        var parts = ["\(StatusLine.word(snapshot.state)) \(clock)"] + meters + ["xruns \(snapshot.xrunCount)"]
        if snapshot.droppedFrames > 0 { parts.append("lost \(snapshot.droppedFrames)") }
        if let left = snapshot.diskSecondsLeft, snapshot.state.isRecordingPass {
            parts.append("disk \(TimeText.clock(frames: Int64(min(left, 1e9)) * Int64(sampleRate), sampleRate: sampleRate)) left")
        }
        parts.append(file)
        let line = parts.joined(separator: "  ")
        Terminal.err(tty ? "\r\u{1B}[2K" + line : line + "\n")
    }

    /// The banner's word for the transport's state.
    static func word(_ state: TransportState) -> String {
        switch state {
        case .stopped: "■ STOP"
        case .playing: "▶ PLAY"
        case .countIn: "COUNT-IN"
        case .preRoll: "PRE-ROLL"
        case .recording: "● REC"
        }
    }

    /// Ends the in-place banner so the summary starts on a fresh line.
    func finish() {
        if tty && !json { Terminal.err("\n") }
    }

    /// One JSON object on one line of stdout.
    func emit(_ object: [String: Any]) { StatusLine.emitLine(object) }

    /// One JSON object on one line of stdout.
    static func emitLine(_ object: [String: Any]) {
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]),
              let text = String(data: data, encoding: .utf8) else { return }
        Terminal.out(SafeText.jsonSafe(text))
    }

    /// dBFS rounded to 0.1, clamped to −120…+60 so garbage input (NaN, huge floats from a
    /// float device) still prints and still encodes as JSON.
    private func dB(_ decibels: Double) -> Double {
        guard !decibels.isNaN else { return -120 }
        return min(60, max(-120, (decibels * 10).rounded() / 10))
    }

    private func bar(_ decibels: Double) -> String {
        let db = min(0, max(-60, dB(decibels)))
        let filled = min(10, max(0, Int(((db + 60) / 60 * 10).rounded())))
        return String(repeating: "█", count: filled) + String(repeating: "·", count: 10 - filled)
    }
}
