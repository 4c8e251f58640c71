import Foundation
import TapedeckCore
import TapedeckDSP
import TapedeckEngine
import TapedeckIO
import TapedeckUI

/// `tapedeck [SESSION] [--theme NAME]` (also `tapedeck open …`): the interactive screen.
struct ScreenCommand: Command {
    static let name = "open"
    static let summary = "open a session in the interactive screen (also: tapedeck SESSION)"
    static let usage = """
    usage: tapedeck [SESSION] [--theme NAME] [--device D]
           tapedeck open [SESSION] [--theme NAME] [--device D]

    Opens SESSION (a NAME.tapedeck folder) full-screen in the terminal. A SESSION that does
    not exist yet but ends in .tapedeck is created there on the first save (Ctrl-S). With no
    SESSION, an untitled session opens; plain `tapedeck` with no arguments opens it only when
    run on a terminal, and prints the command list otherwise.
    Press ? on the screen for every key.

    Settings live in $XDG_CONFIG_HOME/tapedeck (default ~/.config/tapedeck):
      keys     one 'action = key[, key]' per line, e.g. 'play = space', '# comments'
      config   'theme = NAME'
      themes/  your own NAME.theme files
    --theme NAME picks a theme (default, light, high-contrast, mono) over the config file.
    NO_COLOR set in the environment turns colours off.
    --device D plays and records on ALSA PCM D (default: default; see 'tapedeck devices').
    The device is tried once at startup and then opened only while the transport moves.
    When it cannot be opened (no sound card, busy, wrong rate) the screen opens on an
    offline device and says why: playback moves silently, recording is refused.
    --device offline asks for the offline device. TAPEDECK_ALSA_CONFIG=FILE opens devices
    through that ALSA config only.

    example: tapedeck Samples/demo.tapedeck --theme light
    """

    let sessionPath: String?
    let themeName: String?
    let deviceName: String

    init(arguments: inout Arguments) throws {
        themeName = try arguments.option("--theme")
        deviceName = try arguments.option("--device") ?? "default"
        sessionPath = arguments.positional()
    }

    func run() throws -> Int32 {
        let env = ProcessInfo.processInfo.environment
        var messages: [String] = []

        var folder: SessionFolder?
        var session = Session()
        if let path = sessionPath {
            let f = SessionFolder(path: path)
            if f.exists {
                // Takes a crash (or a quit without saving) left marked go onto their tracks.
                do {
                    for r in try TakeRecovery.recover(session: f) {
                        messages.append("recovered take \(r.file)" + (r.problem.map { ": \($0)" } ?? ""))
                    }
                } catch {
                    messages.append("cannot recover unfinished takes: \(error)")
                }
                session = try f.load()
            } else if path.hasSuffix(".tapedeck") || path.hasSuffix(".tapedeck/") {
                messages.append("new session: \(f.path) is created on the first save (Ctrl-S)")
            } else {
                throw UsageError("no command or session '\(path)' (see 'tapedeck help'; sessions end in .tapedeck)")
            }
            folder = f
        }

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
        let (link, offlineReason) = makeLink(session: session, folder: folder, peaks: peaks, environment: env)
        // Last, so the problems with the user's own files are the ones shown first.
        if let offlineReason { messages.append("offline: \(offlineReason)") }
        let model = ScreenModel(document: SessionDocument(session: session), folder: folder, link: link,
                                hooks: ScreenCommand.hooks(), keyMap: keyMap, peaks: peaks,
                                importFolder: FileManager.default.currentDirectoryPath)
        let allowColor = (env["NO_COLOR"] ?? "").isEmpty
        // libasound reports some failures itself while running (a file device's failed write,
        // a JACK server gone) by printing to stderr, which would scribble over the screen; the
        // engine reports the same failure on the message line, so stderr is quiet meanwhile.
        let status = withStderrSilenced {
            ScreenApp.run(model: model, theme: theme, allowColor: allowColor, startupMessages: messages)
        }
        if status < 0 {
            throw UsageError("cannot start the screen: the terminal '\(env["TERM"] ?? "")' is unknown to ncurses")
        }
        return status
    }

    /// The engine link when the device opens (tried once, for playback at the session's
    /// rate), else the offline link and why. `TAPEDECK_FAKE_RECORD=1` is a test hook of the
    /// offline link (it pretends to record), so it always gets that one.
    func makeLink(session: Session, folder: SessionFolder?, peaks: PeakCache,
                  environment env: [String: String]) -> (TransportLink, offlineReason: String?) {
        let fake = env["TAPEDECK_FAKE_RECORD"] == "1"
        func offline(_ reason: String?) -> (TransportLink, offlineReason: String?) {
            (OfflineTransport(session: session, folderPath: folder?.path, peaks: peaks, pretendsToRecord: fake), reason)
        }
        if fake || deviceName == ScreenDevice.offlineName { return offline(nil) }
        let device: ScreenDevice
        do { device = ScreenDevice(name: deviceName, config: try ALSAConfig.fromEnvironment()) } catch {
            return offline(error.description)
        }
        if let problem = device.probe(sampleRate: session.sampleRate) { return offline(problem) }
        TimePitchWarmUp.start(sampleRate: session.sampleRate)
        return (EngineTransport(session: session, folder: folder, peaks: peaks, device: device), nil)
    }

    /// Exports through the offline mixdown.
    static func hooks() -> ScreenHooks {
        ScreenHooks(
            export: { session, folderPath, outputPath, progress in
                guard let container = AudioContainer(pathExtension: outputPath) else {
                    throw UsageError("\(outputPath): must end in .wav or .flac")
                }
                let dir = (outputPath as NSString).deletingLastPathComponent
                try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
                let request = Mixdown.Request(session: session, folder: SessionFolder(path: folderPath),
                                              range: FrameRange(startFrame: 0, endFrame: max(1, session.endFrame)),
                                              outputPath: outputPath, container: container, encoding: .int24)
                let summary = try Mixdown(request).run { progress($0) }
                let length = TimeText.clock(frames: summary.frameCount, sampleRate: session.sampleRate)
                return "exported \(length), peak \(Decibels.text(summary.peakDecibels)) dBFS\(summary.clipText)"
            })
    }

    /// Theme folders shipped with the program: beside the installed binary
    /// (`../share/tapedeck/themes`), and the source tree's `Themes/` for builds run from it.
    static func bundledThemeFolders() -> [String] {
        var folders: [String] = []
        if let exe = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            let bin = URL(fileURLWithPath: exe).deletingLastPathComponent()
            folders.append(bin.deletingLastPathComponent().appendingPathComponent("share/tapedeck/themes").path)
        }
        let sourceRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        folders.append(sourceRoot.appendingPathComponent("Themes").path)
        return folders
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
        let screenOptions = ["--theme", "--device"]
        if first.hasPrefix("-") && !screenOptions.contains(where: { first == $0 || first.hasPrefix($0 + "=") }) { return args }
        if !first.hasPrefix("-") && !first.hasSuffix(".tapedeck") && !first.hasSuffix(".tapedeck/")
            && access(first, F_OK) != 0 { return args }
        return [name] + args
    }
}
