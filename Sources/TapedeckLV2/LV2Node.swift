import CLV2
import CLilv
import Synchronization
import TapedeckDSP
#if canImport(Glibc)
import Glibc
#endif

/// An LV2 plugin as a node in a chain.
///
/// Channels: a plugin with one audio input and one output runs once per track channel (its
/// own instance each); otherwise one instance runs, its inputs fed the track's channels in
/// order (a stereo plugin on a mono track gets the mono signal on both inputs and its outputs
/// are averaged back; a single input on a stereo track gets the average of both channels).
/// Side-chain and CV inputs get silence. Instruments and generators add their output to what
/// passes through, as built-in ones do; effects replace it. MIDI from the block goes to the
/// plugin's MIDI atom input; its latency port is read after every run.
///
/// Instantiation, state restore and activation happen in `prepare`, off the audio thread; a
/// plugin that fails there is reported by ``problem`` (with its URI) and passed through, so
/// the chain never runs half-built.
final class LV2Node: StatefulNode, @unchecked Sendable {
    let info: LV2PluginInfo
    let descriptor: NodeDescriptor
    let parameters: NodeParameters
    private var presetState: OpaquePointer?
    private var savedState: OpaquePointer?
    private var creationProblem: String?
    private var instanceProblem: String?
    private var instances: [LV2Instance] = []
    private var perChannel = false
    private var channelCount = 0
    private var isRealtime = true
    private let reportedLatency = Atomic<Int>(0)
    private var sendAllNotesOff = false
    /// Between `prepare` and `restart`: the host's warm-up blocks, whose MIDI (a test note)
    /// must not reach the plugin — not every plugin forgets a note when reactivated.
    private var warmingUp = false
    /// The control inputs the node sets each block, as plain values the audio thread can
    /// walk without touching the port descriptions' strings.
    private var controlSlots = UnsafeMutableBufferPointer<ControlSlot>(start: nil, count: 0)
    private var latencyPortIndex = -1
    private var addsToInput = false
    /// Control values handed to lilv while it saves state (control thread).
    private let stateValues: UnsafeMutablePointer<Float>

    /// A node for `info`'s plugin starting from `preset` (a preset URI) and the saved state
    /// `stateName` in `stateFolder`. Their port values become the parameters' starting values;
    /// the rest of the state is restored into the instance in `prepare`. Off the audio thread.
    init(info: LV2PluginInfo, preset: String?, stateName: String?, stateFolder: String?) {
        self.info = info
        descriptor = info.descriptor
        parameters = NodeParameters(info.descriptor.parameters)
        stateValues = .allocate(capacity: max(info.descriptor.parameters.count, 1))
        stateValues.initialize(repeating: 0, count: max(info.descriptor.parameters.count, 1))
        let world = LV2World.shared
        world.withWorld {
            if let preset {
                if let node = lilv_new_uri(world.world, preset) {
                    lilv_world_load_resource(world.world, node)
                    presetState = lilv_state_new_from_world(world.world, URIDMap.shared.mapFeatureData, node)
                    lilv_node_free(node)
                }
                if presetState == nil { creationProblem = "preset <\(preset)> could not be read; starting from the defaults" }
            }
            if let stateName {
                guard let stateFolder else {
                    creationProblem = "state '\(stateName)' needs the session's plugins folder; starting from the defaults"
                    return
                }
                let path = "\(stateFolder)/\(stateName)/\(PluginStateFiles.stateFileName)"
                // Checked first: lilv would print its own complaint about a missing file.
                if access(path, R_OK) == 0 {
                    savedState = lilv_state_new_from_file(world.world, URIDMap.shared.mapFeatureData, nil, path)
                }
                if savedState == nil { creationProblem = "saved state \(path) is missing or unreadable; starting from the defaults" }
            }
        }
        for state in [presetState, savedState] { if let state { applyPortValues(of: state) } }
    }

    deinit {
        release()
        controlSlots.deallocate()
        if let presetState { lilv_state_free(presetState) }
        if let savedState { lilv_state_free(savedState) }
        stateValues.deallocate()
    }

    /// Sets parameters from the port values saved in `state`.
    private func applyPortValues(of state: OpaquePointer) {
        lilv_state_emit_port_values(state, { symbol, userData, value, size, type in
            guard let symbol, let userData, let value else { return }
            let node = Unmanaged<LV2Node>.fromOpaque(userData).takeUnretainedValue()
            let urids = HostURIDs.shared
            let number: Double
            switch (type, size) {
            case (urids.atomFloat, 4): number = Double(value.load(as: Float.self))
            case (urids.atomInt, 4): number = Double(value.load(as: Int32.self))
            default: return
            }
            node.parameters.set(String(cString: symbol), number)
        }, Unmanaged.passUnretained(self).toOpaque())
    }

