/// Routing: where each strip's sound goes. A strip is a track or a bus (a track with no
/// regions and no input that other strips send to, ``Track/isBus``). Every strip has one
/// output — the master, a bus, or device outputs — and any number of sends to buses, each
/// before or after the fader, with its own level and pan.
///
/// Strips name their buses by name (any case), as MIDI bindings name tracks; renaming a bus
/// carries its sends and outputs along, removing it sends what went to it to the master.

/// A send from a strip to a bus.
public struct Send: Codable, Equatable, Sendable {
    /// The bus it feeds, by name (any case).
    public var bus: String
    /// Its level in dB (``Fader/silentDecibels`` is −∞).
    public var levelDecibels: Double
    /// −1 hard left … +1 hard right (a stereo source's balance).
    public var pan: Double
    /// Taken before the fader (and before mute and solo, as a console's foldback send is),
    /// rather than after them.
    public var preFader: Bool

    /// Creates a post-fader send at unity, centred.
    public init(bus: String, levelDecibels: Double = 0, pan: Double = 0, preFader: Bool = false) {
        self.bus = bus
        self.levelDecibels = levelDecibels
        self.pan = pan
        self.preFader = preFader
    }

    private enum CodingKeys: String, CodingKey { case bus, levelDecibels, pan, preFader }

    /// Decodes a send; `pan` and `preFader` may be absent (centred, post-fader).
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        bus = try c.decode(String.self, forKey: .bus)
        levelDecibels = try c.decodeIfPresent(Double.self, forKey: .levelDecibels) ?? 0
        pan = try c.decodeIfPresent(Double.self, forKey: .pan) ?? 0
        preFader = try c.decodeIfPresent(Bool.self, forKey: .preFader) ?? false
    }
}

/// Where a strip's output goes.
public enum StripOutput: Equatable, Sendable, Codable, CustomStringConvertible {
    /// The master bus (the default).
    case master
    /// A bus, by name (any case).
    case bus(String)
    /// Device output channels, 1-based: one (mono) or two (a pair), bypassing the master.
    case device([Int])

    /// Most device outputs a strip may name.
    public static let maximumDeviceChannel = 256

    /// `master`, `bus:NAME` or `out:3-4` (`out:3` for one channel): as typed and stored.
    public var description: String {
        switch self {
        case .master: return "master"
        case .bus(let name): return "bus:" + name
        case .device(let channels):
            guard let first = channels.first else { return "out:" }
            return channels.count == 1 ? "out:\(first)" : "out:\(first)-\(channels[channels.count - 1])"
        }
    }

    /// Reads `master`, `bus:NAME` (or a bare bus name is not accepted: `bus:` says which it
    /// is), `out:3`, `out:3-4` (a pair: two neighbouring channels). Throws a line naming the
    /// forms when the text is none of them.
    public static func parse(_ text: String) throws(RoutingError) -> StripOutput {
        let t = text.trimmingWhitespace()
        let lower = t.lowercased()
        if lower == "master" || lower == "main" { return .master }
        if lower.hasPrefix("bus:") {
            let name = String(t.dropFirst(4)).trimmingWhitespace()
            guard !name.isEmpty else { throw RoutingError("'\(t.terminalSafe)': bus: needs the bus's name (bus:Reverb)") }
            return .bus(name)
        }
        if lower.hasPrefix("out:") {
            let spec = String(lower.dropFirst(4))
            let parts = spec.split(separator: "-", omittingEmptySubsequences: false).map(String.init)
            let numbers = parts.compactMap { Int($0) }
            guard (parts.count == 1 || parts.count == 2), numbers.count == parts.count,
                  numbers.allSatisfy({ $0 >= 1 && $0 <= maximumDeviceChannel }) else {
                throw RoutingError("'\(t.terminalSafe)': device outputs are out:N or out:N-M (1...\(maximumDeviceChannel))")
            }
            if numbers.count == 2 && numbers[1] != numbers[0] + 1 && numbers[1] != numbers[0] {
                throw RoutingError("'\(t.terminalSafe)': a strip is mono or stereo: out:N (one output) or out:N-M with M = N+1 (a pair)")
            }
            return .device(numbers.count == 2 && numbers[1] != numbers[0] ? numbers : [numbers[0]])
        }
        throw RoutingError("'\(t.terminalSafe)' is not an output: master, bus:NAME or out:N[-M]")
    }

    /// Encoded as its text.
    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        do { self = try StripOutput.parse(text) } catch {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: error.description))
        }
    }

    /// Encoded as its text.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(description)
    }
}

/// A routing that cannot be: a cycle, a send to something that is not a bus, a bad output.
public struct RoutingError: Error, Equatable, Sendable, CustomStringConvertible {
    /// One line saying what and why.
    public let description: String

    /// Creates an error.
    public init(_ description: String) { self.description = description }
}

extension Track {
    /// Whether this strip is a bus (see ``bus``).
    public var isBus: Bool { bus == true }

