import TapedeckCore
import TapedeckDSP
import TapedeckIO

/// `tapedeck region`: lists a track's regions and edits one, so a script can assemble a
/// session: move, trim, split, fade, gain, rate, duplicate, raise, delete.
struct RegionCommand: HandedCommand {
    static let spec = CommandSpec(
        name: "region", summary: "list a track's regions, or move, trim, split, fade, gain, stretch, quantise, raise or delete one",
        synopsis: ["region SESSION TRACK", "region SESSION TRACK N move TIME", "region SESSION TRACK N trim [--start TIME] [--end TIME]",
                   "region SESSION TRACK N split TIME", "region SESSION TRACK N fade [--in LENGTH] [--out LENGTH]",
                   "region SESSION TRACK N gain DB", "region SESSION TRACK N rate R | rate --length LENGTH",
                   "region SESSION TRACK N quantize GRID [--strength S]",
                   "region SESSION TRACK N duplicate|raise|delete"],
        positionals: [PositionalSpec("SESSION", complete: .session), PositionalSpec("TRACK", complete: .none),
                      PositionalSpec("N", complete: .none),
                      PositionalSpec("ACTION", complete: .choices,
                                     choices: ["move", "trim", "split", "fade", "gain", "rate", "quantize", "duplicate", "raise", "delete"])],
        options: [
            OptionSpec("--start", value: "TIME", "trim: the region's new start on the timeline"),
            OptionSpec("--end", value: "TIME", "trim: the region's new end on the timeline"),
            OptionSpec("--in", value: "LENGTH", "fade: the fade-in's length"),
            OptionSpec("--out", value: "LENGTH", "fade: the fade-out's length"),
            OptionSpec("--length", value: "LENGTH", "rate: stretch the region to last this long"),
            OptionSpec("--strength", value: "S", "quantize: how far notes move towards the grid, 1%...100% (default 100%)"),
            OptionSpec(flag: "--with-automation", "move: the track's automation points under the region go with it"),
        ],
        details: """
        Without N, lists the track's regions, numbered in timeline order, each with its id. TRACK
        is a number or a name (any case). N counts the track's regions along the timeline (the
        listing shows it), or is a region's id, #12: an id stays the region's through every
        edit (a split's right half, a duplicate get new ones), so a script can keep it.
        move starts region N at TIME (--with-automation: the track's automation points under
        it go with it, replacing those where it lands); split cuts it in two at TIME (a take splits its stack);
        gain sets the region gain, -inf...+24 dB. Where regions overlap, the upper layer plays
        over what lies under it with 5 ms crossfades: `raise` puts N on top; a duplicate lies on
        top, right after N. `rate R` plays the source at R (0.5, 1/2, 50%: twice as long, pitch
        kept, rendered with Rubber Band R3); `rate --length 8.0` stretches N to last that long.
        `quantize GRID` (a MIDI region) moves each note's start towards the nearest line of GRID
        (1/1 … 1/64, 1/8t triplet, 1/4. dotted, bar, beat) by --strength, keeping its
        length; the notes are written to a new file in midi/ (the old one stays).
        Times and lengths are seconds, m:ss.mmm, frames (90000f) or bar.beat.sixteenth. Saved at
        once.
        """,
        examples: ["tapedeck region song.tapedeck vocal 2 move 1:04.5",
                   "tapedeck region song.tapedeck 1 1 trim --start 0:01 --end 0:09",
                   "tapedeck region song.tapedeck 1 1 fade --in 0.01 --out 2",
                   "tapedeck region song.tapedeck keys 1 quantize 1/16 --strength 75%"])

    /// What to do to the region.
    enum Edit: Codable {
        case move(String, withAutomation: Bool), trim(start: String?, end: String?), split(String), fade(fadeIn: String?, fadeOut: String?)
        case gain(Double), rate(Double), stretch(String), quantize(grid: String, strength: String?), duplicate, raise, delete
    }

    let folder: SessionFolder
    let trackText: String
    let number: Int?
    /// `#12`: the region by its id, which no other edit changes (see `Region.id`).
    let regionID: Int?
    let edit: Edit?

