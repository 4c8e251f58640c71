import Synchronization
import TapedeckDSP

/// One track's MIDI inside the engine: the playlist of its MIDI regions, the notes it has
/// switched on (so they can be switched off), and the buffer its chain reads each period.
///
/// The playlist is swapped without rebuilding the strip when only the regions change (a
/// quantise, a moved note region): the chain — an instrument with its sounding voices and
/// reverb tail — plays on. A replaced playlist is kept until the audio thread has installed
/// a graph built after the swap, so it is never freed while the audio thread reads it.
final class StripMIDI: @unchecked Sendable {
    /// Room for this many events a period (more are dropped and counted).
    static let capacity = 1024

    private let playlistPointer = Atomic<UnsafeMutableRawPointer?>(nil)
    /// Control thread: the playlist in use and those replaced (with the generation of the
    /// graph whose build replaced them).
    private(set) var playlist: MIDIPlaylist?
    private var retired: [(playlist: MIDIPlaylist, generation: Int)] = []

    // Audio thread.
    let buffer: UnsafeMutablePointer<MIDIEvent>
    var count = 0
    let heldFromRegions = HeldNotes()
    let heldFromInputs = HeldNotes()
    var lastPlaylist: UnsafeMutableRawPointer?
    var wasListening = false
    var lastEpoch: Int64 = -1

    /// Control thread.
    init() {
        buffer = .allocate(capacity: StripMIDI.capacity)
        buffer.initialize(repeating: MIDIEvent(frameOffset: 0, status: 0, data1: 0, data2: 0), count: StripMIDI.capacity)
    }

    deinit { buffer.deallocate() }

    /// Plays `next` from now on (nil: no MIDI regions). Control thread, while building graph
    /// `generation`.
    func setPlaylist(_ next: MIDIPlaylist?, generation: Int) {
        guard next !== playlist else { return }
        if let old = playlist { retired.append((old, generation)) }
        playlist = next
        playlistPointer.store(next.map { Unmanaged.passUnretained($0).toOpaque() }, ordering: .releasing)
    }

    /// Frees replaced playlists the audio thread can no longer read (it has installed
    /// graph `installed` or a newer one). Control thread.
    func collect(installed: Int) {
        retired.removeAll { $0.generation <= installed }
    }

    /// The playlist to read this period.
    ///
    /// Audio thread: one atomic load.
    @inline(__always)
    func currentPlaylist() -> UnsafeMutableRawPointer? { playlistPointer.load(ordering: .acquiring) }

    /// This period's events.
    var events: UnsafeBufferPointer<MIDIEvent> { UnsafeBufferPointer(start: buffer, count: count) }
}

/// The MIDI learn bindings of one graph, compiled for the audio thread: each controller
/// resolved to the mixer atomics or the node parameter it moves.
final class BindingTable: @unchecked Sendable {
    /// What a controller moves. Unmanaged: reading a binding moves no reference count
    /// (``owners`` keeps the objects alive).
    enum Target {
        case fader(Unmanaged<MixerControls>)
        case pan(Unmanaged<MixerControls>)
        case mute(Unmanaged<MixerControls>)
        case master
        case parameter(Unmanaged<NodeParameters>, index: Int, minimum: Double, maximum: Double, logarithmic: Bool, steps: Int)
        case send(Unmanaged<SendControls>)
    }

    struct Entry {
        /// Index in the graph spec's bindings (what the front-end is told).
        var binding: Int
        /// Channel 0…15, or -1 for any.
        var channel: Int
        var controller: Int
        var target: Target
        /// Whether the control's lane is being written by hand (touch or latch): a move takes
        /// hold of it, so the control is heard, not the lane, until the control thread lets go.
        var writes = false
    }

    let entries: UnsafeMutablePointer<Entry>
    let count: Int
    /// Keeps what the entries point at alive.
    private let owners: [AnyObject]

    /// Compiles `bindings` against the graph's strips (and `tracks`' lanes, to know which
    /// moves take hold of a lane being written). Control thread.
    init(_ bindings: [GraphSpec.Binding], strips: [PlaybackStrip], inputs: [Int: InputStrip], tracks: [GraphSpec.Track] = [],
         sendStates: [[PathState]] = []) {
        var list: [Entry] = []
        var owners: [AnyObject] = []
        for (i, b) in bindings.enumerated() {
            let spec = b.binding
            let channel = spec.channel.map { $0 - 1 } ?? -1
            var target: Target?
            switch spec.kind {
            case .master: target = .master
            case .fader, .pan, .mute:
                guard let t = b.track, strips.indices.contains(t) else { continue }
                let controls = strips[t].controls
                owners.append(controls)
                let ref = Unmanaged.passUnretained(controls)
                target = spec.kind == .fader ? .fader(ref) : spec.kind == .pan ? .pan(ref) : .mute(ref)
            case .parameter:
                guard let t = b.track, let node = spec.node, let id = spec.parameter else { continue }
                let chain = spec.inputChain == true ? inputs[t]?.chain : (strips.indices.contains(t) ? strips[t].chain : nil)
                guard let chain, chain.nodes.indices.contains(node - 1) else { continue }
                let parameters = chain.nodes[node - 1].parameters
                guard let index = parameters.index(of: id) else { continue }
                let d = parameters.definitions[index]
                owners.append(parameters)
                let sweep = d.controllerSweep
                target = .parameter(Unmanaged.passUnretained(parameters), index: index, minimum: d.minimum, maximum: d.maximum,
                                    logarithmic: sweep.logarithmic, steps: sweep.steps ?? 0)
            case .send:
                guard let t = b.track, let bus = spec.bus, tracks.indices.contains(t), sendStates.indices.contains(t),
                      let k = tracks[t].sendBuses.firstIndex(where: { $0.lowercased() == bus.lowercased() }),
                      sendStates[t].indices.contains(k) else { continue }
                let controls = sendStates[t][k].controls
                owners.append(controls)
                target = .send(Unmanaged.passUnretained(controls))
            }
            guard let target else { continue }
            var entry = Entry(binding: i, channel: channel, controller: spec.controller, target: target)
            if let t = b.track, tracks.indices.contains(t), spec.inputChain != true {
                entry.writes = tracks[t].automation.contains { lane in
                    guard lane.mode == .touch || lane.mode == .latch else { return false }
                    switch (lane.parameter, spec.kind) {
                    case (.gain, .fader), (.pan, .pan), (.mute, .mute): return true
                    case (.send(let bus), .send): return bus.lowercased() == spec.bus?.lowercased()
                    case (.node(let node, let id), .parameter):
                        return AutomationTargets.nodeIndex(node, in: tracks[t].chain) == (spec.node ?? 0) - 1
                            && id.lowercased() == spec.parameter?.lowercased()
                    default: return false
                    }
                }
            }
            list.append(entry)
        }
        count = list.count
        entries = .allocate(capacity: max(list.count, 1))
        for (i, e) in list.enumerated() { (entries + i).initialize(to: e) }
        self.owners = owners
    }

    deinit {
        entries.deinitialize(count: count)
        entries.deallocate()
    }
}
