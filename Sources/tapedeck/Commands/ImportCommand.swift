import TapedeckCore
import TapedeckIO

/// `tapedeck import`: copies audio files into a session and places them on tracks.
struct ImportCommand: Command {
    static let name = "import"
    static let summary = "copy audio files into a session, a new track per file (or onto --track N|NAME)"
    static let usage = """
    usage: tapedeck import SESSION FILE... [--track N|NAME] [--at TIME]

    Reads any format libsndfile reads (WAV, RF64, W64, AIFF, FLAC, Ogg, MP3), copies it into
    SESSION/audio (resampled to the session rate with libsamplerate when the rates differ;
    lossless otherwise), writes its peak file, and places it at --at (default 0).
    Without --track each file gets a new track named after it; with --track (a 1-based
    number or a track's name, any case) every file goes onto that track, one after another,
    laid over whatever is there (the newest region plays on top).

    example: tapedeck import song.tapedeck drums.wav bass.flac
    example: tapedeck import song.tapedeck vocal.wav --track vocal --at 4.1.1
    """

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
        var document = SessionDocument(session: try folder.load())
        var at: Int64 = 0
        if let atText { at = try TimeText.frames(from: atText, tempoMap: document.session.tempoMap) }
        let trackIndex = try trackText.map { text throws(UsageError) in try TrackSelector.index(of: text, in: document.session, command: "import") }
        // Check every file opens before copying any, so a typo in the last name costs nothing.
        for file in files { _ = try AudioFileReader(path: file) }
        var position = at
        for file in files {
            var bar = ProgressBar(label: "importing \(baseName(file))")
            let imported = try AudioImporter.importFile(source: file, destinationFolder: folder.audioFolder,
                                                         peaksFolder: folder.peaksFolder,
                                                         sessionSampleRate: document.session.sampleRate) { bar.update($0) }
            bar.finish()
            let region = Region(file: "audio/" + imported.fileName, timelineStartFrame: position,
                                lengthFrames: imported.frameCount)
            try document.edit("import \(baseName(file))") { (s: inout Session) in
                if let t = trackIndex {
                    s.tracks[t].regions.append(region)
                } else {
                    let channels = Array(1...max(1, min(imported.channelCount, 2)))
                    s.tracks.append(Track(name: trackName(file), inputChannels: channels, regions: [region]))
                }
            }
            if trackIndex != nil { position += imported.frameCount }
            let rate = document.session.sampleRate
            Terminal.out("imported \(file) → \(region.file): \(imported.channelCount) ch, \(TimeText.clock(frames: imported.frameCount, sampleRate: rate))\(imported.wasResampled ? ", resampled to \(rate) Hz" : "")")
        }
        try folder.save(document.session)
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
