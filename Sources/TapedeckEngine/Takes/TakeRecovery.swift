import Foundation
import TapedeckCore
import TapedeckIO

/// Finishes takes a crash left behind: repairs the file, puts it on its track and removes
/// its ``TakeMarker``. Safe to run again: a take already on its track is not added twice.
public enum TakeRecovery {
    /// One take that was found.
    public struct Recovered: Equatable, Sendable {
        /// The take file (as the marker names it).
        public var file: String
        /// Frames it holds after repair.
        public var frameCount: Int64
        /// The track it went onto (0-based), if any.
        public var trackIndex: Int?
        /// Why it could not be placed, if it was not.
        public var problem: String?
    }

    /// Recovers every marked take in `folder`'s `audio/` and saves the session when anything
    /// was placed. Call it when a session is opened, or through `tapedeck recover`.
    public static func recover(session folder: SessionFolder) throws -> [Recovered] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.audioFolder)) ?? []
        let sidecars = names.filter { $0.hasSuffix(".recording") }.sorted()
        if sidecars.isEmpty { return [] }
        var session = try folder.load()
        var results: [Recovered] = []
        var placedAny = false
        var done: [String] = []
        for name in sidecars {
            let sidecar = folder.audioFolder + "/" + name
            let audioPath = String(sidecar.dropLast(".recording".count))
            let marker = (try? TakeMarker.read(sidecar: sidecar))
                ?? TakeMarker(file: "audio/" + String(name.dropLast(".recording".count)), session: folder.path, trackIndex: nil,
                              timelineStartFrame: 0, latencyFrames: 0, sampleRate: session.sampleRate, deviceChannels: [],
                              startedAtSeconds: 0)
            guard FileManager.default.fileExists(atPath: audioPath) else {
                results.append(Recovered(file: marker.file, frameCount: 0, trackIndex: nil, problem: "the take file was never created"))
                done.append(audioPath)
                continue
            }
            var item = Recovered(file: marker.file, frameCount: 0, trackIndex: nil, problem: nil)
            do {
                item.frameCount = try repairFile(path: audioPath)
            } catch {
                item.problem = "\(error)"
                results.append(item)
                continue
            }
            let relative = marker.file.hasPrefix("/") ? "audio/" + (audioPath.split(separator: "/").last.map(String.init) ?? "") : marker.file
            let length = item.frameCount - marker.latencyFrames
            if let t = marker.trackIndex, session.tracks.indices.contains(t), length > 0 {
                if !session.tracks[t].regions.contains(where: { $0.file == relative }) {
                    session.tracks[t].regions.append(Region(file: relative, timelineStartFrame: marker.timelineStartFrame,
                                                            sourceOffsetFrame: marker.latencyFrames, lengthFrames: length))
                    placedAny = true
                }
                item.trackIndex = t
            } else if length <= 0 {
                item.problem = "the take holds no audio"
            } else {
                item.problem = "its track no longer exists; the file is kept in audio/"
            }
            _ = try? PeakFile.build(for: audioPath, peakPath: folder.peakPath(forAudio: relative))
            results.append(item)
            done.append(audioPath)
        }
        if placedAny { try folder.save(session) }
        for path in done { TakeMarker.remove(forAudio: path) }
        return results
    }

    /// Repairs one take file in place (WAV header sizes from the file length; FLAC rewritten
    /// from every frame that still decodes) and returns its frame count.
    public static func repairFile(path: String) throws -> Int64 {
        switch AudioContainer(pathExtension: path) {
        case .wav?:
            return try WAVHeaderRepair.repair(path: path).frameCount
        case .flac?:
            return try rewriteDecodable(path: path)
        case nil:
            let reader = try AudioFileReader(path: path)
            return reader.frameCount
        }
    }

    /// Re-encodes the decodable prefix of a cut-off FLAC file, so its header states the
    /// right length and no half frame dangles at the end.
    static func rewriteDecodable(path: String) throws -> Int64 {
        let reader = try AudioFileReader(path: path)
        let sub = reader.sndfileFormat & 0xFFFF
        let encoding: SampleEncoding = sub == 0x0001 || sub == 0x0002 ? (sub == 0x0001 ? .int16 : .int24) : .int24
        let tmp = path + ".repair.flac"
        let writer = try AudioFileWriter(path: tmp, format: AudioFileFormat(container: .flac, encoding: encoding,
                                                                            sampleRate: reader.sampleRate, channelCount: reader.channelCount))
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
}
