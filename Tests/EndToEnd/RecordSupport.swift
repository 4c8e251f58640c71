import Foundation
import XCTest
import TapedeckIO

/// Shared helpers for the record/play end-to-end tests: raw inputs for `filetap`, reading
/// takes back as integers, the ALSA test config in the environment.
enum RecordSupport {
    /// The environment every device test runs with: the private ALSA config.
    static var environment: [String: String] { ["TAPEDECK_ALSA_CONFIG": Tapedeck.alsaTestConfig] }

    /// Deterministic pseudo-random `bits`-deep integers, `frames × channels` of them.
    static func signal(frames: Int, channels: Int, bits: Int, seed: UInt64 = 1) -> [Int32] {
        var state = seed &* 0x9E3779B97F4A7C15
        let limit = Int64(1) << (bits - 1)
        return (0..<(frames * channels)).map { _ in
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Int32(Int64(state >> 33) % (2 * limit) - limit)
        }
    }

    /// Writes `values` as raw little-endian S16 (bits 16) or S24_LE in 4 bytes (bits 24).
    static func writeRaw(_ values: [Int32], bits: Int, to path: String) {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(values.count * 4)
        for v in values {
            if bits == 16 { withUnsafeBytes(of: Int16(v).littleEndian) { bytes += $0 } } else { withUnsafeBytes(of: v.littleEndian) { bytes += $0 } }
        }
        FileManager.default.createFile(atPath: path, contents: Data(bytes))
    }

    /// Reads a take as interleaved integers at `bits` depth.
    static func readInts(_ path: String, bits: Int) throws -> (values: [Int32], channels: Int, frames: Int) {
        let reader = try AudioFileReader(path: path)
        let c = reader.channelCount
        let bufs = (0..<c).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: 4096) }
        defer { bufs.forEach { $0.deallocate() } }
        let scale = Float(Int64(1) << (bits - 1))
        var out: [Int32] = []
        while true {
            let n = try reader.read(into: bufs, frameCount: 4096)
            if n == 0 { break }
            for i in 0..<n { for ch in 0..<c { out.append(Int32((bufs[ch][i] * scale).rounded())) } }
        }
        return (out, c, out.count / max(c, 1))
    }

    /// Every JSON line of `text`.
    static func jsonLines(_ text: String) -> [[String: Any]] {
        text.split(separator: "\n").compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
        }
    }
}

