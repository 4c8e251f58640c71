import TapedeckCore
import TapedeckIO
#if canImport(Glibc)
import Glibc
#endif

/// `tapedeck demo`: builds the demo session from the clips in `Samples/`.
struct DemoCommand: Command {
    static let name = "demo"
    static let summary = "build the demo session from Samples/ (or re-synthesise the clips)"
    static let usage = """
    usage: tapedeck demo DIR [--samples FOLDER]
           tapedeck demo --synthesize FOLDER

    The first form creates a session at DIR with the drums, bass and keys clips from FOLDER
    (default: the Samples folder beside DIR) on three tracks, a loop over bars 1-5 and two
    markers. `make run` does this once and opens it.
    The second form re-creates the clips themselves (they are synthesised, nothing is
    downloaded): drums.flac, bass.flac, keys.flac and click.flac, 4 bars at 120 BPM.

    example: tapedeck demo Samples/demo.tapedeck
    """

    let target: String?
    let samples: String?
    let synthesize: String?

    init(arguments: inout Arguments) throws {
        synthesize = try arguments.option("--synthesize")
        samples = try arguments.option("--samples")
        target = arguments.positional()
        if synthesize == nil && target == nil { throw UsageError("demo: missing DIR (or --synthesize FOLDER)") }
    }

    func run() throws -> Int32 {
        if let folder = synthesize {
            let names = try SampleSynth.writeAll(to: folder)
            Terminal.out("wrote \(names.map { folder + "/" + $0 }.joined(separator: ", "))")
            return ExitCode.ok
        }
        guard let target else { return ExitCode.usage }
        let folder = SessionFolder(path: target)
        let source = samples ?? parentFolder(folder.path)
        var session = Session(sampleRate: SampleSynth.sampleRate, tempoBPM: SampleSynth.tempoBPM)
        try folder.create(session)
        let lock = try SessionLock.acquire(folder)
        defer { withExtendedLifetime(lock) {} }
        let parts: [(file: String, name: String, gain: Double, pan: Double)] = [
            ("drums.flac", "Drums", -5, 0),
            ("bass.flac", "Bass", -6, -0.1),
            ("keys.flac", "Keys", -7, 0.1),
        ]
        for part in parts {
            let imported = try AudioImporter.importFile(source: source + "/" + part.file, destinationFolder: folder.audioFolder,
                                                         peaksFolder: folder.peaksFolder, sessionSampleRate: session.sampleRate) { _ in }
            let region = Region(file: "audio/" + imported.fileName, timelineStartFrame: 0, lengthFrames: imported.frameCount,
                                fadeOutFrames: 480)
            session.tracks.append(Track(name: part.name, inputChannels: Array(1...imported.channelCount),
                                        gainDecibels: part.gain, pan: part.pan, regions: [region]))
        }
        let map = session.tempoMap
        session.loopRange = FrameRange(startFrame: 0, endFrame: map.frame(bar: 5, beat: 1))
        session.markers = [Marker(name: "intro", frame: 0), Marker(name: "turnaround", frame: map.frame(bar: 3, beat: 1))]
        session.tracks.append(Track(name: "Vocal", inputChannels: [1], armed: true))
        try folder.save(session)
        Terminal.out("created demo session \(folder.path) from \(source)")
        return ExitCode.ok
    }

    private func parentFolder(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return String(path[..<slash])
    }
}
