import Foundation
import TapedeckCore
import TapedeckIO
#if canImport(Glibc)
import Glibc
#endif

/// `tapedeck demo`: builds the demo session from the shipped (or freshly synthesised) clips.
struct DemoCommand: Command {
    static let spec = CommandSpec(
        name: "demo", summary: "build the demo session (or re-synthesise its clips)",
        synopsis: ["demo DIR [--samples FOLDER]", "demo --synthesize FOLDER"],
        positionals: [PositionalSpec("DIR", complete: .directory)],
        options: [
            OptionSpec("--samples", value: "FOLDER", "take the clips from FOLDER", complete: .directory),
            OptionSpec("--synthesize", value: "FOLDER", "write the clips themselves into FOLDER", complete: .directory),
        ],
        details: """
        The first form creates a session at DIR with the drums, bass and keys clips on three
        tracks, a loop over bars 1-5 and two markers. The clips come from --samples, else from
        where Tapedeck is installed (share/tapedeck/samples beside its bin/), else from the
        source tree's Samples/; when none has them they are synthesised on the spot. A failure
        leaves nothing at DIR. `make run` does this once and opens it.
        The second form re-creates the clips themselves (they are synthesised, nothing is
        downloaded): drums.flac, bass.flac, keys.flac and click.flac, 4 bars at 120 BPM.
        """,
        examples: ["tapedeck demo ~/demo.tapedeck", "tapedeck demo --synthesize Samples"])

    let target: String?
    let samples: String?
    let synthesize: String?

    init(arguments: inout Arguments) throws {
        synthesize = try arguments.option("--synthesize")
        samples = try arguments.option("--samples")
        target = arguments.positional()
        if synthesize == nil && target == nil { throw UsageError("demo: missing DIR (or --synthesize FOLDER)") }
    }

    func run(_ context: CommandContext) throws -> Int32 {
        if let folder = synthesize {
            try WriteGuard.check(folder, as: "demo: --synthesize", kind: .folder)
            let names = try SampleSynth.writeAll(to: folder)
            Terminal.out("wrote \(names.map { folder + "/" + $0 }.joined(separator: ", "))")
            return ExitCode.ok
        }
        guard let target else { return ExitCode.usage }
        let folder = SessionFolder(path: target)
        if folder.exists { throw SessionError(path: folder.path, reason: "a session already exists here") }
        let (source, synthesised) = try clipFolder()
        defer { if let synthesised { try? FileManager.default.removeItem(atPath: synthesised) } }
        // Built under a hidden name beside the target and renamed into place at the end, so a
        // failure (a clip missing, a full disk) leaves nothing that would stop a retry.
        let parent = (folder.path as NSString).deletingLastPathComponent
        let base = (folder.path as NSString).lastPathComponent
        // A killed demo's staging folder goes once its process has; a running one's stays.
        Leftovers.removeDead(in: parent.isEmpty ? "." : parent, prefix: ".\(base).partial-", suffix: ".tapedeck")
        let staging = SessionFolder(path: (parent.isEmpty ? "." : parent) + "/.\(base).partial-\(getpid()).tapedeck")
        do {
            try build(in: staging, clips: source)
            TestHooks.killIfAsked(at: "demo-staged")
            if rename(staging.path, folder.path) != 0 {
                throw SessionError(path: folder.path, reason: "cannot create the session: \(String(cString: strerror(errno)))")
            }
        } catch {
            try? FileManager.default.removeItem(atPath: staging.path)
            throw error
        }
        Terminal.out("created demo session \(folder.path) from \(synthesised == nil ? source : "freshly synthesised clips")")
        return ExitCode.ok
    }

    /// The folder holding the clips: --samples, else the installed or source-tree samples,
    /// else a temporary folder they were just synthesised into (returned second, to remove).
    private func clipFolder() throws -> (String, synthesised: String?) {
        let clips = ["drums.flac", "bass.flac", "keys.flac"]
        func hasClips(_ dir: String) -> Bool { clips.allSatisfy { FileManager.default.fileExists(atPath: dir + "/" + $0) } }
        if let samples {
            guard hasClips(samples) else {
                throw AudioFileError(path: samples, reason: "does not hold the demo clips (\(clips.joined(separator: ", ")))")
            }
            return (samples, nil)
        }
        if let found = InstallLayout.dataFolders("samples", sourceName: "Samples").first(where: hasClips) {
            return (found, nil)
        }
        Leftovers.removeDead(in: NSTemporaryDirectory(), prefix: "tapedeck-demo-clips-")
        let temporary = NSTemporaryDirectory() + "tapedeck-demo-clips-\(getpid())"
        try FileManager.default.createDirectory(atPath: temporary, withIntermediateDirectories: true)
        do { _ = try SampleSynth.writeAll(to: temporary) } catch {
            try? FileManager.default.removeItem(atPath: temporary)
            throw error
        }
        return (temporary, temporary)
    }

    /// Creates the demo session in `folder` from the clips in `source`.
    private func build(in folder: SessionFolder, clips source: String) throws {
        var session = Session(sampleRate: SampleSynth.sampleRate, tempoBPM: SampleSynth.tempoBPM)
        let lock = try folder.create(session)
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
    }
}
