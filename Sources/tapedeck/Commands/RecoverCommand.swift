import Foundation
import TapedeckCore
import TapedeckIO
import TapedeckEngine
import TapedeckTakes

/// `tapedeck recover SESSION|FILE`: finishes takes a crash or a kill left unfinished.
struct RecoverCommand: Command {
    static let spec = CommandSpec(
        name: "recover", summary: "repair unfinished takes and put them on their tracks",
        synopsis: ["recover SESSION|FILE"],
        positionals: [PositionalSpec("SESSION|FILE", complete: .file)],
        details: """
        Finds takes still marked as recording (NAME.wav.recording), repairs their headers from
        the audio on disk (at most the last second before a crash is lost), and puts them on
        the track they were recorded for. With a FILE, repairs that one take. A take comes
        back in its own format and depth with its metadata; a finished file (its header
        complete) is left exactly as it is.
        """)

    var target: String

    init(arguments: inout Arguments) throws { target = try arguments.required("SESSION or FILE") }

    func run() throws -> Int32 {
        if AudioContainer(pathExtension: target) != nil {
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
        let found = try TakeRecovery.recover(session: folder)
        if found.isEmpty { Terminal.out("\(folder.path.terminalSafe): no unfinished takes") }
        let rate = (try? folder.load().sampleRate) ?? 48000
        for r in found {
            var line = "\(r.file.terminalSafe): \(r.frameCount) frames"
            if let t = r.trackIndex { line += ", on track \(t + 1)" }
            if let at = r.timelineStartFrame { line += " at \(TimeText.clock(frames: at, sampleRate: rate))" }
            if let p = r.problem { line += " (\(p))" }
            Terminal.out(line)
        }
        return ExitCode.ok
    }
}
