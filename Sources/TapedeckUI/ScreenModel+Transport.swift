import TapedeckCore
import TapedeckTransport

// The screen's transport verbs (play, stop, record, locate), which every front-end reaches
// through ControlAnswer (the keys: ScreenModel+Keys); and the timeline's zoom.
extension ScreenModel {
    /// Plays from the playhead when stopped, else stops. UI thread.
    func togglePlay() {
        if snapshot.state == .stopped { link.play(fromFrame: playheadFrame) } else { link.stop() }
        readLink()
    }

    /// Starts a pass over the armed tracks, or stops the one running (never looking at the
    /// selection: the record key refuses a bus selected before it asks). UI thread.
    func record() {
        if snapshot.state.isRecordingPass { link.stop(); readLink(); return }
        guard session.tracks.contains(where: \.armed) else {
            say("no armed track: arm one with \(keyName(.arm)) first", error: true)
            return
        }
        if let refusal = link.record(fromFrame: playheadFrame) { say(refusal, error: true) }
        readLink()
    }

    /// Moves the playhead and scrolls the timeline to it. UI thread.
    func locate(_ frame: Int64) {
        link.locate(frame: frame)
        readLink()
        follow(snapshot.positionFrame)
    }

    func zoom(by factor: Double) {
        let next = Int64((Double(framesPerColumn) * factor).rounded())
        framesPerColumn = min(Int64(session.sampleRate) * 60, max(16, next))
        viewStartFrame = max(0, playheadFrame - framesPerColumn * Int64(timelineColumns) / 2)
    }
}
