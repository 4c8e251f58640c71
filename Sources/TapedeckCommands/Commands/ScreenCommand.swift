import Foundation
import TapedeckCore
import TapedeckDSP
import TapedeckEngine
import TapedeckIO
import TapedeckRemote
import TapedeckTransport
import TapedeckUI
import TapedeckTakes
import TapedeckDevices

/// `tapedeck [SESSION] [--theme NAME]` (also `tapedeck open …`): the interactive screen.
struct ScreenCommand: Command {
    static let spec = CommandSpec(
        name: "open", summary: "open a session in the interactive screen (also: tapedeck SESSION)",
        synopsis: ["[SESSION] [--theme NAME] [--device D]", "open [SESSION] [--theme NAME] [--device D]"],
        positionals: [PositionalSpec("SESSION", complete: .session)],
        options: [
            OptionSpec("--theme", value: "NAME", "colours: default, light, high-contrast, mono or your own"),
            OptionSpec("--device", value: "D", "ALSA PCM to play and record on (default: default; offline: none), or jack (jack:CLIENT) to run as a JACK client"),
            OptionSpec("--split", value: "SIZE", "split every plain take at 1x into files of this length (1h, 30m) or size (2GB), as `record --split` (config: 'split = SIZE')"),
            OptionSpec("--mirror", value: "DIR", "write a second copy of every take into DIR (another disk), as `record --mirror` (config: 'mirror = DIR')"),
            OptionSpec("--timestamp", value: "WHAT", "stamp takes with their timeline frame (timeline, default) or the wall-clock time of their first frame (clock), as `record --timestamp` (config: 'timestamp = clock')",
                       allowed: ["timeline", "clock"]),
            RenderThreadsOption.spec,
        ] + SharedOptions.jack + SharedOptions.midi + SharedOptions.osc,
        details: """
        Opens SESSION (a NAME.tapedeck folder) full-screen in the terminal. A SESSION that does
        not exist yet but ends in .tapedeck is created there on the first save (Ctrl-S). With no
        SESSION, an untitled session opens; plain `tapedeck` with no arguments opens it only when
        run on a terminal, and prints the command list otherwise.
        Press ? on the screen for every key.

        Settings live in $XDG_CONFIG_HOME/tapedeck (default ~/.config/tapedeck):
          keys     one 'action = key[, key]' per line, e.g. 'play = space', '# comments'
          config   'theme = NAME', 'osc = PORT' (as --osc), 'osc-address = ADDR',
                   'split = 1h' (as --split), 'mirror = DIR' (as --mirror),
                   'timestamp = clock' (as --timestamp), 'threads = N' (as --threads)
          themes/  your own NAME.theme files
        --theme NAME picks a theme (default, light, high-contrast, mono) over the config file.
        NO_COLOR set in the environment turns colours off.
        --device D plays and records on ALSA PCM D (default: default; see 'tapedeck devices').
        The device is opened once, at startup, and stays open until you quit (or pick another
        with the device chooser): nothing you do while playing reopens it, and armed tracks show
        their input level even while stopped. When it cannot be opened (no sound card, busy,
        wrong rate) the screen opens on an offline device and says why: the transport moves in
        real time and the meters move, nothing is heard, recording is refused.
        --device offline asks for the offline device. TAPEDECK_ALSA_CONFIG=FILE opens devices
        through that ALSA config only.
        --device jack runs as a JACK client (jack:NAME names it): one input port per channel the
        armed tracks use, named after them (tapedeck:Vocal_in), out_L and out_R, connected to the
        physical ports (--connect PATTERN or none otherwise); play, stop and locate follow and
        drive JACK's transport (--jack-transport off keeps them Tapedeck's own), and --timebase
        publishes the session's bars and beats. The device chooser lists jack when a server runs.
        MIDI: the ALSA sequencer's hardware ports (or --midi-in PORT, jack:PORT) play armed
        tracks; MMC and --midi-surface buttons drive the transport; --midi-out sends MIDI thru
        to a JACK port.
    """,
        examples: ["tapedeck Samples/demo.tapedeck --theme light"])

