import TapedeckTransport
import Foundation
import TapedeckCore

// MARK: - Recording workflow: click, count-in, take lanes, monitoring, retro capture, takes

extension ScreenModel {
    /// The click key: off → while recording → always.
    func cycleClick() {
        clickMode = clickMode.next
        link.setClick(clickMode)
        let what = switch clickMode {
        case .off: "off (a count-in still clicks)"
        case .recording: "while recording"
        case .always: "always"
        }
        say("click \(what)")
    }

    /// The count-in key: 0 → 1 → 2 bars.
    func cycleCountIn() {
        countInBars = (countInBars + 1) % 3
        link.setCountIn(bars: countInBars)
        say(countInBars == 0 ? "count-in off: recording starts at the playhead"
            : "count-in \(countInBars) bar\(countInBars == 1 ? "" : "s") before the record point")
    }

    /// The monitoring key: off → input → auto for the selected track, as an undoable edit.
    func cycleMonitoring() {
        guard let t = requireNonBus("input to monitor") else { return }
        keyCommand(.monitor(strip: t, mode: ScreenModel.nextMonitoring(session.tracks[t].monitoring)))
    }

    /// What an armed track in `mode` plays, stopped and rolling: the words the message line uses
    /// (the help and the README say the same). (What the engine does: RenderCore's monitoredInput.)
    public static func monitoringWords(_ mode: MonitoringMode) -> String {
        switch mode {
        case .off: "off: the disk only, the input never heard"
        case .input: "input: the input always (stopped and rolling), never the disk"
        case .auto: "auto: the input while stopped or recording, the disk while playing"
        }
    }

    static func nextMonitoring(_ mode: MonitoringMode) -> MonitoringMode {
        switch mode {
        case .off: .input
        case .input: .auto
        case .auto: .off
        }
    }

    /// The take key: makes the next take of the group under the playhead on the selected
    /// track the one that plays, as an undoable edit.
    func cycleActiveTake() {
        guard let t = requireNonBus("regions or takes") else { return }
        let track = session.tracks[t]
        guard let group = ScreenModel.takeGroup(on: track, at: playheadFrame) else {
            say("no takes under the playhead on \(track.name) (loop recording makes them)", error: true)
            return
        }
        do {
            let number = try owner.change { try $0.cycleTake(track: t, group: group) }
            say("take \(number)/\(track.takeIndices(group: group).count) plays on \(track.name)")
        } catch {
            say("\(error)", error: true)
        }
    }

    /// The take group whose span holds `frame` on `track`; else the nearest group's, so the
    /// key works with the playhead just past a loop's end too.
    static func takeGroup(on track: Track, at frame: Int64) -> Int? {
        let takes = track.regions.filter { $0.takeGroup != nil }
        if let hit = takes.first(where: { $0.timelineStartFrame <= frame && frame < $0.timelineEndFrame }) { return hit.takeGroup }
        return takes.min { distance($0, frame) < distance($1, frame) }?.takeGroup
    }

    private static func distance(_ r: Region, _ frame: Int64) -> Int64 {
        frame < r.timelineStartFrame ? r.timelineStartFrame - frame : max(0, frame - r.timelineEndFrame + 1)
    }

    /// The retro key: keeps the last seconds the link heard while listening.
    func keepRetro() {
        guard snapshot.state == .stopped else {
            say("retroactive capture listens while stopped: stop first", error: true)
            return
        }
        guard session.tracks.contains(where: \.armed) else {
            say("no armed track: arm one with \(keyName(.arm)); the screen listens while it is armed", error: true)
            return
        }
        if let refusal = link.keepRetro() { say(refusal, error: true); return }
        readLink()
    }

    /// Puts the takes the link finished on their tracks as one undoable edit (a pass of eight
    /// armed tracks is undone at once) and saves, so a take is never only in memory; the
    /// crash markers go once the save holds the regions.
    func placeFinishedTakes() {
        let takes = link.collectFinishedTakes()
        guard !takes.isEmpty else { return }
        // Placed and saved by the owner, as headless record places its takes.
        let result = owner.place(takes) { "screen: \($0)" }
        for take in result.orphans {
            // Nothing to recover it onto: the file stays, its crash marker goes.
            if let marker = take.markerPath { try? FileManager.default.removeItem(atPath: marker) }
            say("track \(take.trackName) was deleted while recording; the take is kept in \(take.region.file)", error: true)
        }
        guard let first = result.placed.first?.take else { return }
        let placed = result.placed, tracks = result.tracks
        if folder == nil {
            // Untitled: the save asks where (the takes' crash markers stay until it is saved).
            save()
        } else if let error = result.saveError {
            say("cannot save: \(error.description)", error: true)
        }
        let names = tracks.map { session.tracks[$0].name }
        let onTracks = names.count > 3 ? "\(names.count) tracks" : names.joined(separator: ", ")
        guard message?.isError != true else { return }
        let passes = placed.map(\.take.passCount).max() ?? 1
        if passes > 1, let looped = placed.first(where: { $0.take.passCount == passes }) {
            // The pass heard: the last whole one (a pass cut short by the stop is kept after it).
            let track = session.tracks[looped.track]
            let playing = track.takeGroups.last.flatMap { track.activeTakeNumber(group: $0) } ?? passes
            let which = playing < passes ? "take \(playing), the last whole pass, plays" : "the last pass plays"
            say("recorded \(passes) takes on \(onTracks): \(which) (\(keyName(.take)) picks another)")
        } else {
            let frames = placed.filter { $0.track == placed[0].track }.reduce(Int64(0)) { $0 + $1.take.region.lengthFrames }
            let length = TransportBarView.clockText(frames, sampleRate: session.sampleRate)
            let pieces = placed.count > tracks.count ? " in \(placed.count / max(tracks.count, 1)) files" : ""
            say("\(first.verb) \(length) on \(onTracks)\(pieces) (\(keyName(.undo)) removes \(tracks.count > 1 ? "them" : "it"))")
        }
    }
}
