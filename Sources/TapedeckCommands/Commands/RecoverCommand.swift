import Foundation
import TapedeckCore
import TapedeckIO
import TapedeckEngine
import TapedeckTakes

/// `tapedeck recover SESSION|FILE`: finishes takes a crash or a kill left unfinished.
struct RecoverCommand: Command {
    static let spec = CommandSpec(
        name: "recover", summary: "repair unfinished takes and put them on their tracks",
        synopsis: ["recover SESSION|FILE", "recover SESSION --mirror DIR"],
        positionals: [PositionalSpec("SESSION|FILE", complete: .file)],
        options: [
            OptionSpec("--mirror", value: "DIR", "also the mirror copies `record --mirror DIR` left marked there: each repaired; where the session's copy is missing or shorter (its disk filled), the mirror's is copied in and placed"),
        ],
        details: """
        Finds takes still marked as recording (NAME.wav.recording), repairs their headers from
        the audio on disk (at most the last second before a crash is lost), and puts them on
        the track they were recorded for. With a FILE, repairs that one take. A take comes
        back in its own format and depth with its metadata; a finished file (its header
        complete) is left exactly as it is. With --mirror, the mirror folder of a recording is
        gone through after the session: the mirror's copy of a take replaces a session copy
        that is missing or holds less (the session's disk filled while its mirror recorded on).
        """)

    var target: String
    var mirror: String?

    init(arguments: inout Arguments) throws {
        mirror = try arguments.option("--mirror")
        target = try arguments.required("SESSION or FILE")
        if let mirror {
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: mirror, isDirectory: &isFolder), isFolder.boolValue else {
                throw UsageError("recover: --mirror \(mirror.terminalSafe): no such folder")
            }
        }
    }

    func run(_ context: CommandContext) throws -> Int32 {
        if AudioContainer(pathExtension: target) != nil {
            if mirror != nil { throw UsageError("recover: --mirror goes with a session, not a file (a mirror's file is recovered as `recover DIR/FILE`)") }
            guard FileManager.default.fileExists(atPath: target) else { throw AudioFileError(path: target, reason: "no such file") }
            let frames = try TakeRecovery.repairFile(path: target)
            // A take stamped with the time of day gets the time its marker kept.
            if let marker = try? TakeMarker.read(sidecar: TakeMarker.sidecarPath(forAudio: target)), let wall = marker.firstFrameWallClock {
                try TakeFilePatch.restamp(path: target, wallClock: wall, sampleRate: marker.sampleRate)
            }
            TakeMarker.remove(forAudio: target)
            Terminal.out("\(target.terminalSafe): \(frames) frames")
            return ExitCode.ok
        }
        let folder = SessionFolder(path: target)
        // Waits for a recorder that is still running (its takes are not crashed, they are live).
        let lock = try SessionLock.acquire(folder)
        defer { withExtendedLifetime(lock) {} }
        var found = try TakeRecovery.recover(session: folder)
        if let mirror { found += try TakeRecovery.recoverMirror(session: folder, mirror: mirror) }
        if found.isEmpty { Terminal.out("\(folder.path.terminalSafe): no unfinished takes\(mirror == nil ? "" : " (nor in the mirror)")") }
        let rate = (try? folder.load().sampleRate) ?? 48000
        for r in found {
            var line = "\(r.file.terminalSafe): \(r.frameCount) frames"
            if let t = r.trackIndex { line += ", on track \(t + 1)" }
            if let at = r.timelineStartFrame { line += " at \(TimeText.clock(frames: at, sampleRate: rate))" }
            if let p = r.problem { line += " (\(p))" }
            Terminal.out(line)
        }
        return found.contains(where: \.failed) ? ExitCode.failure : ExitCode.ok
    }
}
