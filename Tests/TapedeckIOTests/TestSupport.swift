import CSndfile
import TapedeckIO
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// A fresh folder under /tmp, removed when the test ends.
func makeTempFolder(_ test: XCTestCase) -> String {
    var template = Array("/tmp/tapedeck-io-XXXXXX".utf8CString)
    let path = template.withUnsafeMutableBufferPointer { buf -> String in
        guard let p = mkdtemp(buf.baseAddress!) else { return "/tmp/tapedeck-io-failed" }
        return String(cString: p)
    }
    test.addTeardownBlock { removeTree(path) }
    return path
}

/// Deletes a folder of plain files (and one level of sub-folders, restoring permissions).
func removeTree(_ path: String) {
    guard let dir = opendir(path) else { unlink(path); return }
    while let entry = readdir(dir) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
            String(cString: raw.bindMemory(to: CChar.self).baseAddress!)
        }
        if name == "." || name == ".." { continue }
        let child = path + "/" + name
        var st = stat()
        if lstat(child, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR {
            chmod(child, 0o755)
            removeTree(child)
        } else {
            unlink(child)
        }
    }
    closedir(dir)
    rmdir(path)
}

/// Deterministic noise in [-1, 1): a 64-bit LCG, so every run tests the same samples.
struct SeededNoise {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> Float {
        state = state &* 6364136223846793005 &+ 1442695040888963407
        return Float(Int32(truncatingIfNeeded: state >> 32)) / 2147483648
    }
}

/// `frameCount` frames of a sine at `hertz` with peak `amplitude`.
func sine(hertz: Double, sampleRate: Int, frameCount: Int, amplitude: Double = 0.5, phase: Double = 0) -> [Float] {
    (0..<frameCount).map { Float(amplitude * sin(2 * .pi * hertz * Double($0) / Double(sampleRate) + phase)) }
}

/// Noise with the extremes every file must survive: ±1.0, just under, the most negative
/// integer of each depth, zero and tiny values.
func noiseWithEdges(frameCount: Int, seed: UInt64) -> [Float] {
    var noise = SeededNoise(seed: seed)
    var out = (0..<frameCount).map { _ in noise.next() }
    let edges: [Float] = [1.0, -1.0, 0.99999, -0.99999, 0, Float(-32768) / 32768, Float(-8388608) / 8388608,
                          Float(32767) / 32768, Float(8388607) / 8388608, 1.0 / 32768, -1.0 / 8388608, 0.5, -0.5]
    for (i, v) in edges.enumerated() where i < frameCount { out[i] = v }
    return out
}

/// Writes non-interleaved `channels` with ``AudioFileWriter`` in uneven blocks.
func writeFile(_ path: String, format: AudioFileFormat, channels: [[Float]], blockFrames: Int = 1000,
               peakPath: String? = nil) throws {
    // Writers never replace a file (they create exclusively); a fixture written again is new.
    unlink(path)
    let writer = try AudioFileWriter(path: path, format: format, peakPath: peakPath)
    let frames = channels[0].count
    var done = 0
    var step = blockFrames
    while done < frames {
        let n = min(step, frames - done)
        try withPointers(channels, offset: done) { try writer.write($0, frameCount: n) }
        done += n
        step = step == blockFrames ? blockFrames / 3 + 1 : blockFrames
    }
    try writer.close()
}

/// Calls `body` with pointers into each channel at `offset`.
func withPointers<R>(_ channels: [[Float]], offset: Int, _ body: ([UnsafePointer<Float>]) throws -> R) rethrows -> R {
    var pointers: [UnsafePointer<Float>] = []
    func recurse(_ i: Int) throws -> R {
        if i == channels.count { return try body(pointers) }
        return try channels[i].withUnsafeBufferPointer { buf in
            pointers.append(buf.baseAddress! + offset)
            return try recurse(i + 1)
        }
    }
    return try recurse(0)
}

/// Reads a whole file with ``AudioFileReader`` into one array per channel.
func readAll(_ path: String, blockFrames: Int = 777) throws -> (channels: [[Float]], reader: AudioFileReader) {
    let reader = try AudioFileReader(path: path, blockFrames: blockFrames)
    var out = [[Float]](repeating: [], count: reader.channelCount)
    let buffers = (0..<reader.channelCount).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: blockFrames) }
    defer { buffers.forEach { $0.deallocate() } }
    while true {
        let got = try reader.read(into: buffers, frameCount: blockFrames)
        if got == 0 { break }
        for ch in 0..<reader.channelCount { out[ch] += UnsafeBufferPointer(start: buffers[ch], count: got) }
    }
    return (out, reader)
}

