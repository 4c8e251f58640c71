import Foundation
import TapedeckCore
import TapedeckIO

/// `recover SESSION --mirror DIR`: the mirror copies a recording left in DIR (`record
/// --mirror`), each still marked (its crash marker beside it) because a crash cut it short,
/// or because it holds more of its take than the session's own copy (whose disk filled or
/// failed). Each is repaired in place; where the session's copy is missing or shorter, the
/// mirror's is copied into the session under the take's own name and placed where the take
/// was recorded (any shorter region of that file is replaced). A mirror copy the session
/// already holds whole is left as it is, unmarked.
extension TakeRecovery {
    /// Recovers every marked take in `mirror` for `folder`'s session, under the session's
    /// lock (held by the caller or free); saves the session when anything was placed.
    public static func recoverMirror(session folder: SessionFolder, mirror: String) throws -> [Recovered] {
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: mirror)) ?? []).filter { $0.hasSuffix(".recording") }.sorted()
        if names.isEmpty { return [] }
        guard let lock = try SessionLock.acquireIfFree(folder) else { return [] }
        defer { withExtendedLifetime(lock) {} }
        var session = try folder.load()
        var results: [Recovered] = []
        var placedAny = false
        for name in names {
            let sidecar = mirror + "/" + name
            let audioPath = String(sidecar.dropLast(".recording".count))
            guard !isLink(sidecar), let marker = try? TakeMarker.read(sidecar: sidecar) else {
                results.append(Recovered(file: audioPath, frameCount: 0, problem: "its marker is unreadable, so its take is unknown (left as it is)"))
                continue
            }
            var item = Recovered(file: audioPath, frameCount: 0)
            var st = stat()
            guard lstat(audioPath, &st) == 0 else {
                item.problem = "the mirror's file was never created"
                results.append(item)
                TakeMarker.remove(forAudio: audioPath)
                continue
            }
            if (st.st_mode & S_IFMT) == S_IFLNK {
                item.problem = "it is a link; recovery never writes through one (left as it is)"
                results.append(item)
                continue
            }
            do { item.frameCount = try repairFile(path: audioPath, sampleRate: marker.sampleRate) } catch {
                item.problem = "\(error)"
                results.append(item)
                continue
            }
            if let wall = marker.firstFrameWallClock {  // a take stamped with the time of day (`--timestamp clock`)
                _ = try? TakeFilePatch.restamp(path: audioPath, wallClock: wall, sampleRate: marker.sampleRate)
            }
            // A take outside a session (`record --out F --mirror DIR`): the file is all there is.
            guard marker.session != nil, !marker.file.hasPrefix("/") else {
                TakeMarker.remove(forAudio: audioPath)
                results.append(item)
                continue
            }
            let relative = marker.file
            let sessionPath = folder.absolutePath(of: relative)
            let sessionFrames: Int64? = lstat(sessionPath, &st) == 0 ? ((try? AudioFileReader(path: sessionPath, blockFrames: 16).frameCount) ?? 0) : nil
            if let frames = sessionFrames, frames >= item.frameCount {
                item.problem = "the session's copy is whole (\(frames) frames): the mirror's is a finished copy"
                TakeMarker.remove(forAudio: audioPath)
                results.append(item)
                continue
            }
            // Copied under a temporary name, then renamed over the short copy: a failed copy
            // (the session's disk still full) leaves both copies as they were.
            let temporary = sessionPath + ".from-mirror"
            unlink(temporary)
            do {
                try FileManager.default.copyItem(atPath: audioPath, toPath: temporary)
                guard rename(temporary, sessionPath) == 0 else { throw TakeError(path: sessionPath, reason: String(cString: strerror(errno))) }
            } catch {
                unlink(temporary)
                let why = (error as? TakeError)?.reason ?? error.localizedDescription
                item.problem = "cannot copy it into the session: \(why) — the mirror's copy is kept, marked"
                item.failed = true
                results.append(item)
                continue
            }
            _ = try? PeakFile.build(for: sessionPath, peakPath: folder.peakPath(forAudio: relative))
            TakeMarker.remove(forAudio: sessionPath)
            item.file = relative
            item.trackIndex = marker.track(in: session)
            // The short copy's regions go: the take is placed again as recorded.
            for t in session.tracks.indices { session.tracks[t].regions.removeAll { $0.file == relative } }
            do {
                let placed = try marker.place(in: &session, fileFrames: item.frameCount, file: relative)
                if placed.isEmpty { item.problem = "the take holds no audio" }
                item.timelineStartFrame = placed.first?.timelineStartFrame
                placedAny = placedAny || !placed.isEmpty
                TakeMarker.remove(forAudio: audioPath)
            } catch {
                item.problem = error.reason
                item.trackIndex = nil
            }
            results.append(item)
        }
        if placedAny { try folder.save(session) }
        return results
    }
}
