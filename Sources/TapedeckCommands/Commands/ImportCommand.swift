import TapedeckCore
import TapedeckIO
import Foundation

/// `tapedeck import`: copies audio files into a session and places them on tracks.
struct ImportCommand: HandedCommand {
    static let spec = CommandSpec(
        name: "import", summary: "copy audio or MIDI files into a session, a new track per file (or onto --track N|NAME)",
        synopsis: ["import SESSION FILE... [--track N|NAME] [--at TIME|original]", "import SESSION FILE.mid --tempo-map"],
        positionals: [PositionalSpec("SESSION", complete: .session), PositionalSpec("FILE...", complete: .audioFile)],
        options: [
            OptionSpec("--track", value: "N|NAME", "put every file onto this track (a 1-based number or its name, any case), one after another"),
            OptionSpec("--at", value: "TIME|original", "where the first file starts (default 0); original: each file at its BWF time reference"),
            OptionSpec(flag: "--tempo-map", "a MIDI file's tempo and meter changes become the session's (the file at bar 1)"),
        ],
        details: """
        Reads any format libsndfile reads (WAV, RF64, W64, AIFF, FLAC, Ogg, MP3), copies it into
        SESSION/audio (resampled to the session rate with libsamplerate when the rates differ;
        lossless otherwise), writes its peak file, and places it at --at (default 0).
        Without --track each file gets a new track named after it; with --track every file goes
        onto that track, one after another, laid over whatever is there (the newest region
        plays on top).
        A file of more than two channels (5.1, 7.1, …) keeps every channel: a mono track per
        channel, all at --at, named from the file's channel layout (NAME L, NAME R, NAME C,
        NAME LFE, NAME Ls, NAME Rs; NAME 1 … NAME N when it states none) and panned where each
        channel sits; it cannot go onto one --track (refused, nothing imported).
        --at original places each file where its BWF `bext` time reference says (as Ardour and
        Reaper place a file "at its timestamp"; converted to the session rate when the file's
        differs), also on one --track; a file without one is refused, nothing imported. When
        the session has a time-of-day origin (`tapedeck session S --time-of-day 09:30:00`, or
        set by `record --timestamp clock`) the reference is a time of day and the file goes
        that far after the origin; one recorded before the origin is refused.
        A Standard MIDI File (.mid) becomes MIDI: each of its tracks that plays anything gets a
        MIDI track of its own (named by the file's track names) playing through the General
        MIDI instrument (gm), its events copied into SESSION/midi/ in real time through the
        file's own tempo map; with --track they go onto that track as MIDI regions. With
        --tempo-map the file's tempo map (its tempos and time signatures, each on a bar) becomes
        the session's first, so its notes land on the session's bars; MIDI regions already
        there keep their bars, audio regions their time.
        """,
        examples: ["tapedeck import song.tapedeck drums.wav bass.flac",
                   "tapedeck import song.tapedeck vocal.wav --track vocal --at 4.1.1",
                   "tapedeck import field.tapedeck recorder-a.wav recorder-b.wav --at original",
                   "tapedeck import song.tapedeck tune.mid"])


    let folder: SessionFolder
    let files: [String]
    let trackText: String?
    let atText: String?
    let takesTempoMap: Bool
    /// `--at original`: each file at its `bext` time reference.
    var atOriginal: Bool { atText?.lowercased() == "original" }

    init(arguments: inout Arguments) throws {
        trackText = try arguments.option("--track")
        atText = try arguments.option("--at")
        takesTempoMap = arguments.flag("--tempo-map")
        folder = SessionFolder(path: try arguments.required("a session folder"))
        files = arguments.remainingPositionals()
        if files.isEmpty { throw UsageError("import: name at least one audio file") }
        if takesTempoMap {
            guard files.count == 1, ImportCommand.isMIDI(files[0]) else { throw UsageError("import: --tempo-map takes the map of one MIDI file") }
            if atText != nil { throw UsageError("import: --tempo-map places the file at bar 1, where its map starts: leave out --at") }
        }
    }