    let sessionPath: String?
    let themeName: String?
    let deviceName: String
    let deviceGiven: Bool
    let jack: JACKOptions
    let midi: MIDIOptions
    let osc: OSCOptions
    /// `--threads` (or the config's `threads = N`); nil: one per core.
    let threads: Int?
    /// Every take's split and mirror (`--split`, `--mirror`, or the config's).
    let split: TakeSplit?
    let mirrorFolder: String?
    /// Takes stamped with the wall-clock time of their first frame (`--timestamp clock`).
    let stampsClock: Bool

    init(arguments: inout Arguments) throws {
        themeName = try arguments.option("--theme")
        let device = try arguments.option("--device")
        deviceGiven = device != nil
        deviceName = device ?? "default"
        jack = try JACKOptions(arguments: &arguments, deviceName: deviceName)
        midi = try MIDIOptions(arguments: &arguments)
        let config = ScreenConfig(environment: ProcessInfo.processInfo.environment, bundledThemes: [])
        osc = try OSCOptions(arguments: &arguments, configured: config.configuredOSC())
        // An option given wins over the config's line; either is checked as `record` checks
        // it, and a bad line in the config is named as the config's.
        func setting(_ option: String, _ key: String) throws -> (value: String, source: String)? {
            if let given = try arguments.option(option) { return (given, "open") }
            return config.configuredValue(key).map { ($0, "\(config.configPath.terminalSafe) ('\(key) = …')") }
        }
        func named(_ source: String, _ error: any Error) -> any Error {
            source == "open" ? error : UsageError(source + ": " + "\(error)".replacingOccurrences(of: "open: ", with: ""))
        }
        split = try setting("--split", "split").map { t in
            do { return try SplitOption.parse(t.value, command: "open") } catch { throw named(t.source, error) }
        }
        mirrorFolder = try setting("--mirror", "mirror").map { d in
            do { return try MirrorOption.check(d.value, command: "open") } catch { throw named(d.source, error) }
        }
        let stamp = try setting("--timestamp", "timestamp")
        switch (stamp?.value ?? "timeline").lowercased() {
        case "clock": stampsClock = true
        case "timeline": stampsClock = false
        case let other: throw named(stamp?.source ?? "open", UsageError("open: --timestamp '\(other.terminalSafe)' must be clock or timeline"))
        }
        threads = try RenderThreadsOption.parse(&arguments, command: "open")
        sessionPath = arguments.positional()
    }

