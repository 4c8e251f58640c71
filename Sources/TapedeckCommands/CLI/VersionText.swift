import CALSA
import CBuildInfo
import CEbur128
import CRubberBand
import CSampleRate
import CSndfile
import Foundation

/// `tapedeck --version`: Tapedeck's version and commit, and the C libraries it runs with (as
/// loaded now, not as built against, where the library can say).
enum VersionText {
    /// The commit embedded at build time ("unknown" without git or outside `make`).
    static var commit: String { String(cString: td_build_commit()) }

    static func text() -> String {
        var major: Int32 = 0, minor: Int32 = 0, patch: Int32 = 0
        ebur128_get_version(&major, &minor, &patch)
        return """
        tapedeck \(HelpText.version) (commit \(commit))
        ALSA \(String(cString: snd_asoundlib_version()))
        libsndfile \(String(cString: sf_version_string()).replacingOccurrences(of: "libsndfile-", with: ""))
        Rubber Band \(rubberBandVersion())
        libsamplerate \(firstWord(String(cString: src_get_version()).replacingOccurrences(of: "libsamplerate-", with: "")))
        libebur128 \(major).\(minor).\(patch)
        """
    }

    /// `0.2.2` of `0.2.2 (c) 2002-2008 …`.
    private static func firstWord(_ text: String) -> String {
        text.split(separator: " ").first.map(String.init) ?? text
    }

    /// Rubber Band's C API has no run-time version call, so this names the shared object
    /// actually mapped into this process (its file name carries the library's ABI version)
    /// beside the header version the binary was built against.
    private static func rubberBandVersion() -> String {
        let built = "\(RUBBERBAND_VERSION) (built with"
        // /proc files report a size of 0, so read to the end rather than by size.
        guard let data = try? FileHandle(forReadingFrom: URL(fileURLWithPath: "/proc/self/maps")).readToEnd(),
              let maps = String(data: data, encoding: .utf8),
              let line = maps.split(separator: "\n").first(where: { $0.contains("librubberband") }),
              let path = line.split(separator: " ").last else { return built + ")" }
        let real = (try? FileManager.default.destinationOfSymbolicLink(atPath: String(path))) ?? String(path)
        return built + "; loaded \(real.split(separator: "/").last.map(String.init) ?? real))"
    }
}
