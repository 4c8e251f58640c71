import TapedeckCore
import TapedeckEngine
import TapedeckDevices

/// The one way the screen, `record` and `play` choose and open a device: a JACK client when
/// the name says `jack` (`jack`, `jack:CLIENT`), else the ALSA PCM through the configuration
/// given (`TAPEDECK_ALSA_CONFIG`'s, or the system's), trying each output count in turn and,
/// for each, each input count. What a front-end may give up is its own policy, stated in the
/// counts it passes: the screen opens with fewer inputs, then none, rather than not at all (it
/// plays and says why it cannot record); `record` needs exactly the inputs it records, so it
/// passes one count and fails when the device cannot give it. Both take the pair of outputs
/// every device has when the routing's wider count cannot be had.
struct DeviceChoice {
    /// The device's name (`hw:1`, `jack:drums`).
    var name: String
    /// The private ALSA configuration, or nil for the system's.
    var config: ALSAConfig?
    var periodFrames = 256
    var periodCount = 3
    /// Sample formats to try, best first (`--device-format` narrows them).
    var formats = DeviceSampleFormat.allCases
    /// How a JACK client connects and follows the transport.
    var jack = JACKOptions()

    /// A device opened, with the counts it was opened with.
    struct Opened {
        let device: AudioDevice
        let inputs: Int
        let outputs: Int
        /// Why the first counts asked for could not be had (nil when they were).
        let refusal: DeviceError?
    }

    /// Opens the device at `sampleRate` with the first of `outputs` × `inputs` it can do;
    /// throws the last refusal when none. libasound prints its own lines for a failed open,
    /// which would scribble over the screen and repeat the error thrown: stderr is silenced
    /// meanwhile.
    func open(sampleRate: Int, inputs: [Int], outputs: [Int], tracks: [(name: String, channels: [Int])] = [],
              tempoMap: TempoMap? = nil) throws(DeviceError) -> Opened {
        let map = tempoMap ?? TempoMap(sampleRate: sampleRate, tempoBPM: 120, timeSignature: TimeSignature(beatsPerBar: 4, beatUnit: 4))
        let wantedInputs = inputs.first ?? 0, wantedOutputs = outputs.first ?? 2
        if let request = jack.request(deviceName: name, sampleRate: sampleRate, inputs: wantedInputs, outputs: wantedOutputs,
                                      tracks: tracks, tempoMap: map) {
            return Opened(device: try JACKDevice(request: request), inputs: wantedInputs, outputs: wantedOutputs, refusal: nil)
        }
        var firstRefusal: DeviceError?
        var lastRefusal: DeviceError?
        for playback in outputs {
            for capture in inputs {
                let request = DeviceRequest(name: name, sampleRate: sampleRate, captureChannels: capture, playbackChannels: playback,
                                            periodFrames: periodFrames, periodCount: periodCount, formats: formats, exactRate: true)
                let config = self.config
                do {
                    let device = try withStderrSilenced { () throws(DeviceError) in try ALSADuplexDevice(request: request, config: config) }
                    return Opened(device: device, inputs: capture, outputs: playback, refusal: firstRefusal)
                } catch {
                    firstRefusal = firstRefusal ?? error
                    lastRefusal = error
                    // A device that cannot play at all will not play with fewer inputs either.
                    if capture == 0 { break }
                }
            }
        }
        throw lastRefusal ?? DeviceError(device: name, reason: "cannot be opened")
    }
}
