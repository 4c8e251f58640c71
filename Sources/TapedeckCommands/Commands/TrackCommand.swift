import Foundation
import TapedeckCore
import TapedeckDSP
import TapedeckIO
import TapedeckEngine

/// `tapedeck track`: a track's (or a bus's) mixer settings and output from the command line;
/// adds and removes tracks.
struct TrackCommand: HandedCommand {
    static let spec = CommandSpec(
        name: "track", summary: "show or set a track's or bus's fader, pan, name, input, arm/mute/solo, monitoring, output; freeze it; add or remove tracks",
        synopsis: ["track SESSION N|NAME|master [--gain DB] [--pan P] [--name NAME] [--input CH] [--arm|--disarm] [--mute|--unmute] [--solo|--unsolo] [--monitor MODE] [--output OUT] [--solo-safe on|off] [--freeze|--unfreeze]",
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
            OptionSpec("--monitor", value: "MODE", "what an armed track plays: off its disk only; input its input always, never its disk; auto its input while stopped or recording, its disk while it only plays", allowed: ["off", "input", "auto"]),
            OptionSpec(flag: "--midi", "add: a MIDI track (armed, it hears and records MIDI); its chain starts with the General MIDI instrument, gm"),
            OptionSpec(flag: "--freeze", "render the track (its MIDI through its instrument, its chain) to audio, which then plays in their place"),
            OptionSpec(flag: "--unfreeze", "play the track's regions and chain again (the render is deleted)"),
            OptionSpec("--output", value: "OUT", "where the strip goes: master, bus:NAME (a bus) or out:3-4 (device outputs, past the master; out:3 for one)"),
            OptionSpec("--solo-safe", value: "on|off", "a bus only: stay heard whatever is soloed (a reverb return)", allowed: ["on", "off"]),
        ],
        details: """
        Without options, prints the track's settings. A track is named by its 1-based number or
        its name, in any case (an unknown name suggests the nearest). `master` is the master fader.
        A bus (see `tapedeck bus`) is named the same way and takes --gain, --pan, --name, --mute,
        --solo, --output and --solo-safe; it has no input, so --input, --arm, --monitor and
        --freeze are refused. --output routes the strip: a cycle (a bus feeding what feeds it) is
        refused with a line naming it, and nothing is saved. remove on a bus sends what went to
        it to the master and says so.
        --freeze renders the track offline exactly as export would (before its fader), with its
        instrument's and effects' tails, into SESSION/audio/freeze-NAME.wav; a frozen track
        plays that file, its regions and chain cannot be edited until --unfreeze.
        Changes are saved at once; the screen's undo reverts them when it has the session open.
        """,
        examples: ["tapedeck track song.tapedeck vocal --gain -3 --pan L20 --input 3-4 --arm",
                   "tapedeck track song.tapedeck add Guitar --input 2",
                   "tapedeck track song.tapedeck add Piano --midi --arm",
                   "tapedeck track song.tapedeck piano --freeze",
                   "tapedeck track song.tapedeck master --gain -1.5",
                   "tapedeck track song.tapedeck drums --output bus:Group",
                   "tapedeck track song.tapedeck Reverb --gain -6 --solo-safe on"])

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
    let output: StripOutput?
    let soloSafe: Bool?

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
        if let text = try arguments.option("--output") {
            do { output = try StripOutput.parse(text) } catch { throw UsageError("track: --output \(error.description)") }
        } else { output = nil }
        soloSafe = try arguments.option("--solo-safe").map { $0.lowercased() == "on" }
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
        if soloSafe != nil && target == "add" { throw UsageError("track: --solo-safe is for buses (tapedeck bus SESSION add NAME makes one)") }
        if target == "master" && (pan != nil || input != nil || armed != nil || muted != nil || soloed != nil || monitoring != nil || newName != nil || freeze != nil
                                  || output != nil || soloSafe != nil) {
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
            || freeze != nil || output != nil || soloSafe != nil
    }

