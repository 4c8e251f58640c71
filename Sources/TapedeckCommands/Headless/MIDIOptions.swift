import TapedeckCore
import TapedeckTransport

/// The MIDI flags shared by the screen, `record` and `play`: `--midi-in`, `--midi-out`,
/// `--midi-surface`, `--midi-xt`.
struct MIDIOptions {
    /// What the transport opens.
    var setup = MIDISetup()

    /// Reads the flags. Without `--midi-in` the ALSA sequencer is connected from every hardware
    /// port (quietly off where there is no sequencer).
    init(arguments: inout Arguments) throws(UsageError) {
        let inputs = try arguments.options("--midi-in")
        setup.inputs = inputs.isEmpty ? [.alsaHardware] : []
        for text in inputs {
            let lower = text.lowercased()
            if lower == "none" || lower == "off" {
                guard inputs.count == 1 else { throw UsageError("\(arguments.command): --midi-in none cannot be combined with other inputs") }
                setup.inputs = []
            } else if lower == "alsa" {
                setup.inputs.append(.alsaHardware)
            } else if lower == "jack" {
                setup.inputs.append(.jack(""))
            } else if lower.hasPrefix("jack:") {
                let port = String(text.dropFirst(5))
                guard !port.isEmpty else { throw UsageError("\(arguments.command): --midi-in jack: needs a JACK port (jack:CLIENT:PORT)") }
                setup.inputs.append(.jack(port))
            } else if lower.hasPrefix("alsa:") {
                let port = String(text.dropFirst(5))
                guard !port.isEmpty else { throw UsageError("\(arguments.command): --midi-in alsa: needs a sequencer port (alsa:20:0)") }
                setup.inputs.append(.alsa(port))
            } else if text.isEmpty {
                throw UsageError("\(arguments.command): --midi-in needs a port (20:0, a client's name, jack:CLIENT:PORT, or none)")
            } else {
                setup.inputs.append(.alsa(text))
            }
        }
        for text in try arguments.options("--midi-out") {
            let port = text.lowercased().hasPrefix("jack:") ? String(text.dropFirst(5)) : text
            guard !port.isEmpty else { throw UsageError("\(arguments.command): --midi-out needs a JACK port (jack:CLIENT:PORT)") }
            setup.jackOutputs.append(port)
        }
        if let text = try arguments.option("--midi-surface") {
            guard let surface = ControlSurface(rawValue: text.lowercased()) else {
                throw UsageError("\(arguments.command): --midi-surface '\(text)' must be off, mackie, cc or mcu")
            }
            setup.surface = surface
        }
        for text in try arguments.options("--midi-xt") {
            guard setup.surface == .mcu else { throw UsageError("\(arguments.command): --midi-xt needs --midi-surface mcu (an XT extends a Mackie Control)") }
            setup.extenders.append(try Self.extender(text, command: arguments.command))
        }
    }

    /// One `--midi-xt`: `jack` (a JACK pair connected by hand), `jack:IN[,OUT]` (the XT's
    /// JACK ports: what it sends, what it hears), or an ALSA sequencer port (`20:0`,
    /// `alsa:NAME`), heard from and answered to.
    static func extender(_ text: String, command: String) throws(UsageError) -> MIDISetup.SurfaceExtender {
        let lower = text.lowercased()
        if lower == "jack" { return .jack(source: "", destination: "") }
        if lower.hasPrefix("jack:") {
            let parts = text.dropFirst(5).split(separator: ",", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            let source = parts[0], destination = parts.count > 1 ? (parts[1].lowercased().hasPrefix("jack:") ? String(parts[1].dropFirst(5)) : parts[1]) : ""
            // One XT per option: a third port (`jack:A,jack:B,jack:C`) is a mistake, not a port name.
            guard !source.isEmpty, parts.count == 1 || !destination.isEmpty, !destination.contains(",") else {
                throw UsageError("\(command): --midi-xt jack: needs the XT's JACK ports (jack:CLIENT:PORT, or jack:IN,OUT)")
            }
            return .jack(source: source, destination: destination)
        }
        let port = lower.hasPrefix("alsa:") ? String(text.dropFirst(5)) : text
        guard !port.isEmpty else { throw UsageError("\(command): --midi-xt needs a port (20:0, a client's name, jack, or jack:IN,OUT)") }
        return .alsa(port)
    }
}