    var problem: String? { instanceProblem ?? creationProblem }

    var latencyFrames: Int { instances.isEmpty ? 0 : reportedLatency.load(ordering: .relaxed) }

    /// The most latency a plugin may report and have compensated: 4 s (linear-phase plugins
    /// report up to about 1.5 s; more is a broken plugin).
    static let maximumLatencySeconds = 4.0
    private var maximumLatencyFrames = 192_000
    /// The latency last reported over the bound (0: none), for ``warning``.
    private let absurdLatency = Atomic<Int>(0)

    var warning: String? {
        let frames = absurdLatency.load(ordering: .relaxed)
        guard frames > 0 else { return nil }
        return "reports \(frames) frames of latency, more than the \(Int(Self.maximumLatencySeconds)) s a plugin may have: not compensated"
    }

    /// Off the audio thread: instantiates (one instance per channel for a mono plugin on a
    /// wider track), restores the preset and saved state, and activates. A failure leaves no
    /// instance at all and says why in ``problem``.
    func prepare(format: NodeFormat, maxFrames: Int) {
        release()
        channelCount = format.channelCount
        isRealtime = format.isRealtime
        maximumLatencyFrames = Int(format.sampleRate * Self.maximumLatencySeconds)
        absurdLatency.store(0, ordering: .relaxed)
        perChannel = info.audioInputs.count == 1 && info.audioOutputs.count == 1 && channelCount > 1
        var made: [LV2Instance] = []
        do {
            for _ in 0..<(perChannel ? channelCount : 1) {
                made.append(try LV2Instance(info: info, sampleRate: format.sampleRate,
                                            maxFrames: min(max(maxFrames, 1), Self.pluginBlockFrames), isRealtime: format.isRealtime))
            }
        } catch {
            instanceProblem = "\(error.reason); passed through"
            return
        }
        instanceProblem = nil
        controlSlots.deallocate()
        let slots = info.ports.compactMap { ControlSlot($0, sampleRate: format.sampleRate) }
        controlSlots = .allocate(capacity: slots.count)
        _ = controlSlots.initialize(from: slots)
        latencyPortIndex = info.latencyPort.map { Int($0.index) } ?? -1
        addsToInput = info.kind == .instrument || info.kind == .generator
        LV2World.shared.withWorld {
            for instance in made {
                for state in [presetState, savedState] {
                    if let state { lilv_state_restore(state, instance.instance, nil, nil, 0, instance.features.state) }
                }
                lilv_instance_activate(instance.instance)
            }
        }
        instances = made
        warmingUp = true
    }

    /// Off the audio thread: deactivates and activates every instance, which clears the
    /// plugin's voices and delay lines (a reset cannot: activation may not run on the audio
    /// thread).
    func restart() {
        for instance in instances {
            lilv_instance_deactivate(instance.instance)
            lilv_instance_activate(instance.instance)
        }
        sendAllNotesOff = false
        warmingUp = false
    }

    /// Audio thread: a plugin cannot be cleared from here; one that takes MIDI is sent "all
    /// sound off" and "all notes off" on every channel at the start of the next block.
    func reset() {
        sendAllNotesOff = info.takesMIDI
    }

    /// Off the audio thread, once the audio thread cannot reach the node.
    func release() {
        for instance in instances { lilv_instance_deactivate(instance.instance) }
        instances = []
    }

    /// Audio thread: sets the control ports from the parameters, feeds the audio inputs and
    /// the MIDI input, runs every instance and writes its outputs back. No allocation, lock
    /// or system call here; the plugin's own `run` is realtime-safe as far as it claims.
    func process(_ context: inout RenderContext) {
        let n = context.frameCount
        let channels = min(context.output.count, context.input.count, channelCount)
        guard !instances.isEmpty, n > 0, channels > 0 else {
            for c in 0..<min(context.output.count, context.input.count)
            where UnsafePointer(context.output[c]) != UnsafePointer(context.input[c]) {
                context.output[c].update(from: context.input[c], count: n)
            }
            return
        }
        // Plugins run in pieces of at most `pluginBlockFrames` (many refuse larger blocks).
        var offset = 0
        while offset < n {
            let count = min(Self.pluginBlockFrames, n - offset)
            for k in 0..<instances.count {
                // An index loop: an unspecialised enumerated() iterator allocates.
                let instance = instances[k]
                setControls(instance, transport: context.transport.advanced(by: offset))
                feedInputs(instance, number: k, context: context, channels: channels, offset: offset, frameCount: count)
                instance.prepareAtomPorts()
                if let midi = instance.midiInput, !warmingUp {
                    writeMIDI(midi, capacity: instance.atomBytes, events: context.midiEvents, offset: offset, frameCount: count)
                }
                instance.run(frameCount: count)
            }
            sendAllNotesOff = false
            writeOutputs(context: context, channels: channels, offset: offset, frameCount: count)
            offset += count
        }
        if latencyPortIndex >= 0 {
            let frames = instances[0].controls[latencyPortIndex]
            if frames.isFinite && frames > Float(maximumLatencyFrames) {
                // Compensating it would shift the whole mix by minutes (an export of silence):
                // not compensated, and said (``warning``).
                absurdLatency.store(Int(min(frames, 1e12)), ordering: .relaxed)
                reportedLatency.store(0, ordering: .relaxed)
            } else {
                reportedLatency.store(frames.isFinite ? Int(max(frames, 0).rounded()) : 0, ordering: .relaxed)
            }
        }
    }