    /// Makes `file`'s tempo map the session's (MIDI regions already there keep their bars).
    private func takeTempoMap(of file: String, document: inout SessionDocument, _ context: CommandContext) throws {
        let before = document.session.tempoMap
        let map: TempoMap
        switch try StandardMIDIFile.read(path: file).tempoMap(sampleRate: document.session.sampleRate) {
        case .success(let m): map = m
        case .failure(let e): throw UsageError("import: \(file.terminalSafe) \(e.reason); import it without --tempo-map to keep its notes at their times")
        }
        var updated = document.session
        updated.tempoBPM = map.tempoBPM
        updated.timeSignature = map.timeSignature
        updated.tempoChanges = map.tempoChanges
        updated.meterChanges = map.meterChanges
        _ = try MIDIRegionFile.keepingBars(in: &updated, from: before, folder: folder)
        document.edit("tempo map") { (s: inout Session) in s = updated }
        context.console.out("tempo map from \(file.terminalSafe):\n" + updated.tempoMapListing)
    }

    func run(_ context: CommandContext) throws -> Int32 {
        let lock = try SessionLock.acquire(folder)
        defer { withExtendedLifetime(lock) {} }
        var document = SessionDocument(session: try context.load(folder))
        var at: Int64 = 0
        // Said only once the import is saved: a refused one says only why.
        var farWarning: String?
        if let atText, !atOriginal {
            at = try TimeText.frames(from: atText, tempoMap: document.session.tempoMap, field: "import: --at")
            farWarning = document.session.farPastEndWarning(at, typed: atText)
        }
        let trackIndex = try trackText.map { text throws(UsageError) in
            try TrackSelector.material(of: text, in: document.session, command: "import",
                                       doing: "has no regions to import onto (import onto a track, or without --track for a new one)")
        }
        let trackCount = document.session.tracks.count
        if trackIndex == nil && trackCount + files.count > SessionLimits.maximumTracks {
            throw UsageError("import: \(files.count) new tracks would make \(trackCount + files.count); a session holds at most \(SessionLimits.maximumTracks)")
        }
        // Check every file before copying any, so a typo in the last name costs nothing: it
        // opens, holds audio, and ends inside the timeline where it will be placed.
        var end = at
        // A MIDI file makes a track per playing track: counted here, before anything is
        // written, so a refusal leaves midi/ as it was.
        var newTrackCount = 0
        // With --at original, where each file goes (its time reference at the session rate).
        var originals: [Int64] = []
        for file in files {
            // Before anything opens it: a FIFO would block the first open for ever.
            if let why = RegularFile.refusal(path: file) { throw AudioFileError(path: file.terminalSafe, reason: why) }
            let frames: Int64
            if ImportCommand.isMIDI(file) {
                if atOriginal { throw UsageError("import: \(file.terminalSafe) is MIDI, which has no time reference; --at original places BWF audio files") }
                let midi = try StandardMIDIFile.read(path: file)
                let playing = midi.tracks.filter(\.hasContent).count
                guard playing > 0 else {
                    throw AudioFileError(path: file, reason: "holds no notes, controllers or SysEx; nothing imported")
                }
                newTrackCount += playing
                frames = midi.mergedSequence(sampleRate: document.session.sampleRate).lengthFrames
            } else {
                let reader = try AudioFileReader(path: file)
                if reader.frameCount == 0 { throw AudioFileError(path: file, reason: "holds no audio (0 frames); nothing imported") }
                if reader.channelCount > 2 && trackIndex != nil {
                    // Onto one track the file would have to be folded to two channels: say so
                    // rather than choose for the user which channels they lose.
                    throw UsageError("import: \(file.terminalSafe) has \(reader.channelCount) channels (\(reader.channelLayout.summary)) and a track plays one or two; leave out --track to import it as \(reader.channelCount) mono tracks; nothing imported")
                }
                // The reader's count is a real length (under 2^40), but a 1 Hz header could
                // still scale it past Int64: compare in Double before converting.
                let scaled = (Double(reader.frameCount) * Double(document.session.sampleRate) / Double(reader.sampleRate)).rounded(.up)
                frames = scaled <= Double(SessionLimits.maximumTimelineFrames) ? Int64(scaled) : SessionLimits.maximumTimelineFrames + 1
                // A file wider than stereo makes a mono track per channel.
                newTrackCount += reader.channelCount > 2 ? reader.channelCount : 1
                if atOriginal { originals.append(try ImportCommand.originalFrame(of: reader, file: file, session: document.session)) }
            }
            let start = atOriginal ? originals[originals.count - 1] : trackIndex == nil ? at : end
            let fileEnd = start + min(frames, SessionLimits.maximumTimelineFrames + 1)
            if fileEnd > SessionLimits.maximumTimelineFrames {
                throw UsageError("import: \(file.terminalSafe) would end past the end of the timeline (at most \(SessionLimits.timelineLimitText(sampleRate: document.session.sampleRate)))")
            }
            end = max(end, fileEnd)
        }
        if trackIndex == nil && trackCount + newTrackCount > SessionLimits.maximumTracks {
            throw UsageError("import: \(newTrackCount) new tracks would make \(trackCount + newTrackCount); a session holds at most \(SessionLimits.maximumTracks); nothing imported")
        }
        var position = at
        if takesTempoMap { try takeTempoMap(of: files[0], document: &document, context) }
        for (n, file) in files.enumerated() {
            if atOriginal { position = originals[n] }
            if ImportCommand.isMIDI(file) {
                position = try importMIDI(file, at: position, onto: trackIndex, document: &document, context)
                continue
            }
            let imported: ImportedTracks
            if let copy = context.importCopies?.take(file) {
                // Copied already, on the screen's worker (ImportInBackground).
                imported = copy
            } else {
                var bar = ProgressBar(label: "importing \(baseName(file).terminalSafe)", console: context.console)
                imported = try AudioImporter.importTracks(source: file, destinationFolder: folder.audioFolder,
                                                          peaksFolder: folder.peaksFolder,
                                                          sessionSampleRate: document.session.sampleRate) { bar.update($0) }
                bar.finish()
            }
            let tracks = imported.tracks(named: trackName(file), at: position)
            // A refused save takes back the files this import wrote: nothing refers to them.
            var kept = false
            defer { if !kept { imported.removeFiles(from: folder) } }
            document.edit("import \(baseName(file))") { (s: inout Session) in
                if let t = trackIndex {
                    s.tracks[t].regions.append(contentsOf: tracks.flatMap(\.regions))
                } else {
                    // Never a second strip of one name: a bus or track called like the file keeps its name.
                    for var track in tracks {
                        let base = track.name
                        var n = 2
                        while NameMatch.index(of: track.name, in: s.tracks.map(\.name)) != nil { track.name = "\(base) \(n)"; n += 1 }
                        s.tracks.append(track)
                    }
                }
            }
            // Saved file by file: what was copied is on its track even if a later file fails.
            try context.save(document.session, to: folder)
            kept = true
            if trackIndex != nil { position += imported.frameCount }
            let rate = document.session.sampleRate
            let cleaned = imported.nonFiniteSampleCount == 0 ? ""
                : "; \(imported.nonFiniteSampleCount) NaN/infinite sample\(imported.nonFiniteSampleCount == 1 ? "" : "s") replaced by silence"
            let files = imported.files.map { "audio/" + $0.fileName }
            let target = files.count > 1 ? "\(files[0]) … \(files[files.count - 1])" : files.first ?? ""
            context.console.out("imported \(file.terminalSafe) → \(target.terminalSafe): \(imported.channelText), \(TimeText.clock(frames: imported.frameCount, sampleRate: rate))\(imported.wasResampled ? ", resampled to \(rate) Hz" : "")\(cleaned)")
        }
        if let farWarning { context.console.err("tapedeck: warning: \(farWarning)\n") }
        return ExitCode.ok
    }

