import Foundation
import TapedeckCore
import TapedeckEngine
import TapedeckIO
import TapedeckTakes

/// Mirror recording (``RecordRequest/mirrorFolder``): every take written twice, the second
/// copy in another folder (another disk) by a writer of its own. A mirror that fails or
/// fills is said once and the take records on; a take whose own disk fails records on
/// into its mirror.
extension Transport {
    /// The mirror file of the take at `takePath`: the same file name in `folder`. Refused
    /// when `folder` is the take's own folder (the copy would be the take).
    func mirrorPath(for takePath: String, in folder: String) throws(TransportError) -> String {
        let name = takePath.split(separator: "/").last.map(String.init) ?? takePath
        let takeFolder = takePath.contains("/") ? String(takePath[..<takePath.lastIndex(of: "/")!]) : "."
        if let a = SessionOwner.canonicalPath(folder), let b = SessionOwner.canonicalPath(takeFolder.isEmpty ? "/" : takeFolder), a == b {
            throw TransportError(.usage, "--mirror \(folder) is the folder the takes are written to: give another folder, on another disk")
        }
        return (folder.hasSuffix("/") ? String(folder.dropLast()) : folder) + "/" + name
    }

    /// Says, once each, every mirror of the running pass that stopped (its disk full or
    /// failing, or its file not created): the take records on. Control thread.
    func watchMirrors(_ pass: RecordingPass, stopped: Bool) {
        for f in pass.set.failedMirrors where !saidFailedMirrors.contains(f.index) {
            saidFailedMirrors.insert(f.index)
            // A pass that stops says it with its takes.
            if !stopped { errors.append(mirrorStopText(f, takeGoesOn: !pass.set.failedTakes.contains { $0.index == f.index })) }
        }
    }

    /// "mirror stopped (the take records on): the disk is full — kept 01:00.000 (2880000 frames): /mnt/b/X.wav".
    func mirrorStopText(_ f: TakeFailure, takeGoesOn: Bool) -> String {
        let prefix = f.request.path + ": "
        let reason = f.reason.hasPrefix(prefix) ? String(f.reason.dropFirst(prefix.count)) : f.reason
        let why = f.isDiskFull ? "the disk is full" : reason
        let clock = TimeText.clock(frames: f.keptFrames, sampleRate: engine.configuration.sampleRate)
        // No "; " inside: a front-end splits the engine's errors there.
        // What matters first, for a message line cut at 80 columns.
        return "mirror stopped\(takeGoesOn ? " (the take records on)" : ""): \(why) — kept \(clock) (\(f.keptFrames) frames): \(f.request.path)"
    }

    /// Finishes take `index`'s mirror at the end of `pass`: says what was not said yet (a
    /// stop, frames its slow disk lost), and keeps the mirror's crash markers only where
    /// the mirror holds more than the take (its own disk failed), so that `recover
    /// --mirror` can bring it in; otherwise the mirror is a finished copy and its markers go.
    /// Returns the lines to say. Control thread.
    func finishMirror(of take: RecordingPass.Take, index: Int, outcome: TakeOutcome, in pass: RecordingPass) -> [String] {
        guard let mirror = outcome.mirror else { return [] }
        var lines: [String] = []
        let rate = engine.configuration.sampleRate
        // Said once: as it happened, or here (a command's status says it again: see
        // ``Transport/lastPassMirrors``).
        if let error = mirror.error, !saidFailedMirrors.contains(index) {
            saidFailedMirrors.insert(index)
            let failure = pass.set.failedMirrors.first { $0.index == index }
                ?? TakeFailure(index: index, request: outcome.request, reason: error, keptFrames: mirror.frameCount)
            var f = failure
            f.request.path = mirror.path
            lines.append(mirrorStopText(f, takeGoesOn: false))
        }
        if mirror.droppedFrames > 0 {
            lines.append("mirror \(mirror.path): \(mirror.droppedFrames) frames were lost to its slow disk (silence there; the take has them)")
        }
        let pieces = max(mirror.pieceCount, 1)
        let paths = take.pieceFrames == nil ? [mirror.path] : (1...pieces).map { TakePieces.name(mirror.path, piece: $0) }
        if mirror.frameCount > outcome.frameCount {
            let clock = TimeText.clock(frames: mirror.frameCount, sampleRate: rate)
            let folder = (mirror.path as NSString).deletingLastPathComponent
            let session = take.relativeFile != nil ? (self.folder?.path ?? "SESSION") : nil
            let how = session.map { "`tapedeck recover \($0) --mirror \(folder)` brings it in once its disk has room" }
                ?? "it is a whole file"
            lines.append("the mirror holds more of the take than its file (\(clock), \(mirror.frameCount) frames): \(mirror.path) — \(how)")
            // The marker says where the take starts as it was known at its start; a take
            // started on the fly knows only now. (A loop's marker is the loop's start.)
            var isLoop = false
            if case .loop = pass.kind { isLoop = true }
            if take.pieceFrames == nil && !isLoop {
                // As written beside the mirror (with what was learnt since: its first frame's time).
                var marker = (try? TakeMarker.read(sidecar: TakeMarker.sidecarPath(forAudio: mirror.path))) ?? take.marker
                marker.timelineStartFrame = pass.set.startFrame
                try? marker.write(forAudio: mirror.path)
            }
        } else {
            for path in paths { TakeMarker.remove(forAudio: path) }
        }
        return lines
    }

    /// A finished MIDI take's copy in the mirror `folder` (a MIDI take is a few kilobytes,
    /// replaced whole as it grows: it is copied once it ends, not written twice as it
    /// records). Never over a file of its name. Returns why it could not be, if it could not.
    func mirrorMIDITake(_ path: String, into folder: String) -> String? {
        let name = (path as NSString).lastPathComponent
        let target = folder + "/" + name
        var st = stat()
        if lstat(target, &st) == 0 { return "mirror: \(target) is already there: the MIDI take was not copied" }
        do { try FileManager.default.copyItem(atPath: path, toPath: target) } catch {
            unlink(target)
            return "mirror stopped: cannot copy the MIDI take to \(target): \((error as NSError).localizedDescription)"
        }
        return nil
    }
}