    func run(_ context: CommandContext) throws -> Int32 {
        // The screen runs on the process's main thread, whose name is the process's: it stays
        // `tapedeck` (as `tapedeck-ui` it hid the program from `pgrep -x`, `killall` and
        // `ps -C`). In `top -H` it is the one thread so named: every other names itself.
        let env = ProcessInfo.processInfo.environment
        var messages: [String] = []

        var folder: SessionFolder?
        var session = Session()
        // One writer per session: the screen holds the lock while it is open (a new session
        // takes it when it is first saved, and the screen keeps it from then on).
        var lock: SessionLock?
        defer { withExtendedLifetime(lock) {} }
        // Under a session manager (NSM_URL) it names the session; the screen still needs a
        // terminal (a terminal the manager starts it in), so that is checked first.
        let managed = env["NSM_URL"].map { !$0.isEmpty } ?? false
        if managed && (isatty(STDIN_FILENO) != 1 || isatty(STDOUT_FILENO) != 1) {
            throw UsageError("the screen needs a terminal: under a session manager, start it in one (e.g. x-terminal-emulator -e tapedeck)")
        }
        let nsm = managed ? SessionManagerStart.join(messages: &messages) : nil
        if let nsm, sessionPath != nil { messages.append("session manager: it names the session, \(nsm.sessionPath.terminalSafe)") }
        SessionFolder.collectNotices()
        do {
            if let nsm, !SessionFolder(path: nsm.sessionPath).exists { lock = try SessionFolder(path: nsm.sessionPath).create(Session()) }
        } catch {
            nsm?.client.fail("/nsm/client/open", code: .createFailed, "\(error)")
            throw error
        }
        if let path = nsm?.sessionPath ?? sessionPath {
            let f = SessionFolder(path: path)
            if f.exists {
                do { lock = try SessionLock.acquire(f) } catch {
                    nsm?.client.fail("/nsm/client/open", code: .general, "\(error)")
                    throw error
                }
                // Takes a crash (or a quit without saving) left marked go onto their tracks.
                let opened: OpenedSession
                do { opened = try OpenedSession.read(f) } catch {
                    nsm?.client.fail("/nsm/client/open", code: .badProject, "\(error)")
                    throw error
                }
                session = opened.session
                messages += opened.recovered + opened.notices + SessionFolder.takeNotices()
            } else if SessionFolder.isNamed(path) {
                messages.append("new session: \(f.path) is created on the first save (Ctrl-S)")
            } else {
                throw UsageError("no command or session '\(path)' (see 'tapedeck help'; sessions end in .tapedeck)")
            }
            folder = f
        }

        // The mirror (given or configured) goes through the one write guard like every path
        // Tapedeck writes: never into what this or any other session keeps.
        if let mirrorFolder {
            try WriteGuard.check(mirrorFolder, as: "open: --mirror", sessions: folder.map { [SessionReferences.protected(session, folder: $0)] } ?? [],
                                 kind: .folder)
        }
        // Before the screen starts (and before the terminal is asked for), so a port in use is
        // one line and a failed exit.
        let oscServer = try osc.open(command: "tapedeck") { messages.insert($0, at: 0) }
        // After the session is read, so a mistyped command or session is named first.
        guard isatty(STDIN_FILENO) == 1, isatty(STDOUT_FILENO) == 1 else {
            throw UsageError("the screen needs a terminal; for scripts use a sub-command (see 'tapedeck help')")
        }
        let config = ScreenConfig(environment: env, bundledThemes: ScreenCommand.bundledThemeFolders())
        let (keyMap, keyProblems) = config.loadKeyMap()
        let (configuredTheme, configProblems) = config.configuredTheme()
        let (theme, themeProblem) = config.loadTheme(named: themeName ?? configuredTheme ?? "default")
        // Theme first: a bad theme changes what everything looks like.
        messages = (themeProblem.map { [$0] } ?? []) + keyProblems + configProblems + messages

        let peaks = PeakCache(folder: folder)
        let device = nsm?.device(given: deviceGiven ? deviceName : nil) ?? deviceName
        let (link, offlineReason) = try makeLink(session: session, folder: folder, device: device, environment: env)
        // Last, so the problems with the user's own files are the ones shown first.
        if let offlineReason { messages.append("offline: \(offlineReason)") }
        if let mirrorFolder { messages.append("every take is mirrored to \(mirrorFolder.terminalSafe)") }
        if session.tracks.contains(where: \.isMIDI) && link.midiPorts.isEmpty { messages.append(link.midiInputLine) }
        let model = ScreenModel(document: SessionDocument(session: session), folder: folder, link: link,
                                hooks: ScreenCommand.hooks(), keyMap: keyMap, peaks: peaks,
                                importFolder: FileManager.default.currentDirectoryPath)
        let allowColor = (env["NO_COLOR"] ?? "").isEmpty
        // libasound reports some failures itself while running (a file device's failed write,
        // a JACK server gone) by printing to stderr, which would scribble over the screen; the
        // engine reports the same failure on the message line, so stderr is quiet meanwhile.
        // `tapedeck ctl` reaches the screen through its control socket, served by its loop;
        // the session manager, when there is one, is served the same way.
        var services: [ScreenService] = []
        if let nsm {
            nsm.client.reply(to: "/nsm/client/open", "opened \(nsm.sessionPath)")
            services.append(ScreenSessionManager(client: nsm.client, manager: nsm.manager))
            messages.append("session manager: \(nsm.manager.terminalSafe) opened this session as \(nsm.clientID.terminalSafe); it saves and quits it")
        }
        // A Mackie Control surface is served by the loop too (its faders are the screen's).
        if midi.setup.surface == .mcu {
            if link.hasMackieSurface { services.append(ScreenMackie(surface: link)) } else { messages.append("--midi-surface mcu: \(link.midiInputLine)") }
        }
        do { services.append(ScreenControl(server: try ControlServer(session: folder?.path))) } catch {
            messages.append("remote control is off: \(error)")
        }
        if let oscServer { services.append(ScreenOSC(server: oscServer)) }
        let status = withStderrSilenced {
            ScreenApp.run(model: model, theme: theme, allowColor: allowColor, startupMessages: messages, services: services)
        }
        // A take still running when the screen quit is closed here; its crash marker puts it
        // on its track the next time the session opens.
        link.close()
        if status < 0 {
            throw UsageError("cannot start the screen: the terminal '\(env["TERM"] ?? "")' is unknown to ncurses")
        }
        return status
    }

