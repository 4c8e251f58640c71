import CLV2
import CLilv

/// Why a plugin could not be started: one line for the user, naming the plugin's URI.
struct LV2InstantiationError: Error, CustomStringConvertible {
    let uri: String
    let reason: String
    var description: String { "\(uri): \(reason)" }
}

/// One running instance of a plugin: the lilv instance, its features and worker, and a
/// preallocated buffer connected to every port. The node drives one per track channel for a
/// mono plugin on a wider track, one otherwise.
final class LV2Instance: @unchecked Sendable {
    let instance: UnsafeMutablePointer<LilvInstanceImpl>
    let features: LV2Features
    let worker: LV2Worker?
    /// The value of every control port, by port index (inputs are written by the node before
    /// each run, outputs by the plugin).
    let controls: UnsafeMutablePointer<Float>
    /// Main audio inputs and all audio outputs, in port order; each holds `maxFrames` floats.
    let audioInputs: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    let audioInputCount: Int
    let audioOutputs: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    let audioOutputCount: Int
    /// The atom input that takes the block's MIDI, if any.
    let midiInput: UnsafeMutableRawPointer?
    /// Bytes every atom buffer holds.
    let atomBytes: Int
    /// Every atom port's buffer, inputs first (`atomInputCount` of them).
    let atomBuffers: UnsafeMutablePointer<UnsafeMutableRawPointer>
    let atomCount: Int
    let atomInputCount: Int
    private let audioStorage: UnsafeMutablePointer<Float>

    /// Default atom buffer: room for about 300 MIDI events a block.
    static let defaultAtomBytes = 8192

    /// Instantiates `info`'s plugin at `sampleRate` for blocks of up to `maxFrames` and
    /// connects every port. Off the audio thread (takes the world's lock).
    init(info: LV2PluginInfo, sampleRate: Double, maxFrames: Int, isRealtime: Bool) throws(LV2InstantiationError) {
        if let missing = info.missingFeatures.first {
            throw LV2InstantiationError(uri: info.uri, reason: "needs the LV2 feature <\(missing)>, which Tapedeck does not provide")
        }
        if let odd = info.ports.first(where: { $0.kind == .other && !$0.isOptional }) {
            throw LV2InstantiationError(uri: info.uri, reason: "port '\(odd.symbol)' is of a type Tapedeck cannot connect")
        }
        let atomBytes = max(Self.defaultAtomBytes, info.ports.filter { $0.kind == .atom }.map(\.minimumBufferBytes).max() ?? 0)
        self.atomBytes = atomBytes
        let worker = info.hasWorkerInterface || info.requiredFeatures.contains(LV2URI.workerSchedule) ? LV2Worker(isRealtime: isRealtime) : nil
        let features = LV2Features(sampleRate: sampleRate, maxFrames: maxFrames, sequenceBytes: atomBytes, worker: worker)
        var libraryProblem: String?
        let made: UnsafeMutablePointer<LilvInstanceImpl>? = LV2World.shared.withWorld {
            guard let plugin = LV2World.shared.plugin(info.uri) else { return nil }
            libraryProblem = LV2World.shared.pinLibrary(of: plugin)
            if libraryProblem != nil { return nil }
            return lilv_plugin_instantiate(plugin, sampleRate, features.instantiation)
        }
        guard let made else {
            let said = libraryProblem.map { ": \($0)" } ?? features.lastLogMessage.map { " (it said: \($0))" } ?? ""
            throw LV2InstantiationError(uri: info.uri, reason: "failed to instantiate\(said)")
        }
        instance = made
        self.features = features
        self.worker = worker
        controls = .allocate(capacity: max(info.ports.count, 1))
        controls.initialize(repeating: 0, count: max(info.ports.count, 1))
        let inputs = info.audioInputs, outputs = info.audioOutputs
        audioInputCount = inputs.count
        audioOutputCount = outputs.count
        // One buffer per audio and CV port plus one of silence for side-chains and CV inputs.
        let buffers = info.ports.filter { $0.kind == .audio || $0.kind == .cv }.count + 1
        audioStorage = .allocate(capacity: buffers * maxFrames)
        audioStorage.initialize(repeating: 0, count: buffers * maxFrames)
        audioInputs = .allocate(capacity: max(inputs.count, 1))
        audioOutputs = .allocate(capacity: max(outputs.count, 1))
        let atoms = info.ports.filter { $0.kind == .atom }.sorted { $0.isInput && !$1.isInput }
        atomCount = atoms.count
        atomInputCount = atoms.filter(\.isInput).count
        atomBuffers = .allocate(capacity: max(atoms.count, 1))
        var midi: UnsafeMutableRawPointer?
        var nextBuffer = 1, nextInput = 0, nextOutput = 0
        let silence = audioStorage
        for port in info.ports {
            switch port.kind {
            case .control:
                controls[Int(port.index)] = port.defaultValue
                lilv_instance_connect_port(instance, port.index, controls + Int(port.index))
            case .audio, .cv:
                let buffer = audioStorage + nextBuffer * maxFrames
                nextBuffer += 1
                if port.kind == .audio && port.isInput && !port.isSideChain {
                    (audioInputs + nextInput).initialize(to: buffer); nextInput += 1
                } else if port.kind == .audio && !port.isInput {
                    (audioOutputs + nextOutput).initialize(to: buffer); nextOutput += 1
                }
                lilv_instance_connect_port(instance, port.index, port.isInput && (port.isSideChain || port.kind == .cv) ? silence : buffer)
            case .atom:
                let slot = atoms.firstIndex { $0.index == port.index }!
                let buffer = UnsafeMutableRawPointer.allocate(byteCount: atomBytes, alignment: 16)
                (atomBuffers + slot).initialize(to: buffer)
                AtomSequence.clear(buffer, capacity: atomBytes, isInput: port.isInput)
                if port.takesMIDI && midi == nil { midi = buffer }
                lilv_instance_connect_port(instance, port.index, buffer)
            case .other:
                lilv_instance_connect_port(instance, port.index, nil)
            }
        }
        midiInput = midi
        if let worker, let interface = lilv_instance_get_extension_data(instance, LV2URI.workerInterface) {
            worker.attach(interface.assumingMemoryBound(to: LV2_Worker_Interface.self), handle: lilv_instance_get_handle(instance))
        }
    }

