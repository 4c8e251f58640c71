import TapedeckCore
import TapedeckTransport

// What is happening now, drawn as it happens: the takes being recorded (their waveforms grow
// on their tracks' rows) and the automation lanes being written by hand.
extension ScreenModel {
    /// Reads the takes recording and the lanes being written from the link (with every
    /// snapshot, after a pass's finished writes became an edit).
    func followLive() {
        liveTakes = snapshot.state.isRecordingPass ? link.liveTakes() : []
        if liveTakes.isEmpty { liveColumns.clear() }
        automationInProgress = snapshot.state == .stopped ? [] : link.automationBeingWritten()
    }

    /// The takes being recorded on track `t` (matched by index and name, as a finished take is).
    func liveTakes(onTrack t: Int) -> ArraySlice<LiveTake> {
        guard !liveTakes.isEmpty, session.tracks.indices.contains(t) else { return [] }
        let name = session.tracks[t].name
        guard let k = liveTakes.firstIndex(where: { $0.track == t && $0.trackName == name }) else { return [] }
        // A track records one take a pass.
        return liveTakes[k...k]
    }

    /// Lane `k` of track `t` as it is being written: the session's lane with what the pass has
    /// written so far over it; nil when no pass writes it.
    func shownLane(_ t: Int, _ k: Int) -> AutomationLane? {
        guard !automationInProgress.isEmpty, session.tracks.indices.contains(t), session.tracks[t].automation.indices.contains(k)
        else { return nil }
        let track = session.tracks[t]
        var lane = track.automation[k]
        let writes = automationInProgress.filter {
            $0.track == track.name && $0.parameter.description.lowercased() == lane.parameter.description.lowercased()
        }
        guard !writes.isEmpty else { return nil }
        for w in writes { lane.apply(w) }
        return lane
    }

    /// The stretch of lane `k` of track `t` being written now (nil: none).
    func writtenRange(_ t: Int, _ k: Int) -> FrameRange? {
        guard !automationInProgress.isEmpty, session.tracks.indices.contains(t), session.tracks[t].automation.indices.contains(k)
        else { return nil }
        let track = session.tracks[t], parameter = track.automation[k].parameter.description.lowercased()
        return automationInProgress.first { $0.track == track.name && $0.parameter.description.lowercased() == parameter }?.range
    }
}