    /// Channels a bus carries (1 or 2; stereo unless made mono).
    public var busChannelCount: Int { min(max(busChannels ?? 2, 1), 2) }

    /// Whether solo elsewhere leaves this strip heard (a bus marked solo-safe).
    public var isSoloSafe: Bool { soloSafe == true }

    /// A new empty bus: stereo unless `channelCount` is 1.
    public static func makeBus(name: String, channelCount: Int = 2) -> Track {
        var t = Track(name: name, inputChannels: [], monitoring: .off)
        t.bus = true
        t.busChannels = channelCount == 1 ? 1 : 2
        return t
    }
}

extension Session {
    /// The index of the bus called `name` (any case), or nil.
    public func busIndex(named name: String) -> Int? {
        let key = name.lowercased()
        return tracks.firstIndex { $0.isBus && $0.name.lowercased() == key }
    }

    /// The buses, in session order, with their indices.
    public var buses: [(index: Int, track: Track)] {
        tracks.enumerated().filter { $0.element.isBus }.map { (index: $0.offset, track: $0.element) }
    }

    /// The strips strip `index` feeds (its output's bus and its sends' buses), as indices;
    /// names that are not buses are left out (``routingProblem()`` names them).
    public func targets(of index: Int) -> [Int] {
        let t = tracks[index]
        var out: [Int] = []
        if case .bus(let name) = t.output, let b = busIndex(named: name) { out.append(b) }
        for s in t.sends { if let b = busIndex(named: s.bus), !out.contains(b) { out.append(b) } }
        return out
    }

    /// The first thing wrong with the routing, as one line, or nil: a send or output naming
    /// no bus (or a track), a strip feeding itself, a cycle (named strip by strip: `Reverb →
    /// Delay → Reverb`), a bus with regions. (A bus armed or holding MIDI is the validator's.)
    public func routingProblem() -> String? {
        for (i, t) in tracks.enumerated() {
            let who = "\(t.isBus ? "bus" : "track") \(t.name.terminalSafe)"
            if case .bus(let name) = t.output {
                guard let b = busIndex(named: name) else { return "\(who): output to \(missing(name))" }
                if b == i { return "\(who): a bus cannot output to itself" }
            }
            if case .device(let channels) = t.output,
               channels.isEmpty || channels.count > 2 || channels.contains(where: { $0 < 1 || $0 > StripOutput.maximumDeviceChannel }) {
                return "\(who): output \(t.output) is not out:N or out:N-M (1...\(StripOutput.maximumDeviceChannel))"
            }
            if t.sends.count > SessionLimits.maximumSends { return "\(who): \(t.sends.count) sends, at most \(SessionLimits.maximumSends)" }
            for s in t.sends {
                guard let b = busIndex(named: s.bus) else { return "\(who): send to \(missing(s.bus))" }
                if b == i { return "\(who): a bus cannot send to itself" }
            }
            if t.isBus && !t.regions.isEmpty { return "\(who): a bus has no regions" }
        }
        if let cycle = routingCycle() {
            return "routing cycle: " + cycle.map { tracks[$0].name.terminalSafe }.joined(separator: " → ")
        }
        return nil
    }

    /// `Drums, a track, not a bus` or `bus Verb, which does not exist`.
    private func missing(_ name: String) -> String {
        tracks.contains { $0.name.lowercased() == name.lowercased() }
            ? "\(name.terminalSafe), a track, not a bus" : "bus \(name.terminalSafe), which does not exist"
    }

    /// A cycle of strips feeding one another, first strip repeated at the end, or nil.
    public func routingCycle() -> [Int]? {
        // Depth-first, iteratively (a session may hold a thousand strips in a chain).
        var state = [UInt8](repeating: 0, count: tracks.count) // 0 new, 1 on the path, 2 done
        for root in tracks.indices where state[root] == 0 {
            var path: [Int] = [root]
            var next: [[Int]] = [targets(of: root)]
            state[root] = 1
            while let last = path.last {
                if var pending = next.popLast(), let t = pending.popLast() {
                    next.append(pending)
                    if state[t] == 1, let at = path.firstIndex(of: t) { return Array(path[at...]) + [t] }
                    if state[t] == 0 {
                        state[t] = 1
                        path.append(t)
                        next.append(targets(of: t))
                    }
                } else {
                    state[last] = 2
                    path.removeLast()
                }
            }
        }
        return nil
    }

    /// The strips in an order where every strip comes before the buses it feeds: tracks in
    /// session order, then buses (a bus after every bus feeding it). Nil when there is a cycle.
    public func renderOrder() -> [Int]? {
        let (order, complete) = RenderOrder.of(count: tracks.count, isBus: { tracks[$0].isBus }, targets: targets(of:))
        return complete ? order : nil
    }