    /// Where `--at original` puts the file `reader` reads: its `bext` time reference at the
    /// session's rate (rounded to the nearest frame); refused in one line without one or when
    /// it lies past the timeline's end.
    static func originalFrame(of reader: AudioFileReader, file: String, session: Session) throws(UsageError) -> Int64 {
        guard let reference = reader.bextTimeReference else {
            throw UsageError("import: \(file.terminalSafe) has no BWF time reference (no bext chunk, or a damaged one); give --at TIME instead of original; nothing imported")
        }
        var frame = (Double(reference) * Double(session.sampleRate) / Double(max(reader.sampleRate, 1))).rounded()
        if let origin = session.timeOfDayOrigin {
            // The time reference is a time of day: the timeline starts at the session's origin.
            guard frame >= Double(origin) else {
                let at = TimeOfDay.text(frames: Int64(frame), sampleRate: session.sampleRate)
                throw UsageError("import: \(file.terminalSafe) was recorded at \(at), before the session's time-of-day origin \(TimeOfDay.text(frames: origin, sampleRate: session.sampleRate)); give --at TIME instead of original; nothing imported")
            }
            frame -= Double(origin)
        }
        guard frame <= Double(SessionLimits.maximumTimelineFrames) else {
            throw UsageError("import: \(file.terminalSafe) has a time reference past the end of the timeline (at most \(SessionLimits.timelineLimitText(sampleRate: session.sampleRate))); nothing imported")
        }
        return Int64(frame)
    }

