import TapedeckEngine

/// How the screen reaches sound devices: the PCM name, the ALSA configuration
/// (`TAPEDECK_ALSA_CONFIG` or the global one) and the period shape. UI thread.
///
/// The screen opens a device only while the transport moves or a track is armed (to listen
/// for retroactive capture): the startup probe opens it and closes it at once, play and
/// record open it, stop closes it. So another program can use the card while the screen
/// sits idle with nothing armed, and a device that appears later is found on the next play.
struct ScreenDevice {
    /// The name the user chose with `--device` (default `default`).
    var name: String
    /// The private ALSA configuration, or nil for the system's.
    let config: ALSAConfig?
    /// Frames per period: small enough for tight meters, large enough for a busy machine.
    var periodFrames = 256
    /// Periods in the device buffer.
    var periodCount = 3

    /// The name `--device` takes to ask for the offline transport on purpose.
    static let offlineName = "offline"

    /// Opens `name` with `capture` input channels (0: none) and `playbackChannels` outputs
    /// (stereo unless asked; 0 for listening only) at `sampleRate`.
    /// libasound prints its own lines on a failed open; they would scribble over the screen,
    /// and the error thrown says the same in one line, so stderr is silenced meanwhile.
    func open(name: String? = nil, sampleRate: Int, captureChannels: Int, playbackChannels: Int = 2) throws(DeviceError) -> ALSADuplexDevice {
        let request = DeviceRequest(name: name ?? self.name, sampleRate: sampleRate, captureChannels: captureChannels,
                                    playbackChannels: playbackChannels, periodFrames: periodFrames, periodCount: periodCount)
        let config = self.config
        return try withStderrSilenced { () throws(DeviceError) in try ALSADuplexDevice(request: request, config: config) }
    }

    /// Opens and closes `name` for playback at `sampleRate`: nil when it works, else why not
    /// (one line). Used at startup and before switching devices.
    func probe(name: String? = nil, sampleRate: Int) -> String? {
        do {
            let device = try open(name: name, sampleRate: sampleRate, captureChannels: 0)
            device.stop()
            return nil
        } catch {
            return error.description
        }
    }

    /// Names of the devices the catalog finds that can play, with `current` first (a name
    /// with arguments such as `filetap:OUT=…` is not in any catalog).
    func catalog(current: String) -> [String] {
        let config = self.config
        let found = withStderrSilenced { DeviceCatalog.list(config: config) }
        var names = [current]
        for d in found where d.playback != nil && !names.contains(d.name) { names.append(d.name) }
        return names
    }
}
