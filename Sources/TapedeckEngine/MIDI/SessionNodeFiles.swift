import Foundation
import TapedeckCore
import TapedeckDSP
import TapedeckIO
#if canImport(Glibc)
import Glibc
#endif

/// The files chains name (`sampler:file=samples/kick.wav`), as a session's graphs and exports
/// read them: names relative to the session folder, never leaving it (the `chain` command and
/// the screen copy outside files into `samples/` first); samples read with libsndfile and
/// mixed to mono. Without a session, names are relative to the current folder and absolute
/// names are allowed (`play take.wav --fx 'sampler:file=/x/kick.wav'`).
public struct SessionNodeFiles: NodeFiles {
    /// The session folder (nil: none).
    public let folder: String?

    /// Files of the session at `folder` (nil: no session).
    public init(folder: String?) { self.folder = folder }

    /// The longest sample read: ten minutes at 48 kHz (anything longer is a recording, not a
    /// sample, and would sit in memory).
    public static let maximumSampleFrames: Int64 = 48000 * 600

    public func resolve(_ text: String) -> Result<String, NodeFileProblem> {
        let path: String
        if let folder {
            if let problem = SessionValidator.filePathProblem(text) {
                return .failure(NodeFileProblem(problem.replacingOccurrences(of: "region files", with: "files a chain names")))
            }
            path = folder + "/" + text
        } else {
            path = text.hasPrefix("/") ? text : FileManager.default.currentDirectoryPath + "/" + text
        }
        guard access(path, R_OK) == 0 else { return .failure(NodeFileProblem(String(cString: strerror(errno)))) }
        return .success(path)
    }

    public func readSample(atPath path: String) -> Result<LoadedSample, NodeFileProblem> {
        do {
            let reader = try AudioFileReader(path: path, blockFrames: 8192)
            guard reader.frameCount <= SessionNodeFiles.maximumSampleFrames else {
                return .failure(NodeFileProblem("\(reader.frameCount) frames is longer than a sample may be (10 minutes at 48 kHz)"))
            }
            let channels = (0..<reader.channelCount).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: 8192) }
            defer { channels.forEach { $0.deallocate() } }
            var mono: [Float] = []
            mono.reserveCapacity(Int(reader.frameCount))
            let scale = 1 / Float(reader.channelCount)
            while true {
                let n = try reader.read(into: channels, frameCount: 8192)
                if n == 0 { break }
                for i in 0..<n {
                    var sum: Float = 0
                    for c in channels { sum += c[i] }
                    let v = sum * scale
                    mono.append(v.isFinite ? v : 0)
                }
            }
            return .success(LoadedSample(samples: mono, sampleRate: Double(reader.sampleRate)))
        } catch {
            return .failure(NodeFileProblem(error.reason))
        }
    }
}
