import Foundation
import TapedeckCore
import TapedeckIO
import TapedeckTransport

/// What ``OwnedSession/place(_:saveLabel:)`` did with finished takes.
public struct PlacedTakes {
    /// The takes placed, each with the track it went on.
    public var placed: [(take: FinishedTake, track: Int)] = []
    /// Takes whose track was removed while they recorded: whole in their files, not placed,
    /// their crash markers left for their host to decide on.
    public var orphans: [FinishedTake] = []
    /// The tracks the takes went on, each once, in the order first placed.
    public var tracks: [Int] = []
    /// The undo step they made (`record on Vox, Gtr`); nil when none was placed.
    public var stepName: String?
    /// Why the session holding them was not saved: the takes are in the document, their
    /// crash markers kept, so the next open recovers them if this one is never saved.
    public var saveError: SessionError?
}

extension OwnedSession {
    /// Puts finished takes on their tracks (found by name when tracks moved meanwhile) as one
    /// undo step, heard at once, then saves (the history step named `saveLabel(step)`) and,
    /// once saved, lets their crash markers go. An untitled session (no folder) is not saved
    /// and the markers stay: its host saves it (asking where) or the takes are recovered.
    /// The screen, headless `record` and `record --retro` all place takes here.
    @discardableResult
    public func place(_ takes: [FinishedTake], saveLabel: (String) -> String?) -> PlacedTakes {
        var result = PlacedTakes()
        for take in takes {
            guard let t = session.trackIndex(for: take) else {
                result.orphans.append(take)
                continue
            }
            result.placed.append((take, t))
            if !result.tracks.contains(t) { result.tracks.append(t) }
        }
        guard let first = result.placed.first?.take else { return result }
        // A split take is one finished take per piece, all on one track: named once.
        let names = result.tracks.map { session.tracks[$0].name }
        let onTracks = names.count > 3 ? "\(names.count) tracks" : names.joined(separator: ", ")
        let step = "\(first.verb == "recorded" ? "record" : first.verb) on \(onTracks)"
        result.stepName = step
        let placed = result.placed
        edit(step) { s in for (take, t) in placed { s.place(take, onTrack: t) } }
        guard folder != nil else { return result }
        do {
            try save(label: saveLabel(step))
            for (take, _) in placed { OwnedSession.letMarkerGo(take) }
        } catch {
            result.saveError = error
        }
        return result
    }

    /// Writes what a hand wrote over automation lanes while the transport rolled (a learnt
    /// controller in touch, latch or write) as one undo step per pass, heard at once. The
    /// lanes written, "TRACK PARAM", sorted (a track or lane gone since is passed over).
    @discardableResult
    public func writeAutomation(_ writes: [AutomationWrite]) -> [String] {
        guard !writes.isEmpty else { return [] }
        var written = session
        let names = written.apply(writes)
        guard !names.isEmpty else { return [] }
        edit("write automation \(names.joined(separator: ", "))") { $0.apply(writes) }
        return names
    }

    /// Removes a placed (or abandoned) take's crash marker.
    public static func letMarkerGo(_ take: FinishedTake) {
        if let marker = take.markerPath { unlink(marker) }
    }
}
