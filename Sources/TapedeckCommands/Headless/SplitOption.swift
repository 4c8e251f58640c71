import Foundation
import TapedeckIO
import TapedeckEngine

/// `record --split 1h | 30m | 90s | 2GB`: where a long take is split into pieces. Refused
/// in one line when it makes no sense: no size, no unit, more than a WAV piece holds, or a
/// piece shorter than a second.
enum SplitOption {
    /// Sizes are binary (1GB = 2^30 bytes), as disks and field recorders count a 4 GB split.
    private static let units: [(suffix: String, seconds: Double?, bytes: Double?)] = [
        ("ms", 0.001, nil), ("h", 3600, nil), ("min", 60, nil), ("m", 60, nil), ("s", 1, nil),
        ("tb", nil, 0x1p40), ("gb", nil, 0x1p30), ("mb", nil, 0x1p20), ("kb", nil, 0x1p10), ("b", nil, 1),
    ]

    /// Parses the option's text.
    static func parse(_ text: String, command: String = "record") throws(UsageError) -> TakeSplit {
        let lower = text.lowercased().trimmingCharacters(in: .whitespaces)
        let help = "give a length (1h, 30m, 90s) or a size (2GB, 500MB)"
        if let bare = Double(lower), !(bare > 0) { throw UsageError("\(command): --split '\(text)': a piece must be longer than 0; \(help)") }
        guard let unit = units.first(where: { lower.hasSuffix($0.suffix) }),
              let number = Double(lower.dropLast(unit.suffix.count).trimmingCharacters(in: .whitespaces)), number.isFinite else {
            throw UsageError("\(command): --split '\(text)': \(help)")
        }
        guard number > 0 else { throw UsageError("\(command): --split '\(text)': a piece must be longer than 0; \(help)") }
        if let perUnit = unit.seconds {
            let seconds = number * perUnit
            guard seconds >= 1 else { throw UsageError("\(command): --split '\(text)': a piece must last at least 1 second") }
            // Past a year the number means nothing (and is kept away from overflowing frames).
            guard seconds <= 366 * 86400 else { throw UsageError("\(command): --split '\(text)': a piece of more than a year is no split") }
            return .seconds(seconds)
        }
        let bytes = number * (unit.bytes ?? 1)
        guard bytes <= Double(Int64(1) << 32) else {
            throw UsageError("\(command): --split '\(text)': a WAV piece holds at most 4GB (the point of splitting is files every program reads)")
        }
        return .bytes(Int64(bytes))
    }

    /// Refuses a file take (`--out`) whose pieces' names are taken: a piece is never written
    /// over, so a later piece finding its name taken would stop the take mid-way. Checked
    /// before anything records.
    static func checkFree(out: String) throws(UsageError) {
        let first = TakePieces.firstPieceName(out)
        let folder = first.lastIndex(of: "/").map { String(first[..<$0]) } ?? "."
        let name = first.split(separator: "/").last.map(String.init) ?? first
        guard let tag = name.range(of: "-001", options: .backwards) else { return }
        let stem = name[..<tag.lowerBound] + "-", ext = name[tag.upperBound...]
        let taken = ((try? FileManager.default.contentsOfDirectory(atPath: folder.isEmpty ? "/" : folder)) ?? []).filter { file in
            guard file.hasPrefix(stem), file.hasSuffix(ext) else { return false }
            let number = file.dropFirst(stem.count).dropLast(ext.count)
            return number.count >= 3 && number.allSatisfy(\.isASCII) && number.allSatisfy(\.isNumber)
        }
        if let file = taken.sorted().first {
            throw UsageError("record: --split: \(file) is already there (a piece is never written over; give another --out)")
        }
    }

    /// Refuses a split whose pieces would be shorter than a second for any take recorded:
    /// a size counts frames by the take's channels and sample depth.
    static func check(_ split: TakeSplit, text: String, sampleRate: Int, channelCounts: [Int], encoding: SampleEncoding) throws(UsageError) {
        for channels in Set(channelCounts) {
            let frames = split.framesPerPiece(sampleRate: sampleRate, channels: channels, encoding: encoding)
            if frames < Int64(sampleRate) {
                throw UsageError("record: --split '\(text)': a piece would hold \(frames) frames, less than 1 second at \(sampleRate) Hz")
            }
        }
    }
}
