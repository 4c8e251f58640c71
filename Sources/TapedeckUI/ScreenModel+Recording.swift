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
        guard let t = requireTrack() else { return }
        let next = ScreenModel.nextMonitoring(session.tracks[t].monitoring)
        edit("monitoring \(session.tracks[t].name)") { $0.tracks[t].monitoring = next }
        let what = switch next {
        case .off: "off: only what is on disk is heard"
        case .input: "input: the input is heard while recording, with the track's playback"
        case .auto: "auto: the input is heard while recording, in place of the track's playback"
        }
        say("monitoring \(what) (\(session.tracks[t].name))")
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
        guard let t = requireTrack() else { return }
        let track = session.tracks[t]
        guard let group = ScreenModel.takeGroup(on: track, at: playheadFrame) else {
            say("no takes under the playhead on \(track.name) (loop recording makes them)", error: true)
            return
        }
        do {
            let number = try document.cycleTake(track: t, group: group)
            link.update(session: session)
            say("take \(number)/\(track.takeIndices(group: group).count) plays on \(track.name)")
        } catch {
            say(error.description, error: true)
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

    /// "take 2/3" for a region that is the active take of its group, for the timeline.
    static func takeLabel(_ region: Region, on track: Track) -> String? {
        guard let group = region.takeGroup, let number = region.takeNumber,
              track.activeTakeNumber(group: group) == number else { return nil }
        return "take \(number)/\(track.takeIndices(group: group).count)"
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

    /// Puts each take the link finished on its track as one undoable edit and saves, so a
    /// take is never only in memory; the crash marker goes once the save holds the region.
    func placeFinishedTakes() {
        for take in link.collectFinishedTakes() {
            let tracks = session.tracks
            let index = tracks.indices.contains(take.trackIndex) && tracks[take.trackIndex].name == take.trackName
                ? take.trackIndex : tracks.firstIndex { $0.name == take.trackName }
            guard let t = index else {
                if let marker = take.markerPath { try? FileManager.default.removeItem(atPath: marker) }
                say("track \(take.trackName) was deleted while recording; the take is kept in \(take.region.file)", error: true)
                continue
            }
            var passes = 1
            edit("\(take.verb == "recorded" ? "record" : take.verb) on \(tracks[t].name)") { s in
                switch take.placement {
                case .plain:
                    s.tracks[t].regions.append(take.region)
                case .punch(let crossfade):
                    s.punchIn(track: t, take: take.region, crossfadeFrames: crossfade)
                case .loopPasses(let more):
                    // One new group; each pass is a take, the last one plays.
                    var group: Int?
                    for region in [take.region] + more {
                        guard let slot = try? s.addTake(track: t, region: region, group: group) else { continue }
                        group = slot.group
                    }
                    passes = 1 + more.count
                }
            }
            if save(), let marker = take.markerPath { try? FileManager.default.removeItem(atPath: marker) }
            if message?.isError != true {
                let length = TransportBarView.clockText(take.region.lengthFrames, sampleRate: session.sampleRate)
                if passes > 1 {
                    say("recorded \(passes) takes on \(tracks[t].name) (\(keyName(.take)) picks the one that plays)")
                } else {
                    say("\(take.verb) \(length) on \(tracks[t].name) (\(keyName(.undo)) removes it)")
                }
            }
        }
    }
}
