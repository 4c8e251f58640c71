import TapedeckDSP

/// `--speed`, `--mode` and `--pitch`, shared by `play` and `export`.
enum TimePitchOptions {
    /// Reads the three options; anything out of range is one clear usage error.
    static func parse(_ arguments: inout Arguments) throws(UsageError) -> TimePitchSettings {
        var settings = TimePitchSettings.normal
        if let text = try arguments.option("--speed") {
            guard let speed = TimePitchSettings.parseSpeed(text) else {
                throw UsageError("\(arguments.command): --speed '\(text)' is not a speed (examples: 0.5, 1/2, 50%, 2x)")
            }
            if let problem = TimePitchSettings.speedProblem(speed) {
                throw UsageError("\(arguments.command): --speed '\(text)': \(problem)")
            }
            settings.speed = speed
        }
        if let text = try arguments.option("--mode") {
            // Any unambiguous start of a mode's name, so `vari` (what the screen shows) works.
            let lower = text.lowercased()
            let matches = TimePitchMode.allCases.filter { !lower.isEmpty && $0.rawValue.hasPrefix(lower) }
            guard matches.count == 1, let mode = matches.first else {
                throw UsageError("\(arguments.command): --mode '\(text)' must be stretch or varispeed (or vari)")
            }
            settings.mode = mode
        }
        if let text = try arguments.option("--pitch") {
            guard let semitones = Double(text) else {
                throw UsageError("\(arguments.command): --pitch '\(text)' must be a number of semitones (e.g. -2, 0.5)")
            }
            if let problem = TimePitchSettings.pitchProblem(semitones) {
                throw UsageError("\(arguments.command): --pitch '\(text)': \(problem)")
            }
            settings.pitchSemitones = semitones
        }
        return settings
    }
}
