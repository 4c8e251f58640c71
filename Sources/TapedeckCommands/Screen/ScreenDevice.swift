import TapedeckCore
import TapedeckEngine
import TapedeckTransport
import TapedeckDevices

/// How the screen reaches sound devices: the PCM name, the ALSA configuration
/// (`TAPEDECK_ALSA_CONFIG` or the global one) and the period shape. UI thread.
///
/// The screen opens its device once, at startup, for playback and for as many inputs as its
/// armed tracks use, and keeps it open (meters listen, the transport never reopens it); it
/// opens another only when the user picks one in the device chooser.
final class ScreenDevice: DeviceProvider {
    /// The private ALSA configuration, or nil for the system's.
    let config: ALSAConfig?
    /// Frames per period: small enough for tight meters, large enough for a busy machine.
    var periodFrames = 256
    /// Periods in the device buffer.
    var periodCount = 3
    /// Inputs to open: the most any track of the session listens to (at least a pair).
    var inputsWanted = 2
    /// Outputs to open, asked at each open: the highest device output the routing names (a
    /// cue mix on out:3-4 needs four), at least a pair. A device with fewer opens with two.
    var outputsWanted: () -> Int = { 2 }
    /// Why the last open could not capture (the device was opened for playback only).
    private(set) var captureProblem: String?
    /// How a JACK client connects and follows the transport (`--connect`, `--timebase`,
    /// `--jack-transport`).
    var jack = JACKOptions()
    /// The tracks a JACK client's inputs are named after: (name, 1-based device channels).
    var portTracks: [(name: String, channels: [Int])] = []
    /// The tempo map a JACK client publishes as timebase master.
    var tempoMap: TempoMap?

    /// The name `--device` takes to ask for the offline transport on purpose.
    static let offlineName = "offline"

    init(config: ALSAConfig?) { self.config = config }

    /// The device outputs `session`'s routing names, at least 2.
    static func outputs(for session: Session) -> Int {
        session.tracks.compactMap { track -> Int? in
            if case .device(let channels) = track.output { return channels.max() }
            return nil
        }.reduce(2, max)
    }

    /// Opens `name` for playback and `inputsWanted` inputs (fewer, then none, when the device
    /// has fewer) at `sampleRate`. libasound prints its own lines on a failed open; they
    /// would scribble over the screen, and the error thrown says the same in one line, so
    /// stderr is silenced meanwhile.
    func open(name: String, sampleRate: Int) throws -> AudioDevice {
        let outputs = max(2, outputsWanted())
        // The screen's policy (DeviceChoice): the routing's outputs, else a pair; the inputs
        // the session listens to, else fewer, else none (it plays, and says why it cannot record).
        let choice = DeviceChoice(name: name, config: config, periodFrames: periodFrames, periodCount: periodCount, jack: jack)
        let opened = try choice.open(sampleRate: sampleRate, inputs: Array(Set([inputsWanted, 2, 1])).sorted(by: >) + [0],
                                     outputs: outputs > 2 ? [outputs, 2] : [2], tracks: portTracks, tempoMap: tempoMap)
        captureProblem = opened.inputs == 0 && inputsWanted > 0 && !(opened.device is JACKDevice) ? opened.refusal?.description : nil
        return opened.device
    }

    /// Names of the devices the catalog finds that can play, with `current` first (a name
    /// with arguments such as `filetap:OUT=…` is not in any catalog), and `jack` when a JACK
    /// server runs.
    func catalog(current: String) -> [String] {
        let config = self.config
        let found = withStderrSilenced { DeviceCatalog.list(config: config) }
        var names = [current]
        if JACKRequest.clientName(inDeviceName: current) == nil && JACKDevice.serverIsRunning() { names.append("jack") }
        for d in found where d.playback != nil && !names.contains(d.name) { names.append(d.name) }
        return names
    }
}
