import CSndfile
import Foundation
import TapedeckCore
import TapedeckIO

/// Audio files with damaged headers and data, read the way `info` reads them and copied the
/// way `import` copies them; every so often through the real `tapedeck info` and `import`.
struct AudioTarget: FuzzTarget {
    static let name = "audio"
    let root: String
    let folder: SessionFolder
    let seeds: [[UInt8]]
    let mutator = Mutator(tokens: ["RIFF", "RF64", "WAVE", "fmt ", "data", "ds64", "fLaC", "FORM", "AIFF", "SSND", "COMM", "OggS",
                                   "\u{FF}\u{FF}\u{FF}\u{7F}", "\0\0\0\0", "\u{1}\0", "\u{3}\0"].map { Array($0.utf8) })

    init() throws {
        // A worker killed at the end of a run cannot remove its folder: the next run does.
        Leftovers.removeDead(in: FileManager.default.temporaryDirectory.path, prefix: "tapedeck-fuzz-audio-")
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("tapedeck-fuzz-audio-\(getpid())").path
        root = dir
        try? FileManager.default.removeItem(atPath: dir)
        try FileManager.default.createDirectory(atPath: dir + "/seeds", withIntermediateDirectories: true)
        folder = SessionFolder(path: dir + "/s")
        try folder.create(Session())
        try FuzzAudio.writeSeedFiles(into: dir + "/seeds", frames: 600)
        seeds = try FileManager.default.contentsOfDirectory(atPath: dir + "/seeds").sorted().map {
            [UInt8](try Data(contentsOf: URL(fileURLWithPath: dir + "/seeds/" + $0)))
        }
    }

    func input(seed: UInt64, index: Int) -> [UInt8] {
        // One case in five: an Ogg Vorbis cut off anywhere (libsndfile reports SF_COUNT_MAX
        // frames for most such cuts, which once trapped `import`).
        if index % 5 == 1, let ogg = seeds.first(where: { $0.starts(with: Array("OggS".utf8)) }) {
            var rng = FuzzRandom(seed: seed, stream: Self.name + "-cut", index: index)
            return Array(ogg.prefix(1 + rng.below(ogg.count - 1)))
        }
        // Most damage that matters is in the header: aim there more often than not.
        return mutator.mutate(oneOf: seeds, stream: Self.name, seed: seed, index: index, headBytes: 80, headPercent: 70)
    }

    func check(_ input: [UInt8], index: Int) -> String? {
        let path = root + "/case.wav"
        if let problem = Mutator.writeCase(input, to: path) { return problem }
        do {
            let reader = try AudioFileReader(path: path, blockFrames: 4096)
            let buffers = (0..<reader.channelCount).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: 4096) }
            defer { buffers.forEach { $0.deallocate() } }
            var frames: Int64 = 0
            while frames < 10_000_000 {
                let n = try reader.read(into: buffers, frameCount: 4096)
                if n == 0 { break }
                frames += Int64(n)
            }
            // An Ogg's count is what reads back (a cut-off one once promised Int64.max frames
            // and gave a few thousand). Other formats may promise more than decodes (a FLAC
            // STREAMINFO): their readers read to the real end, and `info` says "truncated".
            if input.starts(with: Array("OggS".utf8)) && frames < 10_000_000 && frames != reader.frameCount {
                return "the reader counts \(reader.frameCount) frames but \(frames) read back"
            }
        } catch {
            return Oracle.unclear(error.description, naming: ["case.wav"])
        }
        if index % 4 == 0 {
            do {
                let imported = try AudioImporter.importFile(source: path, destinationFolder: folder.audioFolder,
                                                             peaksFolder: folder.peaksFolder, sessionSampleRate: 48000, quality: .medium)
                defer { unlink(folder.audioFolder + "/" + imported.fileName) }
                if imported.frameCount <= 0 { return "imported a file of \(imported.frameCount) frames" }
                if let bad = try FuzzAudio.nonFinite(in: folder.audioFolder + "/" + imported.fileName) { return "import kept \(bad)" }
            } catch {
                if let problem = Oracle.unclear("\(error)", naming: ["case.wav"]) { return problem }
            }
        }
        return nil
    }
}

/// Small real audio files the targets start from.
enum FuzzAudio {
    /// `a.wav` (mono 16-bit), `b.flac` (stereo 24-bit), `c.aiff` (stereo float), `nan.wav`
    /// (float with NaN and infinities in it), each `frames` long.
    static func writeSeedFiles(into dir: String, frames: Int = 48000) throws {
        let sine = (0..<frames).map { Float(sin(Double($0) * 0.05)) * 0.5 }
        var poisoned = sine
        for i in stride(from: 7, to: frames, by: max(frames / 5, 1)) { poisoned[i] = [Float.nan, .infinity, -.infinity][i % 3] }
        try write([sine], dir + "/a.wav", .wav, .int16)
        try write([sine, sine.reversed()], dir + "/b.flac", .flac, .int24)
        try write([poisoned], dir + "/nan.wav", .wav, .float32)
        // AIFF is written by libsndfile too, through a WAV float copy renamed: the header is
        // what the fuzzer damages, and a WAV float header is a fine third shape.
        try write([sine, sine], dir + "/c.wav", .wav, .float32)
        writeOgg((0..<24_000).map { Float(sin(Double($0) * 0.05)) * 0.5 }, dir + "/d.ogg")
    }

    /// An Ogg Vorbis seed through libsndfile (Tapedeck itself never writes Ogg); skipped
    /// when this libsndfile cannot.
    private static func writeOgg(_ samples: [Float], _ path: String) {
        var info = SF_INFO()
        info.samplerate = 48000
        info.channels = 1
        info.format = Int32(SF_FORMAT_OGG | SF_FORMAT_VORBIS)
        guard let h = sf_open(path, Int32(SFM_WRITE), &info) else { return }
        _ = samples.withUnsafeBufferPointer { sf_writef_float(h, $0.baseAddress, sf_count_t($0.count)) }
        sf_close(h)
    }

    private static func write(_ channels: [[Float]], _ path: String, _ container: AudioContainer, _ encoding: SampleEncoding) throws {
        unlink(path)
        let writer = try AudioFileWriter(path: path, format: AudioFileFormat(container: container, encoding: encoding, sampleRate: 48000,
                                                                             channelCount: channels.count))
        try writer.write(arrays: channels)
        try writer.close()
    }

    /// Why the file at `path` is not clean audio (a NaN or infinite sample), or nil.
    static func nonFinite(in path: String) throws -> String? {
        let reader = try AudioFileReader(path: path)
        let buffers = (0..<reader.channelCount).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: 4096) }
        defer { buffers.forEach { $0.deallocate() } }
        while true {
            let n = try reader.read(into: buffers, frameCount: 4096)
            if n == 0 { return nil }
            for b in buffers where UnsafeBufferPointer(start: b, count: n).contains(where: { !$0.isFinite }) {
                return "a NaN or infinite sample in \(path)"
            }
        }
    }
}
