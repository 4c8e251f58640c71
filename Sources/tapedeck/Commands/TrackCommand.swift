import Foundation
import TapedeckCore
import TapedeckDSP
import TapedeckIO
import TapedeckEngine

/// `tapedeck track`: a track's mixer settings from the command line; adds and removes tracks.
struct TrackCommand: Command {
    static let spec = CommandSpec(
        name: "track", summary: "show or set a track's fader, pan, name, input, arm/mute/solo, monitoring; freeze it; add or remove tracks",
        synopsis: ["track SESSION N|NAME|master [--gain DB] [--pan P] [--name NAME] [--input CH] [--arm|--disarm] [--mute|--unmute] [--solo|--unsolo] [--monitor MODE] [--freeze|--unfreeze]",
                   "track SESSION add [NAME] [--midi] [the same options]",
                   "track SESSION remove N|NAME"],
        positionals: [PositionalSpec("SESSION", complete: .session), PositionalSpec("N|NAME|master|add|remove", complete: .none)],
        options: [
            OptionSpec("--gain", value: "DB", "fader: -inf...+12 dB (-3, +1.5, -inf)"),
            OptionSpec("--pan", value: "P", "L100...C...R100 (or -1...1)"),
            OptionSpec("--name", value: "NAME", "rename (names are unique, ignoring case)"),
            OptionSpec("--input", value: "CH", "one device channel (3) or a pair (3-4)"),
            OptionSpec(flag: "--arm", "arm the track (it records and listens)"),
            OptionSpec(flag: "--disarm", "disarm the track"),
            OptionSpec(flag: "--mute", "mute the track"),
            OptionSpec(flag: "--unmute", "unmute the track"),
            OptionSpec(flag: "--solo", "solo the track"),
            OptionSpec(flag: "--unsolo", "unsolo the track"),
            OptionSpec("--monitor", value: "MODE", "what an armed track's output carries", allowed: ["off", "input", "auto"]),
            OptionSpec(flag: "--midi", "add: a MIDI track (armed, it hears and records MIDI); its chain starts with the General MIDI instrument, gm"),
            OptionSpec(flag: "--freeze", "render the track (its MIDI through its instrument, its chain) to audio, which then plays in their place"),
            OptionSpec(flag: "--unfreeze", "play the track's regions and chain again (the render is deleted)"),
        ],
        details: """
        Without options, prints the track's settings. A track is named by its 1-based number or
        its name, in any case (an unknown name suggests the nearest). `master` is the master fader.
        --freeze renders the track offline exactly as export would (before its fader), with its
        instrument's and effects' tails, into SESSION/audio/freeze-NAME.wav; a frozen track
        plays that file, its regions and chain cannot be edited until --unfreeze.
        Changes are saved at once; the screen's undo reverts them when it has the session open.
        """,
        examples: ["tapedeck track song.tapedeck vocal --gain -3 --pan L20 --input 3-4 --arm",
                   "tapedeck track song.tapedeck add Guitar --input 2",
                   "tapedeck track song.tapedeck add Piano --midi --arm",
                   "tapedeck track song.tapedeck piano --freeze",
                   "tapedeck track song.tapedeck master --gain -1.5"])

    let folder: SessionFolder
    let target: String
    let newName: String?
    let gain: Double?
    let pan: Double?
    let input: [Int]?
    let armed: Bool?
    let muted: Bool?
    let soloed: Bool?
    let monitoring: MonitoringMode?
    let midi: Bool
    let freeze: Bool?

