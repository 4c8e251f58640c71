import Foundation
import TapedeckEngine
import TapedeckUI

/// `--threads N` for `record`, `play` and the screen (or the config's `threads = N`): the
/// threads that render each period (the device's own and N − 1 workers); one per core when
/// neither says. `export` has its own `--threads`.
enum RenderThreadsOption {
    static let range = 1...64
    static let spec = OptionSpec("--threads", value: "N",
                                 "threads rendering each period, 1...64 (default: one per core; 1: the device's thread alone; config: 'threads = N')")

    /// The count `--threads` gives, else the config's line, else nil (one per core). A value
    /// out of range is refused in one line naming where it came from.
    static func parse(_ arguments: inout Arguments, command: String) throws(UsageError) -> Int? {
        if let given = try arguments.intOption("--threads", in: range) { return given }
        let config = ScreenConfig(environment: ProcessInfo.processInfo.environment, bundledThemes: [])
        guard let text = config.configuredValue("threads") else { return nil }
        guard let n = Int(text), range.contains(n) else {
            throw UsageError("\(config.configPath.terminalSafe) ('threads = …'): '\(text.terminalSafe)' must be a whole number in \(range.lowerBound)...\(range.upperBound)")
        }
        return n
    }
}
