import Foundation
import TapedeckCore

/// Podcast chapters from an export's markers (`export --chapters FILE`), in the two forms
/// podcast hosts and tools take beside the audio:
/// - `.json`: the Podcasting 2.0 JSON chapters format (`podcast:chapters`, version 1.2.0):
///   `{"version":"1.2.0","chapters":[{"startTime":0,"title":"Intro"},…]}`, start times in
///   seconds from the file's first frame;
/// - `.txt`: one `HH:MM:SS.mmm Title` line per chapter, what chapter tools (mp4chaps, video
///   sites' description chapters) read.
public enum PodcastChapters {
    /// The forms, by the file's extension.
    public enum Format: Sendable { case json, text }

    /// The form a chapters file named `path` takes, or nil for another extension.
    public static func format(forPath path: String) -> Format? {
        switch (path as NSString).pathExtension.lowercased() {
        case "json": return .json
        case "txt": return .text
        default: return nil
        }
    }

    /// The file's text for `cues` (frames at `sampleRate`, from the audio's first frame).
    public static func text(_ cues: [CuePoint], sampleRate: Int, format: Format) -> String {
        let rate = Double(max(sampleRate, 1))
        switch format {
        case .json:
            let chapters: [[String: Any]] = cues.map { cue in
                // Milliseconds are what players resolve; more digits only look like precision.
                ["startTime": (Double(cue.frame) / rate * 1000).rounded() / 1000, "title": cue.name]
            }
            let object: [String: Any] = ["version": "1.2.0", "chapters": chapters]
            let data = (try? JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])) ?? Data()
            return SafeText.jsonSafe(String(decoding: data, as: UTF8.self)) + "\n"
        case .text:
            return cues.map { cue in
                let ms = Int64((Double(cue.frame) / rate * 1000).rounded())
                // A name is data: a line break or a terminal escape in it is written escaped
                // (as everywhere Tapedeck prints a name), never raw into a file people `cat`.
                let title = cue.name.terminalSafe
                return String(format: "%02lld:%02lld:%02lld.%03lld ", ms / 3_600_000, ms / 60_000 % 60, ms / 1000 % 60, ms % 1000) + title
            }.map { $0 + "\n" }.joined()
        }
    }

    /// Writes `cues` to `path` in the form its extension names, replacing a file there
    /// atomically through ``WriteGuard`` (never over what `sessions` or any other session owns).
    public static func write(_ cues: [CuePoint], sampleRate: Int, to path: String, sessions: [ProtectedSession] = []) throws {
        guard let format = format(forPath: path) else {
            throw AudioFileError(path: path, reason: "chapters are written as .json (Podcasting 2.0) or .txt")
        }
        try WriteGuard.write(Array(text(cues, sampleRate: sampleRate, format: format).utf8), to: path,
                             as: "export: --chapters", sessions: sessions)
    }
}
