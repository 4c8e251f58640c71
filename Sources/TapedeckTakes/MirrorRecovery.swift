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
///
/// A transaction: the markers (the mirror's, and the session copy's) go only once the
/// `session.json` that places the take is saved. Whatever step a full disk or a kill
/// interrupts — the copy, the save, the markers' removal — the next `recover` finds the
/// markers, finds the session's copy whole, and places what is not placed, so running it
/// again always ends with every piece on its track.
extension TakeRecovery {
    /// Recovers every marked take in `mirror` for `folder`'s session, under the session's
    /// lock (held by the caller or free); saves the session when anything was placed, and
    /// only then removes the markers of what is done.
    public static func recoverMirror(session folder: SessionFolder, mirror: String) throws -> [Recovered] {
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: mirror)) ?? []).filter { $0.hasSuffix(".recording") }.sorted()
        if names.isEmpty { return [] }
        guard let lock = try SessionLock.acquireIfFree(folder) else { return [] }
        defer { withExtendedLifetime(lock) {} }
        var session = try folder.load()
        var results: [Recovered] = []
        var changed = false
        // Takes whose markers go once the session that places them is saved.
        var done: [String] = []
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
                done.append(audioPath)
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
                done.append(audioPath)
                results.append(item)
                continue
            }
            let relative = marker.file
            let sessionPath = folder.absolutePath(of: relative)
            var sessionFrames: Int64? = lstat(sessionPath, &st) == 0 ? ((try? AudioFileReader(path: sessionPath, blockFrames: 16).frameCount) ?? 0) : nil
            var copied = false
            if sessionFrames.map({ $0 < item.frameCount }) ?? true {
                // Copied under a temporary name, then renamed over the short copy: a failed copy
                // (the session's disk still full) leaves both copies as they were.
                do { try copyIn(audioPath, to: sessionPath) } catch {
                    item.problem = "cannot copy it into the session: \(error.reason) — the mirror's copy is kept, marked"
                    item.failed = true
                    results.append(item)
                    continue
                }
                _ = try? PeakFile.build(for: sessionPath, peakPath: folder.peakPath(forAudio: relative))
                sessionFrames = item.frameCount
                copied = true
            }
            let frames = sessionFrames ?? item.frameCount
            item.file = relative
            item.frameCount = frames
            item.trackIndex = marker.track(in: session)
            if placedWhole(relative, frames: frames, marker: marker, in: session) {
                if !copied { item.problem = "the session's copy is whole (\(frames) frames): the mirror's is a finished copy" }
                item.timelineStartFrame = session.tracks.lazy.flatMap(\.regions).first { $0.file == relative }?.timelineStartFrame
                done += [audioPath, sessionPath]
                results.append(item)
                continue
            }
            // Shorter regions of the file (its short copy placed) go: the take is placed again as recorded.
            for t in session.tracks.indices { session.tracks[t].regions.removeAll { $0.file == relative } }
            do {
                let placed = try marker.place(in: &session, fileFrames: frames, file: relative)
                if placed.isEmpty { item.problem = "the take holds no audio" }
                item.timelineStartFrame = placed.first?.timelineStartFrame
                changed = true
                done += [audioPath, sessionPath]
            } catch {
                item.problem = error.reason
                item.trackIndex = nil
            }
            results.append(item)
        }
        TestHooks.killIfAsked(at: "mirror-recovery-save")
        // A save that fails (a full disk) throws with every marker still in place.
        if changed { try folder.save(session) }
        TestHooks.killIfAsked(at: "mirror-recovery-saved")
        for path in done { TakeMarker.remove(forAudio: path) }
        return results
    }

    /// Copies the mirror's take over the session's copy: a temporary name beside it, then a
    /// rename, so the session's copy is the old one or the whole new one.
    static func copyIn(_ source: String, to target: String) throws(TakeError) {
        let temporary = target + ".from-mirror"
        unlink(temporary)
        do {
            try FileManager.default.copyItem(atPath: source, toPath: temporary)
        } catch {
            unlink(temporary)
            let code = ((error as NSError).userInfo[NSUnderlyingErrorKey] as? NSError)?.code
            let why = code.map { DurableFile.writeProblem(Int32($0)) } ?? (error as NSError).localizedDescription
            throw TakeError(path: target, reason: why)
        }
        TestHooks.killIfAsked(at: "mirror-recovery-copied")
        guard rename(temporary, target) == 0 else {
            let why = String(cString: strerror(errno))
            unlink(temporary)
            throw TakeError(path: target, reason: why)
        }
        DurableFile.syncFolder((target as NSString).deletingLastPathComponent)
    }

    /// Whether `session` already plays the take in `relative` to its end: a region of that
    /// file reaches as far into it as the take's placement of `frames` frames does (a region
    /// of its short copy, placed before the mirror's was copied in, does not).
    static func placedWhole(_ relative: String, frames: Int64, marker: TakeMarker, in session: Session) -> Bool {
        func sourceEnd(_ r: Region) -> Int64 { r.sourceOffsetFrame + Int64((Double(r.lengthFrames) * r.rate).rounded()) }
        let wanted = marker.regions(fileFrames: frames, file: relative).map(sourceEnd).max() ?? 0
        let have = session.tracks.lazy.flatMap(\.regions).filter { $0.file == relative }.map(sourceEnd).max()
        guard let have else { return wanted == 0 }
        return have >= wanted - 1
    }
}
