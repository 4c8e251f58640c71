import TapedeckCore
#if canImport(Glibc)
import Glibc
#endif

extension SessionFolder {
    /// Where MIDI regions' Standard MIDI Files live (created with the first one).
    public var midiFolder: String { path + "/midi" }
    /// Where samples named by chains (`sampler:file=samples/kick.wav`) are kept.
    public var samplesFolder: String { path + "/samples" }
}

/// The Standard MIDI Files behind MIDI regions: reading a region's notes, writing new ones.
public enum MIDIRegionFile {
    /// The whole file at `path` as one sequence at `sampleRate` (every track merged, in real
    /// time through its tempo map).
    public static func read(path: String, sampleRate: Int) throws(AudioFileError) -> MIDISequence {
        try StandardMIDIFile.read(path: path).mergedSequence(sampleRate: sampleRate)
    }

    /// What `region` plays, from frame 0 of the region (its source offset and length applied,
    /// notes cut at its end switched off there).
    public static func sequence(of region: Region, folder: SessionFolder, sampleRate: Int) throws(AudioFileError) -> MIDISequence {
        try read(path: folder.absolutePath(of: region.file), sampleRate: sampleRate)
            .clipped(offset: region.sourceOffsetFrame, length: region.lengthFrames)
    }

    /// Writes `sequence` as a new file in the session's `midi/` folder, named after `base`
    /// (`base.mid`, else `base-2.mid`, …; never over a file), at the session's tempo. Returns
    /// the path relative to the session folder.
    public static func writeNew(_ sequence: MIDISequence, base: String, name: String?, folder: SessionFolder,
                                tempoMap: TempoMap) throws(AudioFileError) -> String {
        try makeFolder(folder.midiFolder)
        let file = StandardMIDIFile.file(of: sequence, tempoMap: tempoMap, name: name)
        let safe = safeBase(base)
        for n in 1...10_000 {
            let fileName = n == 1 ? "\(safe).mid" : "\(safe)-\(n).mid"
            let path = folder.midiFolder + "/" + fileName
            if FileSystem.isPresent(path) { continue }
            do { try file.writeNew(to: path) } catch {
                if FileSystem.isPresent(path) { continue }
                throw error
            }
            return "midi/" + fileName
        }
        throw AudioFileError(path: folder.midiFolder, reason: "no free name for \(safe).mid after 10000 tries")
    }

    /// A file name part made of `text` (letters, digits, `-`, `_`, `.`; others become `_`).
    public static func safeBase(_ text: String) -> String {
        let cleaned = String(text.map { $0.isLetter || $0.isNumber || "-_.".contains($0) ? $0 : "_" }.prefix(80))
        return cleaned.isEmpty || cleaned.hasPrefix(".") ? "midi" + cleaned : cleaned
    }

    /// Creates `path` (a folder) when it is missing.
    static func makeFolder(_ path: String) throws(AudioFileError) {
        if FileSystem.isFolder(path) { return }
        if mkdir(path, 0o755) != 0 && !FileSystem.isFolder(path) {
            throw AudioFileError(path: path, reason: "cannot create folder: \(FileSystem.errnoText())")
        }
    }

    /// The region with its notes quantised (see ``MIDISequence/quantized(gridFrames:strength:origin:)``):
    /// the notes are written to a new file (the old one stays for undo) and the region points
    /// at it, keeping its place and length.
    public static func quantized(_ region: Region, setting: QuantizeSetting, folder: SessionFolder,
                                 tempoMap: TempoMap) throws(AudioFileError) -> Region {
        let whole = try read(path: folder.absolutePath(of: region.file), sampleRate: tempoMap.sampleRate)
        let origin = region.timelineStartFrame - region.sourceOffsetFrame
        let moved = tempoMap.isConstant
            ? whole.quantized(gridFrames: setting.gridFrames(tempoMap), strength: setting.strength, origin: origin)
            : whole.quantized(strength: setting.strength, origin: origin) { setting.nearestLine(toFrame: $0, tempoMap: tempoMap) }
        var base = lastComponent(of: region.file)
        if let dot = base.lastIndex(of: ".") { base = String(base[..<dot]) }
        // Quantising again replaces an earlier "-q" (and the "-N" writeNew adds to keep names
        // unique), so the name does not grow with every pass.
        if let dash = base.lastIndex(of: "-"), base.index(after: dash) < base.endIndex,
           base[base.index(after: dash)...].allSatisfy(\.isNumber), base[..<dash].hasSuffix("-q") {
            base = String(base[..<dash])
        }
        if let q = base.range(of: "-q", options: .backwards), base[q.upperBound...].allSatisfy(\.isNumber) { base = String(base[..<q.lowerBound]) }
        var out = region
        out.file = try writeNew(moved, base: base + "-q", name: nil, folder: folder, tempoMap: tempoMap)
        return out
    }
}

/// A MIDI file brought into a session by ``MIDIImporter``: one per track of the file that
/// holds channel messages or SysEx.
public struct ImportedMIDI: Equatable, Sendable {
    /// The file's track name, or the file's name (with the track's number when it has several).
    public var name: String
    /// The new file, relative to the session folder (`midi/NAME.mid`).
    public var file: String
    /// How long it lasts on the timeline.
    public var lengthFrames: Int64
    /// Channel messages it holds.
    public var eventCount: Int
    /// Notes it plays.
    public var noteCount: Int
    /// SysEx messages it keeps (carried through the session and `export --midi`).
    public var sysExCount: Int = 0
}

