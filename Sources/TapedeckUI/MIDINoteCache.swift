import TapedeckCore
import TapedeckIO

/// The notes of MIDI regions' files, read once each, for the timeline's note view. MIDI files
/// never change under a name (quantising writes a new file; a take is read once placed), so a
/// file is read once. UI thread.
public final class MIDINoteCache {
    /// One file's notes and the span of pitches they use.
    public struct Notes {
        /// Sorted by start frame (file frames).
        public var notes: [MIDISequence.Note]
        /// Lowest and highest pitch played.
        public var lowest: UInt8
        public var highest: UInt8
        /// The longest note, to find every note sounding at a frame without scanning them all.
        public var longest: Int64
    }

    private let folder: SessionFolder?
    private var files: [String: Notes] = [:]
    private var failed: Set<String> = []

    /// A cache for files relative to `folder` (nil: an untitled session, no files).
    public init(folder: SessionFolder?) { self.folder = folder }

    /// The notes of a region's file (as the session names it), or nil when it cannot be read.
    public func notes(forRegionFile file: String, sampleRate: Int) -> Notes? {
        if let n = files[file] { return n }
        guard !failed.contains(file), let folder else { return nil }
        guard let sequence = try? MIDIRegionFile.read(path: folder.absolutePath(of: file), sampleRate: sampleRate) else {
            failed.insert(file)
            return nil
        }
        let notes = sequence.notes
        let n = Notes(notes: notes, lowest: notes.map(\.pitch).min() ?? 60, highest: notes.map(\.pitch).max() ?? 60,
                      longest: notes.map { $0.endFrame - $0.startFrame }.max() ?? 0)
        files[file] = n
        return n
    }

    /// Which of `slots` pitch bands (the region's lowest pitch in band 0) have a note sounding
    /// in the region's file frames `[from, to)`, as bits; 0 when none or unreadable.
    public func bands(_ region: Region, from: Int64, to: Int64, slots: Int, sampleRate: Int) -> UInt64 {
        guard region.isMIDI, let n = notes(forRegionFile: region.file, sampleRate: sampleRate), !n.notes.isEmpty else { return 0 }
        let lo = max(from, region.sourceOffsetFrame), hi = min(to, region.sourceOffsetFrame + region.lengthFrames)
        guard hi > lo else { return 0 }
        // The first note that could still sound at `lo`.
        var a = 0, b = n.notes.count
        while a < b {
            let m = (a + b) / 2
            if n.notes[m].startFrame < lo - n.longest { a = m + 1 } else { b = m }
        }
        let span = Int(n.highest) - Int(n.lowest) + 1
        var bits: UInt64 = 0
        var i = a
        while i < n.notes.count && n.notes[i].startFrame < hi {
            let note = n.notes[i]
            if note.endFrame > lo {
                let band = min(slots - 1, (Int(note.pitch) - Int(n.lowest)) * slots / max(span, 1))
                bits |= 1 << UInt64(band)
            }
            i += 1
        }
        return bits
    }
}
