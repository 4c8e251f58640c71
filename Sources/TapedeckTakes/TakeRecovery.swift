import Foundation
import TapedeckCore
import TapedeckIO

/// Finishes takes a crash left behind: repairs the file, puts it on its track exactly where
/// its ``TakeMarker`` says a clean stop would have, and removes the marker. Safe to run
/// again: a take already on its track is not added twice.
///
/// Recovery changes the session, so it runs under the session's lock. While another process
/// holds the lock, its markers belong to takes it is recording right now, not to a crash:
/// recovery then leaves everything alone (``recover(session:)`` returns nothing).
public enum TakeRecovery {
    /// One take that was found.
    public struct Recovered: Equatable, Sendable {
        /// The take file (as the marker names it).
        public var file: String
        /// Frames it holds after repair.
        public var frameCount: Int64
        /// The track it went onto (0-based), if any.
        public var trackIndex: Int?
        /// Where its first region starts on the timeline, once placed.
        public var timelineStartFrame: Int64? = nil
        /// Why it could not be placed, if it was not.
        public var problem: String?
        /// Whether it is left to recover again (a mirror's copy the session's disk refused).
        public var failed = false
    }

    /// Recovers every marked take in `folder`'s `audio/` and saves the session when anything
    /// was placed. Call it when a session is opened, or through `tapedeck recover` (which
    /// takes the lock first, waiting for a live recorder to finish).
    public static func recover(session folder: SessionFolder) throws -> [Recovered] {
        // Audio takes in audio/, MIDI takes in midi/.
        let sidecars = [("audio", folder.audioFolder), ("midi", folder.midiFolder)].flatMap { (sub, dir) in
            ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).filter { $0.hasSuffix(".recording") }.sorted().map { (sub, $0) }
        }
        if sidecars.isEmpty { return [] }
        guard let lock = try SessionLock.acquireIfFree(folder) else { return [] }
        defer { withExtendedLifetime(lock) {} }
        var session = try folder.load()
        var results: [Recovered] = []
        var placedAny = false
        var done: [String] = []
        for (sub, name) in sidecars {
            let sidecar = folder.path + "/" + sub + "/" + name
            let audioPath = String(sidecar.dropLast(".recording".count))
            let audioName = String(name.dropLast(".recording".count))
            let relative = sub + "/" + audioName
            let marker = isLink(sidecar) ? nil : try? TakeMarker.read(sidecar: sidecar)
            var item = Recovered(file: marker?.file ?? relative, frameCount: 0, trackIndex: nil, problem: nil)
            guard isPresent(audioPath) else {
                // A claimed name whose take never started: nothing to recover.
                if marker != nil { results.append(Recovered(file: item.file, frameCount: 0, trackIndex: nil, problem: "the take file was never created")) }
                done.append(audioPath)
                continue
            }
            if isLink(audioPath) || isLink(sidecar) {
                item.problem = "it is a link; recovery never writes through one (left as it is)"
                results.append(item)
                continue
            }
            if marker != nil, sub == "audio", let size = fileSize(audioPath), size < minimumHeaderBytes(audioPath) {
                // Killed between creating the file and writing its header (libsndfile writes
                // it as it opens): there is no audio in it, only the start of a header.
                results.append(Recovered(file: item.file, frameCount: 0, trackIndex: nil,
                                         problem: "the take was stopped before its header was written: it holds no audio (removed)"))
                unlink(audioPath)
                done.append(audioPath)
                continue
            }
            let alreadyPlaced = session.tracks.contains { $0.regions.contains { $0.file == relative } }
            if alreadyPlaced && marker == nil {
                // A claim left by a take that was placed (a kept retroactive take): just tidy.
                done.append(audioPath)
                continue
            }
            do {
                item.frameCount = try repairFile(path: audioPath, sampleRate: marker?.sampleRate ?? session.sampleRate)
                if let wall = marker?.firstFrameWallClock, sub == "audio" {
                    _ = try? TakeFilePatch.restamp(path: audioPath, wallClock: wall, sampleRate: marker?.sampleRate ?? session.sampleRate)
                }
                if let dry = marker?.dryFile.map(folder.absolutePath(of:)), isPresent(dry), !isLink(dry) {
                    _ = try? repairFile(path: dry)
                    if let wall = marker?.firstFrameWallClock {
                        _ = try? TakeFilePatch.restamp(path: dry, wallClock: wall, sampleRate: marker?.sampleRate ?? session.sampleRate)
                    }
                }
            } catch {
                item.problem = "\(error)"
                results.append(item)
                continue
            }
            if sub == "audio" { _ = try? PeakFile.build(for: audioPath, peakPath: folder.peakPath(forAudio: relative)) }
            done.append(audioPath)
            guard let marker else {
                item.problem = "its marker is unreadable, so its track is unknown; the file is kept in audio/"
                results.append(item)
                continue
            }
            item.trackIndex = marker.track(in: session)
            if alreadyPlaced {
                item.timelineStartFrame = session.tracks.lazy.flatMap(\.regions).first { $0.file == relative }?.timelineStartFrame
                results.append(item)
                continue
            }
            do {
                let placed = try marker.place(in: &session, fileFrames: item.frameCount, file: relative)
                if placed.isEmpty { item.problem = "the take holds no audio" }
                item.timelineStartFrame = placed.first?.timelineStartFrame
                placedAny = placedAny || !placed.isEmpty
            } catch {
                item.problem = error.reason
                item.trackIndex = nil
            }
            results.append(item)
        }
        if placedAny { try folder.save(session) }
        for path in done { TakeMarker.remove(forAudio: path) }
        return results
    }

    /// The size of the file at `path` (not following a link), if it is there.
    private static func fileSize(_ path: String) -> Int64? {
        var st = stat()
        return lstat(path, &st) == 0 ? Int64(st.st_size) : nil
    }

    /// Bytes a take file's container writes before any audio: fewer, and its header was cut
    /// short as it was written (a WAV's RIFF, fmt and data headers; FLAC's marker and STREAMINFO).
    private static func minimumHeaderBytes(_ path: String) -> Int64 {
        switch AudioContainer(pathExtension: path) {
        case .wav?: return 44
        case .flac?: return 42
        case .mp3?, .opus?, nil: return 0
        }
    }

    private static func isPresent(_ path: String) -> Bool {
        var st = stat()
        return lstat(path, &st) == 0
    }

    /// Whether `path` is a symbolic link (not followed). Recovery never writes through one.
    static func isLink(_ path: String) -> Bool {
        var st = stat()
        return lstat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFLNK
    }

    /// Repairs one take file in place (WAV header sizes from the file length; FLAC rewritten
    /// from every frame that still decodes) and returns its frame count. A MIDI take is
    /// always whole (it is replaced atomically as it grows): its length is its end-of-track,
    /// at `sampleRate`.
    public static func repairFile(path: String, sampleRate: Int = 48000) throws -> Int64 {
        if path.lowercased().hasSuffix(".mid") {
            return try MIDIRegionFile.read(path: path, sampleRate: sampleRate).lengthFrames
        }
        switch AudioContainer(pathExtension: path) {
        case .wav?:
            return try WAVHeaderRepair.repair(path: path).frameCount
        case .flac?:
            return try rewriteDecodable(path: path)
        case .mp3?, .opus?, nil:
            let reader = try AudioFileReader(path: path)
            return reader.frameCount
        }
    }

    /// Re-encodes the decodable prefix of a cut-off FLAC file, so its header states the
    /// right length and no half frame dangles at the end, in the file's own depth and with
    /// its take metadata. A finished file (its STREAMINFO states a length and every frame of
    /// it decodes) is not a crashed take and is left as it is.
    static func rewriteDecodable(path: String) throws -> Int64 {
        if let finished = finishedFLACFrameCount(path: path) { return finished }
        let reader = try AudioFileReader(path: path)
        // 8-bit goes to 16 (no 8-bit FLAC writer here, and 16 holds it exactly).
        let encoding: SampleEncoding = switch reader.sndfileFormat & 0xFFFF {
        case 0x0001, 0x0002: .int16
        default: .int24
        }
        let metadata = reader.metadata
        let tmp = path + ".repair.flac"
        let writer = try AudioFileWriter(path: tmp, format: AudioFileFormat(container: .flac, encoding: encoding,
                                                                            sampleRate: reader.sampleRate, channelCount: reader.channelCount),
                                         expectedFrameCount: reader.frameCount, metadata: metadata,
                                         creation: .replacingLeftover)
        let block = 4096
        let bufs = (0..<reader.channelCount).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: block) }
        defer { bufs.forEach { $0.deallocate() } }
        while true {
            let n: Int
            do { n = try reader.read(into: bufs, frameCount: block) } catch { break }
            if n == 0 { break }
            try writer.write(bufs.map { UnsafePointer($0) }, frameCount: n)
        }
        try writer.close()
        let frames = writer.framesWritten
        if rename(tmp, path) != 0 {
            unlink(tmp)
            throw TakeError(path: path, reason: "cannot replace with the repaired file: \(String(cString: strerror(errno)))")
        }
        return frames
    }

    /// The length a FLAC file's STREAMINFO states, when it states one and that many frames
    /// decode with no error (a file a clean stop finished); nil for a crashed take.
    static func finishedFLACFrameCount(path: String) -> Int64? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        var head = [UInt8](repeating: 0, count: 42)
        let n = head.withUnsafeMutableBytes { read(fd, $0.baseAddress, 42) }
        close(fd)
        // "fLaC", a STREAMINFO block header, then 34 bytes whose bits 108..143 are the total.
        guard n == 42, head[0..<4] == [0x66, 0x4C, 0x61, 0x43], head[4] & 0x7F == 0 else { return nil }
        let total = Int64(head[21] & 0x0F) << 32 | Int64(head[22]) << 24 | Int64(head[23]) << 16 | Int64(head[24]) << 8 | Int64(head[25])
        guard total > 0, let reader = try? AudioFileReader(path: path), reader.frameCount == total else { return nil }
        let block = 4096
        let bufs = (0..<reader.channelCount).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: block) }
        defer { bufs.forEach { $0.deallocate() } }
        var decoded: Int64 = 0
        while true {
            guard let got = try? reader.read(into: bufs, frameCount: block) else { return nil }
            if got == 0 { break }
            decoded += Int64(got)
        }
        return decoded == total ? total : nil
    }
}