    func run(_ context: CommandContext) throws -> Int32 {
        // One writer per session (see SessionLock): only a change takes the lock; showing reads.
        let lock = (changesSomething || target == "add" || removing != nil) ? try SessionLock.acquire(folder) : nil
        defer { withExtendedLifetime(lock) {} }
        var document = SessionDocument(session: try context.load(folder))
        if target == "master" {
            if let gain {
                document.edit("master fader") { $0.masterGainDecibels = gain }
                try context.save(document.session, to: folder)
            }
            context.console.out("master  fader \(Fader.text(document.session.masterGainDecibels)) dB  chain \(document.session.masterChain.isEmpty ? "(none)" : document.session.masterChain)")
            return ExitCode.ok
        }
        if let removing {
            let index = try TrackSelector.index(of: removing, in: document.session, command: "track")
            let gone = document.session.tracks[index]
            // A removed bus takes its sends and outputs along (to the master), said line by line.
            let said = try TrackSelector.refusing("track") { try document.apply(.removeStrip(index)) }
            try context.save(document.session, to: folder)
            let what = gone.isBus ? "removed bus \(index + 1) (\(gone.name))"
                : "removed track \(index + 1) (\(gone.name), \(gone.regions.count) region\(gone.regions.count == 1 ? "" : "s"); its audio stays in audio/)"
            context.console.out(([what] + said.map { "  " + $0 }).joined(separator: "\n"))
            return ExitCode.ok
        }
        let index: Int
        if target == "add" {
            var n = document.session.tracks.count + 1
            while NameMatch.index(of: "Track \(n)", in: document.session.tracks.map(\.name)) != nil { n += 1 }
            let name = newName ?? "Track \(n)"
            try TrackSelector.refusing("track") { try document.apply(.add(name: name, midi: midi)) }
            index = document.session.tracks.count - 1
        } else {
            index = try TrackSelector.index(of: target, in: document.session, command: "track")
            let strip = document.session.tracks[index]
            if let newName { try TrackSelector.checkName(newName, index: index, bus: strip.isBus, in: document.session, command: "track") }
            if strip.isBus { try refuseOnBus(strip) }
            if soloSafe != nil && !strip.isBus {
                throw UsageError("track: --solo-safe is for buses; \(strip.name.terminalSafe) is a track (solo it, or route it to a solo-safe bus)")
            }
        }
        // `bus:reverb` is stored as the bus spells itself; a name that is no bus says which are.
        var routed = output
        if case .bus(let name) = output {
            routed = .bus(document.session.tracks[try TrackSelector.bus(of: name, in: document.session, command: "track")].name)
        }
        // One step however many options, made of the typed changes the screen's keys make:
        // mixer values, the track's make-up, its routing (an output closing a cycle is
        // refused before anything is saved).
        try TrackSelector.refusing("track") { try document.edit("track settings") { (s: inout Session) throws in
            if let gain { s.apply(MixerChange.gain(strip: index, decibels: gain)) }
            if let pan { s.apply(MixerChange.pan(strip: index, value: pan)) }
            if let muted { s.apply(MixerChange.mute(strip: index, on: muted)) }
            if let soloed { s.apply(MixerChange.solo(strip: index, on: soloed)) }
            if let input { try s.apply(TrackChange.input(strip: index, channels: input)) }
            if let armed { try s.apply(TrackChange.arm(strip: index, on: armed)) }
            if let monitoring { try s.apply(TrackChange.monitoring(strip: index, monitoring)) }
            if let routed { try s.apply(RoutingChange.output(strip: index, routed)) }
            if let soloSafe { try s.apply(RoutingChange.soloSafe(strip: index, on: soloSafe)) }
            // A bus renamed carries the sends and outputs that name it along.
            if let newName { try s.apply(RoutingChange.rename(strip: index, to: newName)) }
        } }
        var unfrozenFile: String?
        if let freeze {
            let track = document.session.tracks[index]
            if freeze {
                guard track.frozen == nil else { throw UsageError("track: \(track.name) is frozen already (--unfreeze first to render it again)") }
                var bar = ProgressBar(label: "freezing \(track.name.terminalSafe)", console: context.console)
                let result = try TrackFreeze.render(session: document.session, folder: folder, track: index) { bar.update($0) }
                bar.finish()
                for warning in result.warnings { context.console.err("tapedeck: warning: \(warning)\n") }
                try TrackSelector.refusing("track") { try document.apply(.freeze(strip: index, render: result.frozen)) }
                let rate = document.session.sampleRate
                context.console.out("froze \(track.name.terminalSafe) → \(result.frozen.file): \(TimeText.clock(frames: result.frozen.lengthFrames, sampleRate: rate)) (tail \(TimeText.clock(frames: result.tailFrames, sampleRate: rate)))")
            } else {
                guard let frozen = track.frozen else { throw UsageError("track: \(track.name) is not frozen") }
                unfrozenFile = frozen.file
                try TrackSelector.refusing("track") { try document.apply(.unfreeze(strip: index)) }
            }
        }
        if changesSomething || target == "add" { try context.save(document.session, to: folder) }
        // The render goes once the session no longer names it (the command line has no undo).
        if let file = unfrozenFile {
            unlink(folder.absolutePath(of: file))
            unlink(folder.peakPath(forAudio: file))
        }
        context.console.out(TrackCommand.describe(document.session.tracks[index], number: index + 1))
        return ExitCode.ok
    }

