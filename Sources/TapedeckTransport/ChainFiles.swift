import Foundation
import TapedeckCore
import TapedeckDSP
import TapedeckIO
#if canImport(Glibc)
import Glibc
#endif

/// Files a chain names, brought into the session when the chain is set: a sample given by a
/// path outside the session (`sampler:file=~/kits/kick.wav`) is copied into `samples/` and
/// the chain names the copy (`samples/kick.wav`), so the session keeps everything it plays
/// and never reads outside its folder. Control thread.
public enum ChainFiles {
    /// `chain` with every session file it names inside `folder`, copying those that lie
    /// outside (names relative to `workingFolder`, or absolute). A name that already lies in
    /// the session stays. Throws when a file cannot be found or copied.
    public static func adopt(_ chain: Chain, into folder: SessionFolder, workingFolder: String,
                             registry: NodeRegistry = .standard) throws(AudioFileError) -> Chain {
        var out = chain
        for (i, entry) in chain.entries.enumerated() {
            guard let descriptor = registry.descriptor(named: entry.node) else { continue }
            for (k, text) in entry.texts.enumerated() {
                guard descriptor.textParameters.first(where: { $0.id == text.parameter })?.isSessionFile == true else { continue }
                let inSession = SessionValidator.filePathProblem(text.value) == nil && access(folder.absolutePath(of: text.value), R_OK) == 0
                if inSession { continue }
                let source = text.value.hasPrefix("/") ? text.value : workingFolder + "/" + text.value
                guard access(source, R_OK) == 0 else {
                    throw AudioFileError(path: text.value, reason: "no such file here or in the session (\(String(cString: strerror(errno))))")
                }
                out.setText(entry: i, index: k, to: try copy(source, into: folder))
            }
        }
        return out
    }

    /// Copies `source` into the session's `samples/` under a free name; returns the name
    /// relative to the session.
    static func copy(_ source: String, into folder: SessionFolder) throws(AudioFileError) -> String {
        if !FileManager.default.fileExists(atPath: folder.samplesFolder) && mkdir(folder.samplesFolder, 0o755) != 0 {
            throw AudioFileError(path: folder.samplesFolder, reason: "cannot create folder: \(String(cString: strerror(errno)))")
        }
        let data: Data
        do { data = try Data(contentsOf: URL(fileURLWithPath: source)) } catch {
            throw AudioFileError(path: source, reason: "cannot read: \(error.localizedDescription)")
        }
        var base = (source as NSString).lastPathComponent
        let ext = (base as NSString).pathExtension
        base = MIDIRegionFile.safeBase((base as NSString).deletingPathExtension)
        for n in 1...10_000 {
            let name = (n == 1 ? base : "\(base)-\(n)") + (ext.isEmpty ? "" : "." + ext)
            let path = folder.samplesFolder + "/" + name
            let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
            if fd < 0 {
                if errno == EEXIST { continue }
                throw AudioFileError(path: path, reason: "cannot create: \(String(cString: strerror(errno)))")
            }
            close(fd)
            do { try DurableFile.replace(path, with: [UInt8](data)) } catch {
                unlink(path)
                throw error
            }
            return "samples/" + name
        }
        throw AudioFileError(path: folder.samplesFolder, reason: "no free name for \(base)")
    }
}
