import TapedeckCore
import TapedeckIO

/// `tapedeck import`: copies audio files into a session and places them on tracks.
struct ImportCommand: Command {
    static let spec = CommandSpec(
        name: "import", summary: "copy audio files into a session, a new track per file (or onto --track N|NAME)",
        synopsis: ["import SESSION FILE... [--track N|NAME] [--at TIME]"],
        positionals: [PositionalSpec("SESSION", complete: .session), PositionalSpec("FILE...", complete: .audioFile)],
        options: [
            OptionSpec("--track", value: "N|NAME", "put every file onto this track (a 1-based number or its name, any case), one after another"),
            OptionSpec("--at", value: "TIME", "where the first file starts (default 0)"),
        ],
        details: """
        Reads any format libsndfile reads (WAV, RF64, W64, AIFF, FLAC, Ogg, MP3), copies it into
        SESSION/audio (resampled to the session rate with libsamplerate when the rates differ;
        lossless otherwise), writes its peak file, and places it at --at (default 0).
        Without --track each file gets a new track named after it; with --track every file goes
        onto that track, one after another, laid over whatever is there (the newest region
        plays on top).
        """,
        examples: ["tapedeck import song.tapedeck drums.wav bass.flac",
                   "tapedeck import song.tapedeck vocal.wav --track vocal --at 4.1.1"])

    let folder: SessionFolder
    let files: [String]
    let trackText: String?
    let atText: String?

    init(arguments: inout Arguments) throws {
        trackText = try arguments.option("--track")
        atText = try arguments.option("--at")
        folder = SessionFolder(path: try arguments.required("a session folder"))
        files = arguments.remainingPositionals()
        if files.isEmpty { throw UsageError("import: name at least one audio file") }
    }

    func run() throws -> Int32 {
        let lock = try SessionLock.acquire(folder)
        defer { withExtendedLifetime(lock) {} }
        var document = SessionDocument(session: try folder.load())
        var at: Int64 = 0
        if let atText { at = try TimeText.frames(from: atText, tempoMap: document.session.tempoMap, field: "import: --at") }
        let trackIndex = try trackText.map { text throws(UsageError) in try TrackSelector.index(of: text, in: document.session, command: "import") }
        let trackCount = document.session.tracks.count
        if trackIndex == nil && trackCount + files.count > SessionLimits.maximumTracks {
            throw UsageError("import: \(files.count) new tracks would make \(trackCount + files.count); a session holds at most \(SessionLimits.maximumTracks)")
        }
        // Check every file before copying any, so a typo in the last name costs nothing: it
        // opens, holds audio, and ends inside the timeline where it will be placed.
        var end = at
        for file in files {
            let reader = try AudioFileReader(path: file)
            if reader.frameCount == 0 { throw AudioFileError(path: file, reason: "holds no audio (0 frames); nothing imported") }
            let frames = Int64((Double(reader.frameCount) * Double(document.session.sampleRate) / Double(reader.sampleRate)).rounded(.up))
            let fileEnd = (trackIndex == nil ? at : end) + min(frames, SessionLimits.maximumTimelineFrames + 1)
            if fileEnd > SessionLimits.maximumTimelineFrames {
                throw UsageError("import: \(file.terminalSafe) would end past the end of the timeline (at most \(SessionLimits.timelineLimitText(sampleRate: document.session.sampleRate)))")
            }
            end = max(end, fileEnd)
        }
        var position = at
        for file in files {
            var bar = ProgressBar(label: "importing \(baseName(file).terminalSafe)")
            let imported = try AudioImporter.importFile(source: file, destinationFolder: folder.audioFolder,
                                                         peaksFolder: folder.peaksFolder,
                                                         sessionSampleRate: document.session.sampleRate) { bar.update($0) }
            bar.finish()
            let region = Region(file: "audio/" + imported.fileName, timelineStartFrame: position,
                                lengthFrames: imported.frameCount)
            document.edit("import \(baseName(file))") { (s: inout Session) in
                if let t = trackIndex {
                    s.tracks[t].regions.append(region)
                } else {
                    let channels = Array(1...max(1, min(imported.channelCount, 2)))
                    s.tracks.append(Track(name: trackName(file), inputChannels: channels, regions: [region]))
                }
            }
            // Saved file by file: what was copied is on its track even if a later file fails.
            try folder.save(document.session)
            if trackIndex != nil { position += imported.frameCount }
            let rate = document.session.sampleRate
            let cleaned = imported.nonFiniteSampleCount == 0 ? ""
                : "; \(imported.nonFiniteSampleCount) NaN/infinite sample\(imported.nonFiniteSampleCount == 1 ? "" : "s") replaced by silence"
            Terminal.out("imported \(file.terminalSafe) → \(region.file.terminalSafe): \(imported.channelCount) ch, \(TimeText.clock(frames: imported.frameCount, sampleRate: rate))\(imported.wasResampled ? ", resampled to \(rate) Hz" : "")\(cleaned)")
        }
        return ExitCode.ok
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