    /// The longest block a plugin is given (and told about, as its maximum block length):
    /// longer host blocks, such as an export's, are run in pieces.
    static let pluginBlockFrames = 4096

    @inline(__always) private func setControls(_ instance: LV2Instance, transport: TransportInfo) {
        for slot in controlSlots {
            let value: Float
            switch slot.role {
            case .parameter:
                let v = Float(min(max(parameters.value(slot.parameter), slot.minimum), slot.maximum))
                value = slot.isInteger ? v.rounded() : v
            case .enabled: value = 1
            case .freeWheeling: value = isRealtime ? 0 : 1
            case .beatsPerMinute: value = Float(transport.tempoBPM)
            }
            instance.controls[slot.port] = value
        }
    }

    @inline(__always) private func feedInputs(_ instance: LV2Instance, number k: Int, context: RenderContext,
                                              channels: Int, offset: Int, frameCount n: Int) {
        let inputs = instance.audioInputCount
        for j in 0..<inputs {
            let buffer = instance.audioInputs[j]
            if perChannel {
                buffer.update(from: context.input[k] + offset, count: n)
            } else if inputs == 1 && channels > 1 {
                let scale = 1 / Float(channels)
                for i in 0..<n { buffer[i] = context.input[0][offset + i] * scale }
                for c in 1..<channels { for i in 0..<n { buffer[i] += context.input[c][offset + i] * scale } }
            } else if j < channels || channels == 1 {
                buffer.update(from: context.input[channels == 1 ? 0 : j] + offset, count: n)
            } else {
                buffer.update(repeating: 0, count: n)
            }
        }
    }

    @inline(__always) private func writeMIDI(_ buffer: UnsafeMutableRawPointer, capacity: Int, events: UnsafeBufferPointer<MIDIEvent>,
                                             offset: Int, frameCount n: Int) {
        // Index loops only: iterating a Range<UInt8> or an UnsafeBufferPointer<MIDIEvent>
        // instantiates generic metadata on first use, which allocates on this thread.
        if sendAllNotesOff {
            for channel in 0..<16 {
                let status = 0xB0 | UInt8(channel)
                _ = AtomSequence.appendMIDI(buffer, capacity: capacity, frame: 0, status: status, data1: 120, data2: 0, count: 3)
                _ = AtomSequence.appendMIDI(buffer, capacity: capacity, frame: 0, status: status, data1: 123, data2: 0, count: 3)
            }
        }
        for e in 0..<events.count {
            let event = events[e]
            guard Int(event.frameOffset) >= offset && Int(event.frameOffset) < offset + n else { continue }
            let kind = event.status & 0xF0
            let count = kind == 0xC0 || kind == 0xD0 ? 2 : 3
            _ = AtomSequence.appendMIDI(buffer, capacity: capacity, frame: Int64(Int(event.frameOffset) - offset), status: event.status,
                                        data1: event.data1, data2: event.data2, count: count)
        }
    }

    @inline(__always) private func writeOutputs(context: RenderContext, channels: Int, offset: Int, frameCount n: Int) {
        let outputs = instances[0].audioOutputCount
        guard outputs > 0 else {
            for c in 0..<channels where UnsafePointer(context.output[c]) != UnsafePointer(context.input[c]) {
                (context.output[c] + offset).update(from: context.input[c] + offset, count: n)
            }
            return
        }
        let adds = addsToInput
        for c in 0..<channels {
            let out = context.output[c] + offset
            if adds && UnsafePointer(out) != UnsafePointer(context.input[c] + offset) { out.update(from: context.input[c] + offset, count: n) }
            if perChannel {
                mix(instances[c].audioOutputs[0], into: out, count: n, scale: 1, add: adds)
            } else if channels == 1 && outputs > 1 {
                let pair = min(outputs, 2)
                for o in 0..<pair { mix(instances[0].audioOutputs[o], into: out, count: n, scale: 1 / Float(pair), add: adds || o > 0) }
            } else {
                mix(instances[0].audioOutputs[min(c, outputs - 1)], into: out, count: n, scale: 1, add: adds)
            }
        }
    }

