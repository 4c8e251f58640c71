import Synchronization
import TapedeckIO
import TapedeckRemote
import TapedeckUI

/// An import handed to the screen (`tapedeck import S long.wav` while the screen has S open):
/// its audio files are copied on a worker thread (the slow part: reading, resampling,
/// writing, peak files) while the screen keeps drawing, playing and answering; then the
/// import command itself runs on the UI thread as it always did — its checks, the tracks,
/// the one undo step, the save — placing what the worker copied instead of copying again.
enum ImportInBackground {
    /// The slow part of `typed` when it is an import of audio files; nil for any other
    /// command, an import of MIDI files only, or a value that does not decode (each runs at
    /// once, as before, and says what it says).
    static func work(_ typed: TypedCommand, sampleRate: Int) -> ScreenWork? {
        guard typed.name == ImportCommand.name, case .success(let decoded) = OwnerForwarding.decode(typed),
              let command = decoded as? ImportCommand else { return nil }
        let audio = command.files.filter { !ImportCommand.isMIDI($0) }
        guard !audio.isEmpty else { return nil }
        let folder = command.folder
        let copied = CopiedImports()
        let names = audio.map { $0.split(separator: "/").last.map(String.init) ?? $0 }
        return ScreenWork(
            label: "importing \(names.count == 1 ? names[0] : "\(names.count) files")".terminalSafe,
            work: { progress, cancelled in
                // Every file is looked at before any is copied, as the command does: a typo in
                // the last name costs no copy (the command, landing, then refuses it in its
                // own words).
                for file in audio {
                    if RegularFile.refusal(path: file) != nil { return }
                    guard let reader = try? AudioFileReader(path: file, blockFrames: 16) else { return }
                    reader.close()
                }
                for (k, file) in audio.enumerated() {
                    let imported = try AudioImporter.importTracks(
                        source: file, destinationFolder: folder.audioFolder, peaksFolder: folder.peaksFolder,
                        sessionSampleRate: sampleRate,
                        progress: { progress((Double(k) + $0) / Double(audio.count)) }, cancelled: cancelled)
                    copied.add(imported, source: file)
                }
            },
            land: { served in
                MainActor.assumeIsolated {
                    // Copied and not placed (the command refused): nothing plays them.
                    defer { copied.removeRest(from: folder) }
                    return OwnerForwarding.run(typed, served: served, importCopies: copied)
                }
            },
            discard: { copied.removeRest(from: folder) })
    }
}

/// Files a worker copied for an import, by source path, until the import places them.
final class CopiedImports: Sendable {
    private let bySource = Mutex<[String: [ImportedTracks]]>([:])

    /// Keeps `imported`, the copy of `source`.
    func add(_ imported: ImportedTracks, source: String) {
        bySource.withLock { $0[source, default: []].append(imported) }
    }

    /// The copy of `source`, taken (each once, in the order made).
    func take(_ source: String) -> ImportedTracks? {
        bySource.withLock { map in
            guard var list = map[source], !list.isEmpty else { return nil }
            let first = list.removeFirst()
            map[source] = list
            return first
        }
    }

    /// Removes every copy not taken from `folder`.
    func removeRest(from folder: SessionFolder) {
        let rest = bySource.withLock { map in
            defer { map = [:] }
            return map.values.flatMap { $0 }
        }
        for imported in rest { imported.removeFiles(from: folder) }
    }
}