    init(arguments: inout Arguments) throws {
        let start = try arguments.option("--start"), end = try arguments.option("--end")
        let fadeIn = try arguments.option("--in"), fadeOut = try arguments.option("--out")
        let length = try arguments.option("--length")
        let strength = try arguments.option("--strength")
        let withAutomation = arguments.flag("--with-automation")
        folder = SessionFolder(path: try arguments.required("a session folder"))
        trackText = try arguments.required("a track number or name")
        guard let n = arguments.positional() else {
            if start != nil || end != nil || fadeIn != nil || fadeOut != nil || length != nil || strength != nil || withAutomation {
                throw UsageError("region: name the region (its number in the listing) and what to do")
            }
            number = nil; edit = nil; regionID = nil
            return
        }
        if n.hasPrefix("#") {
            guard let id = Int(n.dropFirst()), id >= 1 else { throw UsageError("region: '\(n)' is not a region's id (#12, as listed)") }
            regionID = id
            number = 0
        } else {
            guard let value = Int(n), value >= 1 else { throw UsageError("region: '\(n)' is not a region number (1, 2, … as listed) or id (#12)") }
            regionID = nil
            number = value
        }
        let value = n
        let verbs = ["move", "trim", "split", "fade", "gain", "rate", "quantize", "duplicate", "raise", "delete"]
        guard let verb = arguments.positional() else { throw UsageError("region: what should region \(value) do? (\(verbs.joined(separator: ", ")))") }
        func operand(_ what: String) throws(UsageError) -> String {
            guard let v = arguments.positional() else { throw UsageError("region: \(verb) needs \(what)") }
            return v
        }
        switch verb.lowercased() {
        case "move": edit = .move(try operand("a time (the new start)"), withAutomation: withAutomation)
        case "split": edit = .split(try operand("a time (where to cut)"))
        case "trim":
            guard start != nil || end != nil else { throw UsageError("region: trim needs --start TIME, --end TIME or both") }
            edit = .trim(start: start, end: end)
        case "fade":
            guard fadeIn != nil || fadeOut != nil else { throw UsageError("region: fade needs --in LENGTH, --out LENGTH or both") }
            edit = .fade(fadeIn: fadeIn, fadeOut: fadeOut)
        case "gain":
            let text = try operand("a level in dB")
            guard let db = Fader.parse(text), db <= 24 else { throw UsageError("region: gain '\(text)' must be a level in dB, -inf...+24") }
            edit = .gain(db)
        case "rate":
            if let length { edit = .stretch(length); break }
            let text = try operand("a rate (0.5, 1/2, 50%) or --length LENGTH")
            guard let r = TimePitchSettings.parseSpeed(text) else { throw UsageError("region: rate '\(text)' is not a rate (0.5, 1/2, 50%, 2x)") }
            guard r >= 1.0 / 32, r <= 32 else { throw UsageError("region: rate \(text) is outside 1/32...32") }
            edit = .rate(r)
        case "quantize", "quantise":
            edit = .quantize(grid: try operand("a grid (1/16, 1/8t, 1/4., bar, beat)"), strength: strength)
        case "duplicate": edit = .duplicate
        case "raise": edit = .raise
        case "delete": edit = .delete
        default:
            throw UsageError("region: unknown edit '\(verb)'\(NameMatch.suggestion(verb, in: verbs)) (one of \(verbs.joined(separator: ", ")))")
        }
        if strength != nil, case .quantize = edit {} else if strength != nil {
            throw UsageError("region: --strength is for quantize")
        }
        if withAutomation, case .move = edit {} else if withAutomation {
            throw UsageError("region: --with-automation is for move")
        }
    }

    /// The track's region indices in timeline order (then layer): what N counts.
    static func timelineOrder(_ track: Track) -> [Int] {
        track.regions.indices.sorted { (track.regions[$0].timelineStartFrame, $0) < (track.regions[$1].timelineStartFrame, $1) }
    }