/// Integer samples of a file as libsndfile reads them (left-justified 32-bit), interleaved.
func readInts(_ path: String) -> [Int32] {
    var info = SF_INFO()
    guard let h = sf_open(path, Int32(SFM_READ), &info) else { return [] }
    defer { sf_close(h) }
    var out = [Int32](repeating: 0, count: Int(info.frames) * Int(info.channels))
    let got = out.withUnsafeMutableBufferPointer { sf_readf_int(h, $0.baseAddress, info.frames) }
    return Array(out.prefix(Int(got) * Int(info.channels)))
}

/// Writes interleaved floats with libsndfile itself, in any format it can write (for
/// testing reads of formats Tapedeck does not write). Returns false when it cannot.
@discardableResult
func writeWithSndfile(_ path: String, format: Int32, sampleRate: Int, channels: Int, interleaved: [Float]) -> Bool {
    var info = SF_INFO()
    info.samplerate = Int32(sampleRate)
    info.channels = Int32(channels)
    info.format = format
    guard sf_format_check(&info) == SF_TRUE, let h = sf_open(path, Int32(SFM_WRITE), &info) else { return false }
    // Integer formats: scale the way the reader unscales.
    sf_command(h, Int32(SFC_SET_NORM_FLOAT), nil, Int32(SF_TRUE))
    interleaved.withUnsafeBufferPointer { _ = sf_writef_float(h, $0.baseAddress, sf_count_t(interleaved.count / channels)) }
    return sf_close(h) == 0
}

/// Whether libsndfile here can write `format`.
func sndfileCanWrite(format: Int32, sampleRate: Int = 44100, channels: Int = 1) -> Bool {
    var info = SF_INFO()
    info.samplerate = Int32(sampleRate)
    info.channels = Int32(channels)
    info.format = format
    return sf_format_check(&info) == SF_TRUE
}

/// RMS of `x`.
func rms(_ x: ArraySlice<Float>) -> Double {
    guard !x.isEmpty else { return 0 }
    return (x.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(x.count)).squareRoot()
}

/// Frequency from zero crossings (upward), interpolated between samples.
func frequencyByZeroCrossings(_ x: ArraySlice<Float>, sampleRate: Int) -> Double {
    var crossings: [Double] = []
    var i = x.startIndex + 1
    while i < x.endIndex {
        let a = Double(x[i - 1]), b = Double(x[i])
        if a < 0 && b >= 0 { crossings.append(Double(i - 1) + (-a) / (b - a)) }
        i += 1
    }
    guard let first = crossings.first, let last = crossings.last, crossings.count > 1 else { return 0 }
    return Double(crossings.count - 1) / ((last - first) / Double(sampleRate))
}

/// The first bytes of a file.
func firstBytes(_ path: String, count: Int) -> [UInt8] {
    guard let f = fopen(path, "rb") else { return [] }
    defer { fclose(f) }
    var bytes = [UInt8](repeating: 0, count: count)
    let n = fread(&bytes, 1, count, f)
    return Array(bytes.prefix(n))
}

/// Writes raw bytes to a file.
func writeBytes(_ bytes: [UInt8], to path: String) {
    guard let f = fopen(path, "wb") else { return }
    _ = bytes.withUnsafeBufferPointer { fwrite($0.baseAddress, 1, bytes.count, f) }
    fclose(f)
}

/// Size of a file in bytes (-1 when missing).
func fileSize(_ path: String) -> Int64 {
    var st = stat()
    return stat(path, &st) == 0 ? Int64(st.st_size) : -1
}

/// Names in a folder, sorted.
func folderContents(_ path: String) -> [String] {
    guard let dir = opendir(path) else { return [] }
    defer { closedir(dir) }
    var names: [String] = []
    while let entry = readdir(dir) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
            String(cString: raw.bindMemory(to: CChar.self).baseAddress!)
        }
        if name != "." && name != ".." { names.append(name) }
    }
    return names.sorted()
}
