import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The local time of day as files and takes record it ("2026-12-07 19:44:05" in `bext`,
/// "20261207-194405" in a take's name), by `strftime`.
///
/// Why not `DateFormatter`: a command's first one costs about a millisecond (it loads the
/// locale data), about 1 % of a W8 export's whole run, for digits that never depend on a
/// locale. The same fields and the same time zone (`TZ`, else `/etc/localtime`).
public enum LocalTimestamp {
    /// `date` (now, unless given) in the local time zone, formatted by `strftime` with
    /// `format` (numeric fields only, such as `%Y-%m-%d %H:%M:%S`).
    public static func string(_ format: String, at date: Date = Date()) -> String {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var fields = tm()
        tzset()
        guard localtime_r(&seconds, &fields) != nil else { return "" }
        var buffer = [CChar](repeating: 0, count: 64)
        let length = strftime(&buffer, buffer.count, format, &fields)
        return length == 0 ? "" : String(cString: buffer)
    }
}
