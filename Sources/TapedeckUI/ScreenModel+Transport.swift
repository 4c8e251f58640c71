import TapedeckCore
import TapedeckTransport

// The transport keys: play, record, locate, speed; and the timeline's zoom.
extension ScreenModel {
    func togglePlay() {
        if snapshot.state == .stopped { link.play(fromFrame: playheadFrame) } else { link.stop() }
        readLink()
    }

    /// Starts a pass over the armed tracks, or stops the one running. `refusingBus`: the
    /// record key with a bus selected, where the user thinks of recording onto it, says why
    /// that cannot be (a remote's record, which never looks at the selection, records).
    func record(refusingBus: Bool = true) {
        if snapshot.state.isRecordingPass { link.stop(); readLink(); return }
        if refusingBus && isBus(selectedTrack) && !actsOnMaster, requireNonBus("input to record") == nil { return }
        guard session.tracks.contains(where: \.armed) else {
            say("no armed track: arm one with \(keyName(.arm)) first", error: true)
            return
        }
        if let refusal = link.record(fromFrame: playheadFrame) { say(refusal, error: true) }
        readLink()
    }

    func locate(_ frame: Int64) {
        link.locate(frame: frame)
        readLink()
        follow(snapshot.positionFrame)
    }

    func stepSpeed(up: Bool) {
        let steps = ScreenModel.speedSteps
        let i = steps.firstIndex { $0 >= speed - 1e-9 } ?? steps.count - 1
        speed = steps[min(steps.count - 1, max(0, i + (up ? 1 : -1)))]
        link.setSpeed(speed)
        say("speed \(TransportBarView.speedText(speed))")
    }

    func zoom(by factor: Double) {
        let next = Int64((Double(framesPerColumn) * factor).rounded())
        framesPerColumn = min(Int64(session.sampleRate) * 60, max(16, next))
        viewStartFrame = max(0, playheadFrame - framesPerColumn * Int64(timelineColumns) / 2)
    }
}