    deinit {
        worker?.stop()
        LV2World.shared.withWorld { lilv_instance_free(instance) }
        controls.deallocate()
        audioStorage.deallocate()
        audioInputs.deallocate()
        audioOutputs.deallocate()
        for i in 0..<atomCount { atomBuffers[i].deallocate() }
        atomBuffers.deallocate()
    }

    /// Audio thread: empties every atom input (ready for this block's events) and gives every
    /// atom output its full capacity, as the atom extension asks before each run.
    @inline(__always) func prepareAtomPorts() {
        for i in 0..<atomCount {
            AtomSequence.clear(atomBuffers[i], capacity: atomBytes, isInput: i < atomInputCount)
        }
    }

    /// Audio thread: runs the plugin for `frameCount` frames and delivers its worker's
    /// responses. Realtime-safe as far as the plugin is.
    @inline(__always) func run(frameCount: Int) {
        lilv_instance_run(instance, UInt32(frameCount))
        worker?.deliverResponses()
    }
}

/// Writing an atom sequence (atom:Sequence of midi:MidiEvent) in place, without allocation.
enum AtomSequence {
    /// Audio thread: an input becomes an empty sequence; an output becomes a chunk as large
    /// as the buffer (for the plugin to fill).
    @inline(__always) static func clear(_ buffer: UnsafeMutableRawPointer, capacity: Int, isInput: Bool) {
        let urids = HostURIDs.shared
        if isInput {
            buffer.storeBytes(of: UInt32(8), toByteOffset: 0, as: UInt32.self)    // body: unit + pad
            buffer.storeBytes(of: urids.atomSequence, toByteOffset: 4, as: UInt32.self)
            buffer.storeBytes(of: UInt64(0), toByteOffset: 8, as: UInt64.self)
        } else {
            buffer.storeBytes(of: UInt32(capacity - 8), toByteOffset: 0, as: UInt32.self)
            buffer.storeBytes(of: urids.atomChunk, toByteOffset: 4, as: UInt32.self)
        }
    }

    /// Audio thread: appends a MIDI event of `count` (1…3) bytes at `frame`; false when the
    /// buffer is full (the event is dropped).
    @inline(__always) static func appendMIDI(_ buffer: UnsafeMutableRawPointer, capacity: Int, frame: Int64,
                                             status: UInt8, data1: UInt8, data2: UInt8, count: Int) -> Bool {
        let bodySize = Int(buffer.load(fromByteOffset: 0, as: UInt32.self))
        let offset = 8 + ((bodySize + 7) & ~7)
        let eventSize = 16 + ((count + 7) & ~7)
        guard offset + eventSize <= capacity else { return false }
        buffer.storeBytes(of: frame, toByteOffset: offset, as: Int64.self)
        buffer.storeBytes(of: UInt32(count), toByteOffset: offset + 8, as: UInt32.self)
        buffer.storeBytes(of: HostURIDs.shared.midiEvent, toByteOffset: offset + 12, as: UInt32.self)
        buffer.storeBytes(of: UInt64(0), toByteOffset: offset + 16, as: UInt64.self)
        buffer.storeBytes(of: status, toByteOffset: offset + 16, as: UInt8.self)
        if count > 1 { buffer.storeBytes(of: data1, toByteOffset: offset + 17, as: UInt8.self) }
        if count > 2 { buffer.storeBytes(of: data2, toByteOffset: offset + 18, as: UInt8.self) }
        buffer.storeBytes(of: UInt32(offset + eventSize - 8), toByteOffset: 0, as: UInt32.self)
        return true
    }
}
