import CLV2
import Foundation

/// The host's URID map (urid:map, urid:unmap): one table for the whole process, so URIDs
/// agree between plugin instances, saved state and the atoms the host writes.
///
/// Plugins map URIs while they are instantiated and restored (off the audio thread); the
/// specification allows calls from any thread, so the table is behind a lock. A plugin that
/// maps on its audio thread (none of the ones we ship tests with do) takes that lock there.
final class URIDMap: @unchecked Sendable {
    /// The process's map.
    static let shared = URIDMap()

    private let lock = NSLock()
    private var ids: [String: LV2_URID] = [:]
    /// C strings of every mapped URI, by URID - 1; never freed, so `unmap` results stay valid.
    private var strings: [UnsafeMutablePointer<CChar>] = []

    /// The `LV2_URID_Map` and `LV2_URID_Unmap` structs plugins receive; allocated once.
    let mapFeatureData: UnsafeMutablePointer<LV2_URID_Map>
    let unmapFeatureData: UnsafeMutablePointer<LV2_URID_Unmap>

    private init() {
        mapFeatureData = .allocate(capacity: 1)
        mapFeatureData.initialize(to: LV2_URID_Map(handle: nil, map: { _, uri in
            guard let uri else { return 0 }
            return URIDMap.shared.map(String(cString: uri))
        }))
        unmapFeatureData = .allocate(capacity: 1)
        unmapFeatureData.initialize(to: LV2_URID_Unmap(handle: nil, unmap: { _, urid in
            URIDMap.shared.unmap(urid)
        }))
    }

    /// The URID of `uri` (new ones count up from 1). Any thread.
    func map(_ uri: String) -> LV2_URID {
        lock.lock()
        defer { lock.unlock() }
        if let id = ids[uri] { return id }
        strings.append(strdup(uri))
        let id = LV2_URID(strings.count)
        ids[uri] = id
        return id
    }

    /// The URI of `urid`, or nil for one never handed out. Any thread.
    func unmap(_ urid: LV2_URID) -> UnsafePointer<CChar>? {
        lock.lock()
        defer { lock.unlock() }
        guard urid > 0, Int(urid) <= strings.count else { return nil }
        return UnsafePointer(strings[Int(urid) - 1])
    }
}

/// URIs the host uses, mapped once.
struct HostURIDs: Sendable {
    let atomSequence: LV2_URID
    let atomChunk: LV2_URID
    let atomFloat: LV2_URID
    let atomInt: LV2_URID
    let midiEvent: LV2_URID
    let sampleRate: LV2_URID
    let minBlockLength: LV2_URID
    let maxBlockLength: LV2_URID
    let nominalBlockLength: LV2_URID
    let sequenceSize: LV2_URID
    let logError: LV2_URID
    let logWarning: LV2_URID

    static let shared: HostURIDs = {
        let m = URIDMap.shared
        return HostURIDs(
            atomSequence: m.map(LV2URI.atomSequence), atomChunk: m.map(LV2URI.atomChunk),
            atomFloat: m.map(LV2URI.atomFloat), atomInt: m.map(LV2URI.atomInt),
            midiEvent: m.map(LV2URI.midiEvent), sampleRate: m.map(LV2URI.sampleRate),
            minBlockLength: m.map(LV2URI.minBlockLength), maxBlockLength: m.map(LV2URI.maxBlockLength),
            nominalBlockLength: m.map(LV2URI.nominalBlockLength), sequenceSize: m.map(LV2URI.sequenceSize),
            logError: m.map(LV2URI.logError), logWarning: m.map(LV2URI.logWarning))
    }()
}

/// The URIs of the LV2 specification Tapedeck uses (the headers' macros do not reach Swift).
enum LV2URI {
    static let core = "http://lv2plug.in/ns/lv2core#"
    static let atom = "http://lv2plug.in/ns/ext/atom#"
    static let audioPort = core + "AudioPort"
    static let controlPort = core + "ControlPort"
    static let cvPort = core + "CVPort"
    static let inputPort = core + "InputPort"
    static let outputPort = core + "OutputPort"
    static let atomPort = atom + "AtomPort"
    static let atomSequence = atom + "Sequence"
    static let atomChunk = atom + "Chunk"
    static let atomFloat = atom + "Float"
    static let atomInt = atom + "Int"
    static let atomSupports = atom + "supports"
    static let midiEvent = "http://lv2plug.in/ns/ext/midi#MidiEvent"
    static let sampleRate = "http://lv2plug.in/ns/ext/parameters#sampleRate"
    static let minBlockLength = "http://lv2plug.in/ns/ext/buf-size#minBlockLength"
    static let maxBlockLength = "http://lv2plug.in/ns/ext/buf-size#maxBlockLength"
    static let nominalBlockLength = "http://lv2plug.in/ns/ext/buf-size#nominalBlockLength"
    static let sequenceSize = "http://lv2plug.in/ns/ext/buf-size#sequenceSize"
    static let boundedBlockLength = "http://lv2plug.in/ns/ext/buf-size#boundedBlockLength"
    static let coarseBlockLength = "http://lv2plug.in/ns/ext/buf-size#coarseBlockLength"
    static let minimumSize = "http://lv2plug.in/ns/ext/resize-port#minimumSize"
    static let uridMap = "http://lv2plug.in/ns/ext/urid#map"
    static let uridUnmap = "http://lv2plug.in/ns/ext/urid#unmap"
    static let options = "http://lv2plug.in/ns/ext/options#options"
    static let workerSchedule = "http://lv2plug.in/ns/ext/worker#schedule"
    static let workerInterface = "http://lv2plug.in/ns/ext/worker#interface"
    static let stateInterface = "http://lv2plug.in/ns/ext/state#interface"
    static let stateMapPath = "http://lv2plug.in/ns/ext/state#mapPath"
    static let stateFreePath = "http://lv2plug.in/ns/ext/state#freePath"
    static let log = "http://lv2plug.in/ns/ext/log#log"
    static let logError = "http://lv2plug.in/ns/ext/log#Error"
    static let logWarning = "http://lv2plug.in/ns/ext/log#Warning"
    static let hardRTCapable = core + "hardRTCapable"
    static let isLive = core + "isLive"
    static let inPlaceBroken = core + "inPlaceBroken"
    static let connectionOptional = core + "connectionOptional"
    static let isSideChain = core + "isSideChain"
    static let reportsLatency = core + "reportsLatency"
    static let toggled = core + "toggled"
    static let sampleRateProperty = core + "sampleRate"
    static let integer = core + "integer"
    static let enumeration = core + "enumeration"
    static let logarithmic = "http://lv2plug.in/ns/ext/port-props#logarithmic"
    static let rangeSteps = "http://lv2plug.in/ns/ext/port-props#rangeSteps"
    static let designation = core + "designation"
    static let control = core + "control"
    static let enabled = core + "enabled"
    static let freeWheeling = core + "freeWheeling"
    static let latency = core + "latency"
    static let instrumentPlugin = core + "InstrumentPlugin"
    static let generatorPlugin = core + "GeneratorPlugin"
    static let oscillatorPlugin = core + "OscillatorPlugin"
    static let minorVersion = core + "minorVersion"
    static let microVersion = core + "microVersion"
    static let beatsPerMinute = "http://lv2plug.in/ns/ext/time#beatsPerMinute"
    static let unitsUnit = "http://lv2plug.in/ns/extensions/units#unit"
    static let units = "http://lv2plug.in/ns/extensions/units#"
    static let presetClass = "http://lv2plug.in/ns/ext/presets#Preset"
    static let rdfsLabel = "http://www.w3.org/2000/01/rdf-schema#label"
}