/// Reads `.mid` files into a session: every track of the file with events becomes a file of
/// its own in `midi/` (format 0, at the session's tempo, each event on its frame), placed in
/// real time (the file's own tempo map decides when each event sounds).
public enum MIDIImporter {
    /// Imports `source`; returns one entry per track that holds events. Throws when the file
    /// cannot be read or holds no events.
    public static func importFile(source: String, folder: SessionFolder, tempoMap: TempoMap) throws(AudioFileError) -> (tracks: [ImportedMIDI], fileTempoBPM: Double) {
        let file = try StandardMIDIFile.read(path: source)
        var base = lastComponent(of: source)
        if let dot = base.lastIndex(of: "."), dot != base.startIndex { base = String(base[..<dot]) }
        // A track of SysEx alone counts (a setup track of device dumps, often the first): its
        // messages would otherwise be lost on the way through the session.
        let playing = file.tracks.indices.filter { file.tracks[$0].hasContent }
        guard !playing.isEmpty else { throw AudioFileError(path: source, reason: "holds no notes, controllers or SysEx; nothing imported") }
        var out: [ImportedMIDI] = []
        var written: [String] = []
        for (k, t) in playing.enumerated() {
            let sequence = file.sequence(track: t, sampleRate: tempoMap.sampleRate)
            let trackName = String((file.tracks[t].name ?? "").filter { !$0.isNewline }.drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
            let name = !trackName.isEmpty ? trackName : (playing.count == 1 ? base : "\(base) \(k + 1)")
            let relative: String
            do {
                relative = try MIDIRegionFile.writeNew(sequence, base: playing.count == 1 ? base : "\(base)-\(k + 1)", name: name,
                                                       folder: folder, tempoMap: tempoMap)
            } catch {
                for w in written { unlink(folder.absolutePath(of: w)) }
                throw error
            }
            written.append(relative)
            out.append(ImportedMIDI(name: String(name.prefix(SessionLimits.maximumNameLength)), file: relative,
                                    lengthFrames: max(sequence.lengthFrames, 1), eventCount: sequence.events.count,
                                    noteCount: sequence.notes.count, sysExCount: sequence.sysEx.count))
        }
        return (out, file.firstTempoBPM)
    }
}

/// Writes a session's MIDI as one Standard MIDI File (`export --midi`): format 1, 960 ticks a
/// quarter at the session's tempo and meter, one track per track with MIDI (its playing MIDI
/// regions merged, named after it).
public enum MIDIExporter {
    /// What an export wrote.
    public struct Summary: Equatable, Sendable {
        /// Tracks written.
        public var trackCount: Int
        /// Channel messages written.
        public var eventCount: Int
        /// SysEx messages written.
        public var sysExCount: Int = 0
    }

    /// The sequence track `t` of `session` plays, on the timeline from frame 0 (regions
    /// layered by summing: overlapping MIDI regions all play), cut to `range` when given and
    /// moved so the range starts at 0.
    public static func timelineSequence(track t: Int, session: Session, folder: SessionFolder,
                                        range: FrameRange? = nil) throws(AudioFileError) -> MIDISequence {
        var events: [MIDISequence.Event] = []
        var sysEx: [MIDISequence.SysEx] = []
        var end: Int64 = 0
        for region in session.tracks[t].activeMIDIRegions {
            let part = try MIDIRegionFile.sequence(of: region, folder: folder, sampleRate: session.sampleRate)
            events += part.events.map { var e = $0; e.frame += region.timelineStartFrame; return e }
            sysEx += part.sysEx.map { var s = $0; s.frame += region.timelineStartFrame; return s }
            end = max(end, region.timelineEndFrame)
        }
        let whole = MIDISequence(events: events, sysEx: sysEx, lengthFrames: end)
        guard let range else { return whole }
        return whole.clipped(offset: range.startFrame, length: range.frameCount)
    }

    /// Writes every track with MIDI regions to `path` (replacing it atomically, through
    /// ``WriteGuard``: never over what `sessions` — by default this session — or any other
    /// session owns). Throws when no track has MIDI.
    public static func export(session: Session, folder: SessionFolder, to path: String, range: FrameRange? = nil,
                              sessions: [ProtectedSession]? = nil) throws -> Summary {
        var tracks: [StandardMIDIFile.Track] = []
        var count = 0, sysExCount = 0
        let map = session.tempoMap
        for t in session.tracks.indices where !session.tracks[t].activeMIDIRegions.isEmpty {
            let sequence = try timelineSequence(track: t, session: session, folder: folder, range: range)
            let file = StandardMIDIFile.file(of: sequence, tempoMap: map, from: range?.startFrame ?? 0, name: session.tracks[t].name)
            tracks.append(file.tracks[0])
            count += sequence.events.count
            sysExCount += sequence.sysEx.count
        }
        guard !tracks.isEmpty else { throw AudioFileError(path: folder.path, reason: "has no MIDI regions to export") }
        var file = StandardMIDIFile.file(of: MIDISequence(), tempoMap: map, from: range?.startFrame ?? 0, name: nil)
        file.format = 1
        // Track 0 is the conductor track (tempo and meter), as other programs expect.
        file.tracks = [StandardMIDIFile.Track()] + tracks
        try WriteGuard.write(file.bytes(), to: path, as: "export: -o",
                             sessions: sessions ?? [ProtectedSession(folder: folder, session: session)])
        return Summary(trackCount: tracks.count, eventCount: count, sysExCount: sysExCount)
    }
}