    init(arguments: inout Arguments) throws {
        if let text = try arguments.option("--gain") {
            guard let db = Fader.parse(text) else { throw UsageError("track: --gain '\(text)' is not a level in dB (e.g. -3, +1.5, -inf)") }
            if let problem = Fader.problem(db) { throw UsageError("track: --gain \(text): \(problem)") }
            gain = Fader.stored(db)
        } else { gain = nil }
        if let text = try arguments.option("--pan") {
            guard let p = Pan.parse(text) else { throw UsageError("track: --pan '\(text)' must be L100...C...R100 or -1...1") }
            pan = p
        } else { pan = nil }
        if let text = try arguments.option("--input") {
            do { input = try InputChannels.parse(text) } catch { throw UsageError("track: --input \(error.description)") }
        } else { input = nil }
        if let text = try arguments.option("--monitor") {
            guard let m = MonitoringMode(rawValue: text.lowercased()) else { throw UsageError("track: --monitor '\(text)' must be off, input or auto") }
            monitoring = m
        } else { monitoring = nil }
        armed = try TrackCommand.toggle(&arguments, on: "--arm", off: "--disarm")
        muted = try TrackCommand.toggle(&arguments, on: "--mute", off: "--unmute")
        soloed = try TrackCommand.toggle(&arguments, on: "--solo", off: "--unsolo")
        freeze = try TrackCommand.toggle(&arguments, on: "--freeze", off: "--unfreeze")
        midi = arguments.flag("--midi")
        let renamed = try arguments.option("--name")
        folder = SessionFolder(path: try arguments.required("a session folder"))
        target = try arguments.required("a track number or name, master, add or remove")
        if target == "add" {
            let name = arguments.positional()
            if renamed != nil && name != nil { throw UsageError("track: give the new track's name once (add NAME or --name NAME)") }
            newName = renamed ?? name
        } else {
            newName = renamed
        }
        if midi && target != "add" { throw UsageError("track: --midi makes a new MIDI track (track SESSION add NAME --midi)") }
        if freeze != nil && target == "add" { throw UsageError("track: a new track has nothing to freeze") }
        if target == "master" && (pan != nil || input != nil || armed != nil || muted != nil || soloed != nil || monitoring != nil || newName != nil || freeze != nil) {
            throw UsageError("track: the master has only a fader (--gain)")
        }
        removing = target == "remove" ? try arguments.required("the track to remove (number or name)") : nil
    }

    private let removing: String?

    /// `--on` → true, `--off` → false, neither → nil, both → a usage error.
    private static func toggle(_ arguments: inout Arguments, on: String, off: String) throws(UsageError) -> Bool? {
        let a = arguments.flag(on), b = arguments.flag(off)
        if a && b { throw UsageError("track: \(on) and \(off) cannot be combined") }
        return a ? true : (b ? false : nil)
    }

    private var changesSomething: Bool {
        gain != nil || pan != nil || input != nil || armed != nil || muted != nil || soloed != nil || monitoring != nil || newName != nil
            || freeze != nil
    }