    /// Refuses what only a track can do (record, listen, freeze) on a bus, naming the option.
    private func refuseOnBus(_ bus: Track) throws(UsageError) {
        let asked = [(input != nil, "--input"), (armed == true, "--arm"), (armed == false, "--disarm"), (monitoring != nil, "--monitor"),
                     (freeze == true, "--freeze"), (freeze == false, "--unfreeze")].filter(\.0).map(\.1)
        guard let first = asked.first else { return }
        let why = first.hasSuffix("freeze") ? "has no regions to freeze (it sums what is routed to it)"
            : "has no input (it hears what is sent or routed to it)"
        throw UsageError("track: \(bus.name.terminalSafe) is a bus: \(first) makes no sense there; a bus \(why)")
    }

    /// One line: number, name, fader, pan, input, flags, monitoring, output and sends when
    /// routed, chains. A bus shows its width and output instead of an input and monitoring.
    static func describe(_ t: Track, number: Int) -> String {
        var flags = [String]()
        if t.isSoloSafe { flags.append("solo-safe") }
        if t.armed { flags.append("armed") }
        if t.mute { flags.append("muted") }
        if t.solo { flags.append("solo") }
        if t.isMIDI { flags.append("MIDI") }
        if t.frozen != nil { flags.append("frozen") }
        let chains = (t.inputChain.isEmpty ? "" : "  input chain \(t.inputChain)") + (t.playbackChain.isEmpty ? "" : "  chain \(t.playbackChain)")
        let flagText = flags.isEmpty ? "" : "  [" + flags.joined(separator: " ") + "]"
        let sends = t.sends.isEmpty ? "" : "  sends " + t.sends.map(RoutingText.short).joined(separator: ", ")
        if t.isBus {
            return "bus \(number) (\(t.name))  \(RoutingText.width(t))  fader \(Fader.text(t.gainDecibels)) dB  pan \(Pan.text(t.pan))  output \(t.output)\(flagText)\(sends)\(chains)"
        }
        let output = t.output == .master ? "" : "  output \(t.output)"
        return "track \(number) (\(t.name))  fader \(Fader.text(t.gainDecibels)) dB  pan \(Pan.text(t.pan))  \(InputChannels.text(t.inputChannels))  monitor \(t.monitoring.rawValue)\(flagText)\(output)\(sends)\(chains)"
    }
}