    /// The transport on the chosen device, opened once for the whole session of use, or on
    /// the silent offline clock when it cannot be opened (and why). `TAPEDECK_FAKE_RECORD=1`
    /// is a test hook: the offline clock then has two silent inputs, so recording runs.
    func makeLink(session: Session, folder: SessionFolder?, device deviceName: String, environment env: [String: String]) throws
        -> (Transport, offlineReason: String?) {
        let fake = env["TAPEDECK_FAKE_RECORD"] == "1"
        var options = TransportOptions()
        options.engine = DeviceOptions.engineOptions(threads: threads)
        options.engine.lockMemory = true
        options.retroSeconds = Transport.screenRetroSeconds
        options.midi = midi.setup
        options.waitsForTimePitchToStart = false
        options.split = split
        options.mirrorFolder = mirrorFolder
        options.stampsTakesWithClock = stampsClock
        // Takes from the screen are compensated as `record`'s are (they were not on JACK).
        options.latencyOffset = { name in (try? LatencyOffsets.load())?.offset(forDevice: name) ?? 0 }
        func offline(_ reason: String?) throws -> (Transport, offlineReason: String?) {
            let device = OfflineClockDevice(sampleRate: session.sampleRate, captureChannels: fake ? 2 : 0, playbackChannels: 2,
                                            periodFrames: 256, capacityPeriods: 0, paced: true, name: ScreenDevice.offlineName)
            return (try Transport(session: session, folder: folder, device: device, deviceName: ScreenCommand.offlineDeviceName,
                                  isOffline: true, options: options), reason)
        }
        if fake || deviceName == ScreenDevice.offlineName { return try offline(nil) }
        let provider: ScreenDevice
        do { provider = ScreenDevice(config: try ALSAConfig.fromEnvironment()) } catch { return try offline(error.description) }
        provider.inputsWanted = max(2, session.tracks.flatMap(\.inputChannels).max() ?? 2)
        provider.outputsWanted = { ScreenDevice.outputs(for: session) }
        provider.jack = jack
        provider.jack.connectMIDI(midi.setup)
        provider.portTracks = session.tracks.filter { $0.armed && !$0.isMIDI }.map { (name: $0.name, channels: $0.inputChannels) }
        provider.tempoMap = session.tempoMap
        let device: AudioDevice
        do { device = try provider.open(name: deviceName, sampleRate: session.sampleRate) } catch { return try offline("\(error)") }
        do {
            let transport = try Transport(session: session, folder: folder, device: device, deviceName: deviceName,
                                          provider: provider, options: options)
            // A device chosen again later opens the outputs the routing names by then.
            provider.outputsWanted = { [unowned transport] in ScreenDevice.outputs(for: transport.session) }
            // Rubber Band takes seconds to build: started now, in the background, so the first
            // speed change is heard at once (on the offline clock nobody listens: not there).
            transport.prepareTimePitch()
            // A shared transport (JACK's) may stand where a previous program left it: the
            // screen opens at its own playhead and moves the shared transport there.
            if transport.engine.followsHost { transport.locate(to: 0) }
            return (transport, nil)
        } catch let error as DeviceError {
            return try offline(error.description)
        }
    }