    /// A Standard MIDI File: by its name, or by its first bytes.
    static func isMIDI(_ path: String) -> Bool {
        let lower = path.lowercased()
        if lower.hasSuffix(".mid") || lower.hasSuffix(".midi") || lower.hasSuffix(".smf") { return true }
        guard let f = fopen(path, "rb") else { return false }
        defer { fclose(f) }
        var magic = [UInt8](repeating: 0, count: 4)
        return fread(&magic, 1, 4, f) == 4 && magic == Array("MThd".utf8)
    }

    /// Imports one MIDI file (its tracks onto new MIDI tracks, or onto `track`), saves, and
    /// returns where the next file goes.
    private func importMIDI(_ file: String, at position: Int64, onto track: Int?, document: inout SessionDocument, _ context: CommandContext) throws -> Int64 {
        let session = document.session
        let (tracks, fileTempo) = try MIDIImporter.importFile(source: file, folder: folder, tempoMap: session.tempoMap)
        // A refused edit or save takes back the files this import wrote: nothing refers to them.
        var placed = false
        defer { if !placed { for imported in tracks { unlink(folder.absolutePath(of: imported.file)) } } }
        try document.edit("import \(baseName(file))") { (s: inout Session) throws(UsageError) in
            if track == nil && s.tracks.count + tracks.count > SessionLimits.maximumTracks {
                throw UsageError("import: \(tracks.count) new tracks would pass the limit of \(SessionLimits.maximumTracks)")
            }
            for imported in tracks {
                let region = Region(file: imported.file, timelineStartFrame: position, lengthFrames: imported.lengthFrames, isMIDI: true)
                if let t = track {
                    // The file's tracks play together: all from the same place.
                    s.tracks[t].regions.append(region)
                } else {
                    var name = imported.name
                    var n = 2
                    while NameMatch.index(of: name, in: s.tracks.map(\.name)) != nil { name = "\(imported.name) \(n)"; n += 1 }
                    s.tracks.append(Track(name: name, playbackChain: "gm", regions: [region], isMIDI: true))
                }
            }
        }
        try context.save(document.session, to: folder)
        placed = true
        for imported in tracks {
            context.console.out("imported \(file.terminalSafe) → \(imported.file.terminalSafe): MIDI track \(imported.name.terminalSafe), \(imported.noteCount) note\(imported.noteCount == 1 ? "" : "s"), \(imported.eventCount) event\(imported.eventCount == 1 ? "" : "s"), \(imported.sysExCount > 0 ? "\(imported.sysExCount) SysEx, " : "")\(TimeText.clock(frames: imported.lengthFrames, sampleRate: session.sampleRate))")
        }
        if !takesTempoMap && abs(fileTempo - session.tempoBPM * 4 / Double(session.timeSignature.beatUnit)) > 0.01 {
            context.console.out("note: the file's tempo is \(formatTempo(fileTempo)) BPM, the session's \(formatTempo(session.tempoBPM)): its notes keep their times (a session at the file's tempo keeps its bars: tapedeck new --tempo \(formatTempo(fileTempo)))")
        }
        return track != nil ? position + (tracks.map(\.lengthFrames).max() ?? 0) : position
    }

    private func formatTempo(_ bpm: Double) -> String {
        bpm == bpm.rounded() ? String(Int(bpm)) : String(format: "%.2f", bpm)
    }

    private func baseName(_ path: String) -> String {
        path.split(separator: "/").last.map(String.init) ?? path
    }

    private func trackName(_ path: String) -> String {
        let base = baseName(path)
        guard let dot = base.lastIndex(of: "."), dot != base.startIndex else { return base }
        return String(base[..<dot])
    }
}
