import Foundation
import TapedeckCore
import TapedeckEngine
import TapedeckTakes

extension Transport {
    /// The finished pieces of a split take: one plain region per piece, back to back from
    /// the take's record point (piece k at start + k·N), so the track plays them as one
    /// take without a gap. Each keeps its own crash marker until it is placed. Only plain
    /// takes at 1× are split (``RecordRequest/split``), so no piece is cut or scaled.
    func pieces(of take: RecordingPass.Take, marker: TakeMarker, frames: Int64, pieceFrames: Int64, count: Int) -> [FinishedTake] {
        let file = take.relativeFile ?? take.path
        var out: [FinishedTake] = []
        // What the pieces hold: whole pieces, the last one what is left. (`count` is what the
        // writer opened; a take that stopped on a boundary opened no empty piece.)
        let pieces = min(count, Int((frames + pieceFrames - 1) / pieceFrames))
        for k in 0..<max(pieces, 0) {
            let start = Int64(k) * pieceFrames
            let length = min(pieceFrames, frames - start)
            guard length > 0 else { break }
            var m = marker
            m.file = TakePieces.name(file, piece: k + 1)
            m.timelineStartFrame = marker.timelineStartFrame + start
            guard let region = m.regions(fileFrames: length, file: m.file).first else { continue }
            let path = TakePieces.name(take.path, piece: k + 1)
            out.append(FinishedTake(trackIndex: take.track, trackName: take.trackName, region: region,
                                    markerPath: TakeMarker.sidecarPath(forAudio: path), placement: .plain))
        }
        return out
    }
}