    /// What the screen calls the offline clock.
    static let offlineDeviceName = OfflineClockDevice.displayName

    /// Exports through the offline mixdown.
    static func hooks() -> ScreenHooks {
        ScreenHooks(
            // The export dialog runs `export` itself: its parser, its render, its words.
            export: { session, folderPath, words, progress in
                let command = try ExportCommand.forScreen(words, folderPath: folderPath)
                // exports/live/take.wav: the dialog makes the folders the path names.
                try? FileManager.default.createDirectory(atPath: (command.output as NSString).deletingLastPathComponent,
                                                         withIntermediateDirectories: true)
                let (lines, warnings) = try command.render(session: session) { progress($0) }
                // Named in the session folder, as typed in the dialog.
                return (lines + warnings.map { "warning: \($0)" }).joined(separator: "; ")
                    .replacingOccurrences(of: folderPath + "/", with: "")
            },
            exportProblem: { words, folderPath in
                do { _ = try ExportCommand.forScreen(words, folderPath: folderPath); return nil } catch { return "\(error)" }
            },
            freeze: { session, folderPath, track, progress in
                let result = try TrackFreeze.render(session: session, folder: SessionFolder(path: folderPath), track: track) { progress($0) }
                let length = TimeText.clock(frames: result.frozen.lengthFrames, sampleRate: session.sampleRate)
                let warnings = result.warnings.isEmpty ? "" : "; " + result.warnings.joined(separator: "; ")
                return (result.frozen, "froze \(session.tracks[track].name): \(length) in \(result.frozen.file)\(warnings)")
            },
            // Command-line edits handed to the screen run here, as the command would run.
            command: { typed, served in MainActor.assumeIsolated { OwnerForwarding.run(typed, served: served) } },
            // An import's copying runs on a worker; the import lands on the UI thread after.
            commandWork: { typed, sampleRate in ImportInBackground.work(typed, sampleRate: sampleRate) })
    }

    /// Theme folders shipped with the program: beside the installed binary
    /// (`../share/tapedeck/themes`), and the source tree's `Themes/` for builds run from it.
    static func bundledThemeFolders() -> [String] {
        InstallLayout.dataFolders("themes", sourceName: "Themes")
    }
}

extension ScreenCommand {
    /// Rewrites a command line without a sub-command into `open …`: a first argument that is
    /// not a command name and not a flag (other than --theme and --device) is a session path,
    /// when it ends in `.tapedeck` or exists; any other word stays a (mistyped) command, so
    /// `tapedeck exprot` suggests `export`. No arguments at all open an untitled session only
    /// on a terminal; otherwise help is printed.
    static func dispatch(_ args: [String], commandNames: [String]) -> [String] {
        guard let first = args.first else {
            return isatty(STDIN_FILENO) == 1 && isatty(STDOUT_FILENO) == 1 ? [name] : args
        }
        if commandNames.contains(first) || first == "help" { return args }
        let screenOptions = ["--theme", "--device", "--osc", "--osc-address", "--connect", "--jack-transport", "--timebase", "--midi-in", "--midi-out", "--midi-surface"]
        if first.hasPrefix("-") && !screenOptions.contains(where: { first == $0 || first.hasPrefix($0 + "=") }) { return args }
        if !first.hasPrefix("-") && !SessionFolder.isNamed(first) && access(first, F_OK) != 0 { return args }
        return [name] + args
    }
}
