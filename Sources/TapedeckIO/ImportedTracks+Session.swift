import TapedeckCore
#if canImport(Glibc)
import Glibc
#endif

/// How an import becomes tracks, the same for every front-end (`tapedeck import`, the screen).
extension ImportedTracks {
    /// The tracks this import makes, each playing its file from `startFrame` in the session's
    /// `audio/` folder. A mono or stereo source: one track called `name`, listening to as many
    /// input channels as it has. A wider source: a mono track per channel, `NAME L`, `NAME R`,
    /// `NAME C`, … (`NAME 1`, `NAME 2`, … when the file names no positions), all at the same
    /// time, each panned where its channel sits (left channels hard left, right hard right,
    /// centre, LFE and unplaced channels centred), faders at 0 dB: every channel is heard.
    public func tracks(named name: String, at startFrame: Int64) -> [Track] {
        files.map { file in
            let region = Region(file: "audio/" + file.fileName, timelineStartFrame: startFrame, lengthFrames: file.frameCount)
            guard let channel = file.channelName else {
                return Track(name: name, inputChannels: Array(1...max(1, min(file.channelCount, 2))), regions: [region])
            }
            return Track(name: "\(name) \(channel)", pan: file.channelPan ?? 0, regions: [region])
        }
    }

    /// What the import's line says of the channels: `2 ch`, or for a split source
    /// `6 ch → 6 mono tracks: L R C LFE Ls Rs` (`… : 1 2 3 4 5 6, centred (the file names no
    /// channel positions)`).
    public var channelText: String {
        guard isSplit else { return "\(layout.channelCount) ch" }
        let placement = layout.positions == nil ? ", centred (the file names no channel positions)" : ", panned by position"
        return "\(layout.channelCount) ch → \(files.count) mono tracks: \(layout.summary)\(placement)"
    }

    /// Removes the files this import wrote into `folder` (and their peak files): for an
    /// import whose edit or save was refused, so nothing is left that no region plays.
    public func removeFiles(from folder: SessionFolder) {
        for file in files {
            unlink(folder.audioFolder + "/" + file.fileName)
            unlink(folder.peakPath(forAudio: file.fileName))
        }
    }
}