    func run(_ context: CommandContext) throws -> Int32 {
        // One writer per session (see SessionLock): only a change takes the lock; showing reads.
        let lock = edit != nil ? try SessionLock.acquire(folder) : nil
        defer { withExtendedLifetime(lock) {} }
        var document = SessionDocument(session: try context.load(folder))
        let t = try TrackSelector.material(of: trackText, in: document.session, command: "region",
                                           doing: "has no regions (it sums what is sent or routed to it)")
        guard let number, let edit else {
            context.console.out(RegionCommand.listing(document.session, track: t))
            return ExitCode.ok
        }
        let order = RegionCommand.timelineOrder(document.session.tracks[t])
        let ref: RegionRef
        if let regionID {
            guard let found = document.session.regionRef(id: regionID) else {
                throw UsageError("region: the session has no region #\(regionID) (tapedeck region SESSION TRACK lists them)")
            }
            guard found.track == t else {
                throw UsageError("region: #\(regionID) is on track \(found.track + 1) (\(document.session.tracks[found.track].name)), not on track \(t + 1)")
            }
            ref = found
        } else {
            guard number <= order.count else {
                throw UsageError("region: track \(t + 1) (\(document.session.tracks[t].name)) has \(order.count) region\(order.count == 1 ? "" : "s"); there is no region \(number)")
            }
            ref = RegionRef(track: t, region: order[number - 1])
        }
        let map = document.session.tempoMap
        func frames(_ text: String) throws(TimeText.ParseError) -> Int64 { try TimeText.frames(from: text, tempoMap: map) }
        let fileFrames = { (r: Region) -> Int64? in try? AudioFileReader(path: folder.absolutePath(of: r.file), blockFrames: 16).frameCount }
        // Said only once the move is saved: a refused one says only why.
        var farWarning: String?
        // The words resolve to the one region edit the screen's keys make too (RegionChange).
        let change: RegionChange
        switch edit {
        case .move(let text, let withAutomation):
            let at = try frames(text)
            farWarning = document.session.farPastEndWarning(at, typed: text)
            change = .move(toFrame: at, carryingAutomation: withAutomation)
        case .trim(let start, let end):
            change = .trim(startFrame: try start.map(frames), endFrame: try end.map(frames),
                           sourceFrameCount: end == nil ? nil : fileFrames(try document.session.region(ref)))
        case .split(let text):
            change = .split(atFrame: try frames(text))
        case .fade(let fadeIn, let fadeOut):
            change = .fades(inFrames: try fadeIn.map(frames), outFrames: try fadeOut.map(frames))
        case .gain(let db):
            change = .gain(decibels: db)
        case .rate(let rate):
            change = .stretch(byFactor: try document.session.region(ref).rate / rate)
        case .stretch(let text):
            change = .stretchTo(lengthFrames: try frames(text))
        case .quantize(let grid, let strength):
            let region = try document.session.region(ref)
            guard region.isMIDI else { throw UsageError("region: region \(region.id.map { "#\($0)" } ?? "\(number)") of track \(t + 1) is audio; quantize moves MIDI notes") }
            try document.session.checkNotFrozen(t)
            let setting = try QuantizeSetting.parse(grid: grid, strength: strength, timeSignature: map.timeSignature).get()
            change = .replace(with: try MIDIRegionFile.quantized(region, setting: setting, folder: folder, tempoMap: map))
        case .duplicate: change = .duplicate
        case .raise: change = .raise
        case .delete: change = .delete
        }
        let gone = try document.session.region(ref)
        guard let result = try document.apply(change, to: ref) else {
            try context.save(document.session, to: folder)
            context.console.out("deleted region \(gone.id.map { "#\($0)" } ?? "\(number)") of track \(t + 1): \(RegionCommand.line(gone, session: document.session))")
            return ExitCode.ok
        }
        try context.save(document.session, to: folder)
        if let farWarning { context.console.err("tapedeck: warning: \(farWarning)\n") }
        let after = RegionCommand.timelineOrder(document.session.tracks[t])
        let shown = (after.firstIndex(of: result) ?? 0) + 1
        let region = document.session.tracks[t].regions[result]
        context.console.out("region \(shown) \(region.id.map { "#\($0) " } ?? "")of track \(t + 1): \(RegionCommand.line(region, session: document.session))")
        return ExitCode.ok
    }

    /// Every region of track `t`, numbered in timeline order.
    static func listing(_ session: Session, track t: Int) -> String {
        let track = session.tracks[t]
        let order = timelineOrder(track)
        guard !order.isEmpty else { return "track \(t + 1) (\(track.name)) has no regions" }
        var lines = ["track \(t + 1) (\(track.name)): \(order.count) region\(order.count == 1 ? "" : "s") (where they overlap, a higher layer plays over a lower)"]
        for (n, i) in order.enumerated() {
            let r = track.regions[i]
            var extra = "  layer \(i + 1)"
            if let g = r.takeGroup, let k = r.takeNumber { extra += "  take \(g).\(k)\(track.isActive(r) ? " (plays)" : "")" }
            lines.append("  \(n + 1)  \(r.id.map { "#\($0)" } ?? "")  \(line(r, session: session))\(extra)")
        }
        return lines.joined(separator: "\n")
    }

    /// Span, file, offset, and whatever differs from the defaults.
    static func line(_ r: Region, session: Session) -> String {
        var text = "\(session.clockText(r.timelineStartFrame))-\(session.clockText(r.timelineEndFrame))  \(r.file) from \(r.sourceOffsetFrame)f"
        if r.gainDecibels != 0 { text += "  gain \(Fader.text(r.gainDecibels)) dB" }
        if r.fadeInFrames > 0 || r.fadeOutFrames > 0 { text += "  fades \(session.clockText(r.fadeInFrames))/\(session.clockText(r.fadeOutFrames))" }
        if r.rate != 1 { text += "  rate \(r.rate)" }
        if r.isMIDI { text += "  MIDI" }
        return text
    }
}