    func run() throws -> Int32 {
        // One writer per session (see SessionLock): only a change takes the lock; showing reads.
        let lock = (changesSomething || target == "add" || removing != nil) ? try SessionLock.acquire(folder) : nil
        defer { withExtendedLifetime(lock) {} }
        var document = SessionDocument(session: try folder.load())
        if target == "master" {
            if let gain {
                document.edit("master fader") { $0.masterGainDecibels = gain }
                try folder.save(document.session)
            }
            Terminal.out("master  fader \(Fader.text(document.session.masterGainDecibels)) dB  chain \(document.session.masterChain.isEmpty ? "(none)" : document.session.masterChain)")
            return ExitCode.ok
        }
        if let removing {
            let index = try TrackSelector.index(of: removing, in: document.session, command: "track")
            let gone = document.session.tracks[index]
            document.edit("remove track") { $0.tracks.remove(at: index) }
            try folder.save(document.session)
            Terminal.out("removed track \(index + 1) (\(gone.name), \(gone.regions.count) region\(gone.regions.count == 1 ? "" : "s"); its audio stays in audio/)")
            return ExitCode.ok
        }
        let index: Int
        if target == "add" {
            var n = document.session.tracks.count + 1
            while NameMatch.index(of: "Track \(n)", in: document.session.tracks.map(\.name)) != nil { n += 1 }
            let name = newName ?? "Track \(n)"
            try check(name: name, index: -1, in: document.session)
            document.edit("add track") { $0.tracks.append(midi ? Track(name: name, playbackChain: "gm", isMIDI: true) : Track(name: name)) }
            index = document.session.tracks.count - 1
        } else {
            index = try TrackSelector.index(of: target, in: document.session, command: "track")
            if let newName { try check(name: newName, index: index, in: document.session) }
        }
        document.edit("track settings") { s in
            var t = s.tracks[index]
            if let gain { t.gainDecibels = gain }
            if let pan { t.pan = pan }
            if let input { t.inputChannels = input }
            if let armed { t.armed = armed }
            if let muted { t.mute = muted }
            if let soloed { t.solo = soloed }
            if let monitoring { t.monitoring = monitoring }
            s.tracks[index] = t
            if let newName { s.renameTrack(index, to: newName.trimmingCharacters(in: .whitespaces)) }
        }
        var unfrozenFile: String?
        if let freeze {
            let track = document.session.tracks[index]
            if freeze {
                guard track.frozen == nil else { throw UsageError("track: \(track.name) is frozen already (--unfreeze first to render it again)") }
                var bar = ProgressBar(label: "freezing \(track.name.terminalSafe)")
                let result = try TrackFreeze.render(session: document.session, folder: folder, track: index) { bar.update($0) }
                bar.finish()
                for warning in result.warnings { Terminal.err("tapedeck: warning: \(warning)\n") }
                document.edit("freeze") { $0.tracks[index].frozen = result.frozen }
                let rate = document.session.sampleRate
                Terminal.out("froze \(track.name.terminalSafe) → \(result.frozen.file): \(TimeText.clock(frames: result.frozen.lengthFrames, sampleRate: rate)) (tail \(TimeText.clock(frames: result.tailFrames, sampleRate: rate)))")
            } else {
                guard let frozen = track.frozen else { throw UsageError("track: \(track.name) is not frozen") }
                unfrozenFile = frozen.file
                document.edit("unfreeze") { $0.tracks[index].frozen = nil }
            }
        }
        if changesSomething || target == "add" { try folder.save(document.session) }
        // The render goes once the session no longer names it (the command line has no undo).
        if let file = unfrozenFile {
            unlink(folder.absolutePath(of: file))
            unlink(folder.peakPath(forAudio: file))
        }
        Terminal.out(TrackCommand.describe(document.session.tracks[index], number: index + 1))
        return ExitCode.ok
    }

    private func check(name: String, index: Int, in session: Session) throws(UsageError) {
        let trimmed = name.trimmingCharacters(in: .whitespaces)
        if trimmed.isEmpty { throw UsageError("track: a track needs a name") }
        if let other = NameMatch.index(of: trimmed, in: session.tracks.map(\.name)), other != index {
            throw UsageError("track: track \(other + 1) is already called \(session.tracks[other].name) (names are matched ignoring case)")
        }
    }

    /// One line: number, name, fader, pan, input, flags, monitoring, chains.
    static func describe(_ t: Track, number: Int) -> String {
        var flags = [String]()
        if t.armed { flags.append("armed") }
        if t.mute { flags.append("muted") }
        if t.solo { flags.append("solo") }
        if t.isMIDI { flags.append("MIDI") }
        if t.frozen != nil { flags.append("frozen") }
        let chains = (t.inputChain.isEmpty ? "" : "  input chain \(t.inputChain)") + (t.playbackChain.isEmpty ? "" : "  chain \(t.playbackChain)")
        return "track \(number) (\(t.name))  fader \(Fader.text(t.gainDecibels)) dB  pan \(Pan.text(t.pan))  \(InputChannels.text(t.inputChannels))  monitor \(t.monitoring.rawValue)\(flags.isEmpty ? "" : "  [" + flags.joined(separator: " ") + "]")\(chains)"
    }
}