    @inline(__always) private func mix(_ source: UnsafeMutablePointer<Float>, into out: UnsafeMutablePointer<Float>,
                                       count n: Int, scale: Float, add: Bool) {
        if add {
            for i in 0..<n { out[i] += source[i] * scale }
        } else if scale == 1 {
            out.update(from: source, count: n)
        } else {
            for i in 0..<n { out[i] = source[i] * scale }
        }
    }

    /// Saves the plugin's state (the first instance's: instances of one node share their
    /// settings) as a new folder in `stateFolder`, for plugins with the state extension; nil
    /// for the others, whose port values the chain text already holds. Control thread, while
    /// the audio thread may be running the plugin (the state extension allows it).
    func saveState(into stateFolder: String) throws(PluginStateError) -> String? {
        guard info.hasStateInterface, let instance = instances.first else { return nil }
        if mkdir(stateFolder, 0o755) != 0 && errno != EEXIST {
            throw PluginStateError(path: stateFolder, reason: "cannot create the folder: \(String(cString: strerror(errno)))")
        }
        let name = PluginStateFolder.newName(in: stateFolder, base: "lv2-\(info.shortName)")
        let folder = "\(stateFolder)/\(name)"
        for (i, _) in info.descriptor.parameters.enumerated() { stateValues[i] = Float(parameters.value(i)) }
        let world = LV2World.shared
        let status: Int32 = world.withWorld {
            guard let plugin = world.plugin(info.uri),
                  let state = lilv_state_new_from_instance(plugin, instance.instance, URIDMap.shared.mapFeatureData, nil,
                                                           folder, folder, folder, { symbol, userData, size, type in
                      guard let symbol, let userData, let size, let type else { return nil }
                      let node = Unmanaged<LV2Node>.fromOpaque(userData).takeUnretainedValue()
                      guard let i = node.parameters.index(of: String(cString: symbol)) else { return nil }
                      size.pointee = 4
                      type.pointee = HostURIDs.shared.atomFloat
                      return UnsafeRawPointer(node.stateValues + i)
                  }, Unmanaged.passUnretained(self).toOpaque(),
                                                           UInt32(LV2_STATE_IS_POD.rawValue | LV2_STATE_IS_PORTABLE.rawValue),
                                                           instance.features.state)
            else { return -1 }
            defer { lilv_state_free(state) }
            return lilv_state_save(world.world, URIDMap.shared.mapFeatureData, URIDMap.shared.unmapFeatureData, state, nil,
                                   folder, PluginStateFiles.stateFileName)
        }
        guard status == 0 else {
            throw PluginStateError(path: folder, reason: "\(info.uri) could not save its state (lilv_state_save returned \(status))")
        }
        return name
    }
}

/// One control input the node sets before each run.
private struct ControlSlot: BitwiseCopyable {
    enum Role: BitwiseCopyable { case parameter, enabled, freeWheeling, beatsPerMinute }
    let port: Int
    let role: Role
    let parameter: Int
    let isInteger: Bool
    /// Bounds at the real sample rate for rate-relative ports; unbounded otherwise (the
    /// parameter store already clamps to the descriptor's range).
    let minimum: Double
    let maximum: Double

    /// The slot for `port` at `sampleRate`, or nil when the node leaves it alone (outputs,
    /// fixed controls).
    init?(_ port: LV2Port, sampleRate: Double) {
        guard port.kind == .control, port.isInput else { return nil }
        self.port = Int(port.index)
        isInteger = port.isInteger
        minimum = port.rateRelativeBounds.map { $0.lowerBound * sampleRate } ?? -.infinity
        maximum = port.rateRelativeBounds.map { $0.upperBound * sampleRate } ?? .infinity
        switch port.role {
        case .parameter(let i): role = .parameter; parameter = i
        case .enabled: role = .enabled; parameter = 0
        case .freeWheeling: role = .freeWheeling; parameter = 0
        case .beatsPerMinute: role = .beatsPerMinute; parameter = 0
        case .fixed: return nil
        }
    }
}

/// File names inside one saved-state folder.
enum PluginStateFiles {
    /// The state description lilv writes (beside `manifest.ttl` and the files it links).
    static let stateFileName = "state.ttl"
}
