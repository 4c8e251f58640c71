import Foundation
import TapedeckIO
import TapedeckTakes

/// Where a long take is split into pieces (`record --split 1h`, `--split 2GB`).
public enum TakeSplit: Sendable, Equatable {
    /// A piece lasts this many seconds (at the session's rate).
    case seconds(Double)
    /// A piece's sample data never exceeds this many bytes.
    case bytes(Int64)

    /// The most sample data a split WAV piece may hold: a RIFF WAV's sizes are 32-bit, and
    /// a piece that grew past them would turn into RF64, which many programs do not read
    /// (the point of splitting). 1 MiB is left for the header and metadata chunks.
    public static let maximumPieceBytes: Int64 = (Int64(1) << 32) - (Int64(1) << 20)

    /// Whole frames in one piece of a take with `channels` channels of `encoding` at
    /// `sampleRate`: for a size, the most frames whose data fits (for FLAC an upper bound of
    /// what the piece holds, as compression only makes it smaller).
    public func framesPerPiece(sampleRate: Int, channels: Int, encoding: SampleEncoding) -> Int64 {
        switch self {
        case .seconds(let s):
            let frames = (s * Double(sampleRate)).rounded(.down)
            return frames < 0x1p62 ? max(1, Int64(frames)) : Int64(1) << 62
        case .bytes(let b):
            let bytesPerFrame = Int64(max(1, channels) * max(1, encoding.bits / 8))
            return max(1, min(b, TakeSplit.maximumPieceBytes) / bytesPerFrame)
        }
    }
}

/// How the pieces of a split take are named: the take's name with `-001`, `-002`, … before
/// its extension (`Vocal-take3-001.wav`), so the name says the piece and the pieces sort in
/// order. Every file of a piece (audio, peaks, marker) is named from the first piece's by
/// replacing its number.
public enum TakePieces {
    /// The tag the first piece's names carry.
    static let firstTag = "-001"

    /// `name` (a file name or path) for the first piece: `-001` before the extension.
    public static func firstPieceName(_ name: String) -> String {
        let slash = name.lastIndex(of: "/").map { name.index(after: $0) } ?? name.startIndex
        guard let dot = name[slash...].lastIndex(of: "."), dot > slash else { return name + firstTag }
        return String(name[..<dot]) + firstTag + String(name[dot...])
    }

    /// The name of piece `number` (1-based) from a name the first piece carries (its audio
    /// file, its peak file `X-001.wav.peak`, its marker's file): the last `-001.` becomes the
    /// piece's number. A name without the tag gets the number appended (never the same name
    /// twice).
    public static func name(_ firstPieceName: String, piece number: Int) -> String {
        let tag = String(format: "-%03d", number)
        guard let r = firstPieceName.range(of: firstTag + ".", options: .backwards) else { return firstPieceName + tag }
        return firstPieceName.replacingCharacters(in: r, with: tag + ".")
    }
}

extension TakeLane {
    /// The take frame where the piece being written ends (nil: the take is not split). Disk thread.
    var pieceEndFrame: Int64? { request.splitFrames.map { pieceStartFrame + $0 } }

    /// Frames the take's files hold: the closed pieces and the one being written. Disk
    /// thread, or the control thread once the lane is no longer drained.
    var framesInFiles: Int64 { pieceStartFrame + writer.framesWritten }

    /// Finishes the piece being written (final header, synced to the disk) and starts the
    /// next one, with its own crash marker written first, so a crash at any moment leaves
    /// every piece either finished or marked. The finished piece keeps its marker until the
    /// take is placed (the caller removes the markers then), so `recover` places whichever
    /// pieces a crash leaves. Disk thread: never on the audio thread (it opens files).
    func startNextPiece() throws {
        guard let pieceFrames = request.splitFrames else { return }
        let old = writer
        try old.close()
        // The header is final once closed; the sync makes it so on the disk before the next
        // piece exists (a power cut then finds a whole previous piece).
        let fd = open(old.path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        if fd >= 0 { fsync(fd); close(fd) }
        let number = pieceIndex + 2
        let path = TakePieces.name(request.path, piece: number)
        let start = pieceStartFrame + pieceFrames
        if var marker = request.marker {
            marker.file = TakePieces.name(marker.file, piece: number)
            marker.timelineStartFrame += start
            try marker.write(forAudio: path)
        }
        var metadata = request.metadata
        metadata?.timelineFrame += start
        if let t = metadata?.timeReference { metadata?.timeReference = t + start }
        do {
            let next = try AudioFileWriter(path: path, format: old.format, peakPath: request.peakPath.map { TakePieces.name($0, piece: number) },
                                           metadata: metadata)
            next.updateHeader()
            writer = next
        } catch {
            if request.marker != nil { TakeMarker.remove(forAudio: path) }
            throw error
        }
        pieceIndex += 1
        pieceStartFrame = start
    }
}
