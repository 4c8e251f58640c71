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
        let since1970 = date.timeIntervalSince1970.rounded(.down)
        // (A date no calendar field can hold — a file's stamp from nowhere — is no time.)
        guard since1970.isFinite, abs(since1970) < 1e15 else { return "" }
        var seconds = time_t(since1970)
        var fields = tm()
        tzset()
        guard localtime_r(&seconds, &fields) != nil else { return "" }
        var buffer = [CChar](repeating: 0, count: 64)
        let length = strftime(&buffer, buffer.count, format, &fields)
        return length == 0 ? "" : String(cString: buffer)
    }
}
