import TapedeckEngine
import TapedeckDevices
#if canImport(Glibc)
import Glibc
#endif

/// `tapedeck devices`: every PCM that can capture or play, with channels and rates.
struct DevicesCommand: Command {
    static let spec = CommandSpec(
        name: "devices", summary: "list audio devices that can record or play",
        synopsis: ["devices [--all]", "devices --midi"],
        options: [OptionSpec(flag: "--all", "also list PCMs that could not be opened, with the reason"),
                  OptionSpec(flag: "--midi", "list MIDI inputs instead: ALSA sequencer ports and JACK MIDI ports")],
        details: """
        Lists hardware devices (hw:C,D and plughw:C,D), default, and every PCM the ALSA
        configuration names, with the channels and rates ALSA reports. Pass a name to --device.
        --midi lists what --midi-in takes: the ALSA sequencer's ports that send MIDI (hardware
        ones are connected by default) and, when a JACK server runs, its MIDI output ports.

        Environment: TAPEDECK_ALSA_CONFIG=FILE lists that config's PCMs instead of the system's.
        """)

    var all: Bool
    var midi: Bool

    init(arguments: inout Arguments) throws {
        all = arguments.flag("--all")
        midi = arguments.flag("--midi")
        if all && midi { throw UsageError("devices: --all lists audio devices; --midi lists MIDI ports (one or the other)") }
    }

    func run(_ context: CommandContext) throws -> Int32 {
        if midi { return listMIDI() }
        // Probing a JACK PCM must not start a JACK server as a side effect.
        setenv("JACK_NO_START_SERVER", "1", 0)
        let config = try ALSAConfig.fromEnvironment()
        // Plugins (JACK, PulseAudio) print their connection failures on stderr while probing;
        // the reasons are shown by --all instead.
        let devices = withStderrSilenced { DeviceCatalog.list(config: config) }
        var shown = 0
        for d in devices {
            let usable = d.capture != nil || d.playback != nil
            guard usable || all else { continue }
            shown += 1
            var line = d.name
            if !d.description.isEmpty { line += "  — \(d.description)" }
            Terminal.out(line)
            if let c = d.capture { Terminal.out("    capture:  \(range(c.channels)) ch, \(range(c.rates)) Hz") }
            if let p = d.playback { Terminal.out("    playback: \(range(p.channels)) ch, \(range(p.rates)) Hz") }
            if let note = d.note, !usable { Terminal.out("    unavailable: \(note)") }
        }
        if shown == 0 {
            Terminal.out("no audio devices can be opened (see 'tapedeck devices --all' for the reasons)")
        }
        return ExitCode.ok
    }

    /// The MIDI ports `--midi-in` can name.
    private func listMIDI() -> Int32 {
        setenv("JACK_NO_START_SERVER", "1", 0)
        do {
            let sources = try ALSASequencerInput.sources()
            if sources.isEmpty { Terminal.out("ALSA sequencer: no port sends MIDI") }
            for s in sources {
                Terminal.out("\(s.address)  \(s.clientName): \(s.portName)\(s.isHardware ? "  (hardware: connected by default)" : "")")
            }
        } catch {
            Terminal.out("ALSA sequencer: \(error)")
        }
        if let ports = JACKMIDIPorts.sourcePorts() {
            if ports.isEmpty { Terminal.out("JACK: no MIDI output ports") }
            for p in ports { Terminal.out("jack:\(p)") }
        } else {
            Terminal.out("JACK: no server running")
        }
        return ExitCode.ok
    }

    private func range(_ r: ClosedRange<Int>) -> String {
        r.lowerBound == r.upperBound ? "\(r.lowerBound)" : "\(r.lowerBound)–\(r.upperBound)"
    }
}