    /// Renames strip `index`, carrying its MIDI bindings and every send and output that named
    /// it (when it is a bus) along.
    public mutating func renameStrip(_ index: Int, to name: String) {
        guard tracks.indices.contains(index) else { return }
        let old = tracks[index].name.lowercased()
        let wasBus = tracks[index].isBus
        renameTrack(index, to: name)
        guard wasBus else { return }
        for i in tracks.indices {
            if case .bus(let n) = tracks[i].output, n.lowercased() == old { tracks[i].output = .bus(name) }
            for s in tracks[i].sends.indices where tracks[i].sends[s].bus.lowercased() == old { tracks[i].sends[s].bus = name }
            for l in tracks[i].automation.indices {
                if case .send(let bus) = tracks[i].automation[l].parameter, bus.lowercased() == old { tracks[i].automation[l].parameter = .send(name) }
            }
        }
        for b in midiBindings.indices where midiBindings[b].kind == .send && midiBindings[b].bus?.lowercased() == old { midiBindings[b].bus = name }
    }

    /// Removes strip `index` and the MIDI bindings that name it (a later strip of that name
    /// must not inherit them); when it is a bus, what went to it goes to the master and its
    /// sends are removed. Returns what changed elsewhere, one line each.
    @discardableResult
    public mutating func removeStrip(_ index: Int) -> [String] {
        guard tracks.indices.contains(index) else { return [] }
        let gone = tracks.remove(at: index)
        midiBindings.removeAll { $0.track?.lowercased() == gone.name.lowercased() }
        guard gone.isBus else { return [] }
        let key = gone.name.lowercased()
        midiBindings.removeAll { $0.kind == .send && $0.bus?.lowercased() == key }
        var said: [String] = []
        for i in tracks.indices {
            if case .bus(let n) = tracks[i].output, n.lowercased() == key {
                tracks[i].output = .master
                said.append("\(tracks[i].name.terminalSafe) now outputs to the master")
            }
            let before = tracks[i].sends.count
            tracks[i].sends.removeAll { $0.bus.lowercased() == key }
            tracks[i].automation.removeAll { lane in
                if case .send(let bus) = lane.parameter { return bus.lowercased() == key }
                return false
            }
            if tracks[i].sends.count != before { said.append("\(tracks[i].name.terminalSafe)'s send to \(gone.name.terminalSafe) removed") }
        }
        return said
    }

    /// Whether strip `index` is heard, given mutes and solos along the routing: with any strip
    /// soloed, a strip is heard when it is soloed, solo-safe, feeds a soloed strip (a soloed
    /// bus keeps its sources), or is fed by one (a soloed track keeps its buses and returns).
    /// A muted strip is never heard. Nothing here looks at faders.
    public func isAudible(trackIndex index: Int) -> Bool {
        audibleStrips()[index]
    }

    /// ``isAudible(trackIndex:)`` for every strip at once.
    public func audibleStrips() -> [Bool] {
        let n = tracks.count
        guard tracks.contains(where: \.solo) else { return tracks.map { !$0.mute } }
        let order = renderOrder() ?? Array(tracks.indices)
        var fed = [Bool](repeating: false, count: n)
        for i in order where tracks[i].solo || fed[i] { for t in targets(of: i) { fed[t] = true } }
        var feeds = [Bool](repeating: false, count: n)
        for i in order.reversed() { feeds[i] = targets(of: i).contains { tracks[$0].solo || feeds[$0] } }
        return tracks.indices.map { i in
            let t = tracks[i]
            return !t.mute && (t.solo || t.isSoloSafe || fed[i] || feeds[i])
        }
    }
}

/// The order strips are rendered in, whatever holds the routing (a session, a graph spec).
public enum RenderOrder {
    /// Strips `0..<count` with every strip before the buses it feeds (`targets`): tracks in
    /// their order, then each bus once every strip feeding it is placed. Strips caught in a
    /// cycle come last, and `complete` is false.
    public static func of(count n: Int, isBus: (Int) -> Bool, targets: (Int) -> [Int]) -> (order: [Int], complete: Bool) {
        var feeders = [Int](repeating: 0, count: n)
        for i in 0..<n { for t in targets(i) where t >= 0 && t < n { feeders[t] += 1 } }
        var ordered = (0..<n).filter { !isBus($0) }
        var placed = [Bool](repeating: false, count: n)
        for i in ordered {
            placed[i] = true
            for t in targets(i) where t >= 0 && t < n { feeders[t] -= 1 }
        }
        var queue = (0..<n).filter { isBus($0) && feeders[$0] == 0 }
        var k = 0
        while k < queue.count {
            let b = queue[k]
            k += 1
            ordered.append(b)
            placed[b] = true
            for t in targets(b) where t >= 0 && t < n {
                feeders[t] -= 1
                if feeders[t] == 0 { queue.append(t) }
            }
        }
        let complete = ordered.count == n
        for i in 0..<n where !placed[i] { ordered.append(i) }
        return (ordered, complete)
    }
}
