import Foundation
import TapedeckCore
import TapedeckEngine
import TapedeckIO
import TapedeckSession
import TapedeckTransport
import TapedeckTakes

/// What `record` records into: a session (its armed tracks, or the tracks named) or one file.
/// Finished takes are placed on their tracks and the session saved, by the session's owner.
struct RecordTarget {
    /// The session's folder (its owner's), or nil for a take outside any session.
    var folder: SessionFolder? { owner.folder }
    /// The session as this pass records it (with the track made for the take).
    var session: Session
    /// The session's one owner while the command holds its lock, as the screen hosts one: it
    /// adds the track made for the take, places finished takes and written automation, and
    /// saves. Its transport is nil: a pass takes no edits while it runs.
    let owner: OwnedSession
    /// The tracks that record, in order.
    var tracks: [Int]
    /// A take outside any session (`--out FILE`).
    var isFileTake: Bool
    /// The file of a take outside any session.
    var outPath: String = ""

    /// Whether the take goes onto a track made for it (no track was armed).
    private(set) var addsTrack = false

    init(command c: RecordCommand) throws {
        guard let path = c.sessionPath else {
            // A file take: an unsaved session of one track listening to the chosen inputs.
            session = Session(sampleRate: c.sampleRate ?? 48000)
            session.tracks = [Track(name: "take", inputChannels: c.channels, armed: true)]
            tracks = [0]
            isFileTake = true
            outPath = c.outPath ?? "take.wav"
            owner = OwnedSession(document: SessionDocument(session: session), folder: nil, link: nil)
            return
        }
        let folder = SessionFolder(path: path)
        // A take a crash left marked is recovered before this one is named (never twice).
        let opened = try OpenedSession.read(folder, recoveryMustSucceed: true)
        for line in opened.recovered + opened.notices { Terminal.err(line + "\n") }
        var session = opened.session
        owner = OwnedSession(document: SessionDocument(session: session), folder: folder, link: nil)
        if let r = c.sampleRate, r != session.sampleRate {
            throw UsageError("record: the session runs at \(session.sampleRate) Hz; --sample-rate \(r) does not match")
        }
        if let text = c.trackText {
            tracks = [try TrackSelector.material(of: text, in: session, command: "record", doing: RecordTarget.busRefusal)]
        } else if let text = c.tracksText {
            tracks = try RecordTarget.trackList(text, in: session)
        } else {
            // Buses are never armed (a session with one armed does not load): only tracks record.
            tracks = session.tracks.indices.filter { session.tracks[$0].armed && !session.tracks[$0].isBus }
            if tracks.isEmpty {
                // Saved once recording really starts (``saveNewTrack()``): a refused or failed
                // start leaves the session as it was.
                // Named like `track add` names one: never a bus's or another track's name.
                var n = session.tracks.count + 1
                while NameMatch.index(of: "Track \(n)", in: session.tracks.map(\.name)) != nil { n += 1 }
                session.tracks.append(Track(name: "Track \(n)", inputChannels: c.channels))
                tracks = [session.tracks.count - 1]
                addsTrack = true
            }
        }
        if c.channelsGiven && tracks.count > 1 {
            throw UsageError("record: --channels picks the inputs of one track; \(tracks.count) tracks record, each from its own inputs")
        }
        self.session = session
        isFileTake = false
    }

    /// Why a bus cannot be recorded onto, after `a bus`.
    static let busRefusal = "has no input to record (record onto a track; buses are heard, not recorded)"

    /// `1,3-5` or track names, comma-separated: the tracks, in the order given.
    static func trackList(_ text: String, in session: Session) throws -> [Int] {
        var out: [Int] = []
        for part in text.split(separator: ",", omittingEmptySubsequences: false).map(String.init) {
            let bounds = part.split(separator: "-", maxSplits: 1).map(String.init)
            if bounds.count == 2, let a = Int(bounds[0]), let b = Int(bounds[1]) {
                guard a <= b else { throw UsageError("record: --tracks '\(text)': \(part) runs backwards") }
                for n in a...b { out.append(try TrackSelector.material(of: String(n), in: session, command: "record", doing: busRefusal)) }
            } else {
                out.append(try TrackSelector.material(of: part, in: session, command: "record", doing: busRefusal))
            }
        }
        guard Set(out).count == out.count else { throw UsageError("record: --tracks '\(text)' names a track twice") }
        return out
    }

    /// Device inputs to open: enough for every recorded audio track (or the one override);
    /// none when only MIDI tracks record.
    func deviceChannelsNeeded(override: [Int]?) -> Int {
        if let override { return override.max() ?? 1 }
        let audio = tracks.filter { !session.tracks[$0].isMIDI }
        if audio.isEmpty { return 0 }
        return audio.flatMap { session.tracks[$0].inputChannels }.max() ?? 1
    }

    /// Saves the track made for the take, before its first frame, so that a take killed
    /// mid-way has a track to be recovered onto.
    mutating func saveNewTrack() throws {
        guard addsTrack, folder != nil else { return }
        let track = session.tracks[tracks[0]]
        owner.edit("add track \(track.name)") { $0.tracks.append(track) }
        try owner.save(label: nil)
        addsTrack = false
    }

    /// Puts finished takes on their tracks, after the automation written while the pass
    /// played, through the owner as the screen places its own (the lock was held from before
    /// the session was read, so the owner's session is the saved one), saves, then lets their
    /// crash markers go. Returns the names of the lanes `writes` wrote.
    @discardableResult
    func place(_ takes: [FinishedTake], automation writes: [AutomationWrite] = []) throws -> [String] {
        guard folder != nil, !takes.isEmpty || !writes.isEmpty else {
            // A file take is complete once closed: its crash marker can go.
            for take in takes { OwnedSession.letMarkerGo(take) }
            return []
        }
        let names = owner.writeAutomation(writes)
        let result = owner.place(takes) { _ in nil }
        if result.placed.isEmpty && owner.isDirty { try owner.save(label: nil) }
        if let error = result.saveError { throw error }
        if let take = result.orphans.first {
            throw RecordFailure(message: "track \(take.trackName.terminalSafe) was removed while recording; the take is kept in \(take.region.file.terminalSafe)")
        }
        return names
    }
}
