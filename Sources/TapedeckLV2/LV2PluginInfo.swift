import CLilv
import TapedeckDSP

/// One port of a plugin, as the host needs it to connect and drive it.
struct LV2Port: Sendable {
    /// What flows through it.
    enum Kind: Sendable { case audio, control, cv, atom, other }
    /// What a control input is for when the host, not the user, sets it.
    enum Role: Sendable { case parameter(Int), enabled, freeWheeling, beatsPerMinute, fixed }

    let index: UInt32
    let symbol: String
    let kind: Kind
    let isInput: Bool
    let isOptional: Bool
    let isSideChain: Bool
    /// Atom input that takes MIDI events.
    let takesMIDI: Bool
    /// Atom ports: bytes the plugin asks for (rsz:minimumSize), 0 when it does not say.
    let minimumBufferBytes: Int
    /// Control inputs: who sets it; its default for `.fixed`.
    let role: Role
    let defaultValue: Float
    /// Control output reporting the plugin's latency in frames.
    let reportsLatency: Bool
    /// Control inputs: a whole number (rounded before the plugin sees it).
    let isInteger: Bool
    /// Control inputs whose bounds are fractions of the sample rate: those fractions.
    let rateRelativeBounds: ClosedRange<Double>?
}

/// What Tapedeck knows about one installed plugin: its description, ports and parameters,
/// read once from lilv.
struct LV2PluginInfo: Sendable {
    let uri: String
    let shortName: String
    let name: String
    let author: String
    let version: String
    let className: String
    let classURI: String
    let kind: NodeKind
    let ports: [LV2Port]
    let requiredFeatures: [String]
    let hasStateInterface: Bool
    let hasWorkerInterface: Bool
    let bundlePath: String
    /// The rate at which bounds given as fractions of the sample rate are shown and checked.
    static let referenceSampleRate = 48000.0

    /// Node descriptor: `lv2:URI`, the plugin's name, its kind and one parameter per
    /// user-facing control input (id = port symbol).
    let descriptor: NodeDescriptor

    /// Features the host provides (or properties lilv reports as features that need nothing).
    static let providedFeatures: Set<String> = [
        LV2URI.uridMap, LV2URI.uridUnmap, LV2URI.options, LV2URI.boundedBlockLength, LV2URI.coarseBlockLength,
        LV2URI.workerSchedule, LV2URI.log, LV2URI.stateMapPath, LV2URI.stateFreePath,
        LV2URI.hardRTCapable, LV2URI.isLive, LV2URI.inPlaceBroken,
    ]

    /// Required features the host does not provide (the plugin cannot be instantiated).
    var missingFeatures: [String] { requiredFeatures.filter { !Self.providedFeatures.contains($0) } }

    var audioInputs: [LV2Port] { ports.filter { $0.kind == .audio && $0.isInput && !$0.isSideChain } }
    var audioOutputs: [LV2Port] { ports.filter { $0.kind == .audio && !$0.isInput } }
    var takesMIDI: Bool { ports.contains { $0.takesMIDI } }
    var latencyPort: LV2Port? { ports.first { $0.reportsLatency } }

    /// The short name of a plugin URI: its last path segment with `#` turned into `-`,
    /// lowercased (`…/swh-plugins/amp` → `amp`, `…/lv2/fil4#mono` → `fil4-mono`,
    /// `urn:ardour:a-comp#stereo` → `a-comp-stereo`).
    static func shortName(of uri: String) -> String {
        var text = Substring(uri)
        while text.hasSuffix("/") { text = text.dropLast() }
        if let cut = text.lastIndex(where: { $0 == "/" || $0 == ":" }) { text = text[text.index(after: cut)...] }
        return String(text.lowercased().map { $0.isASCII && ($0.isLetter || $0.isNumber || "_.+-".contains($0)) ? $0 : "-" })
    }

    /// Reads `plugin` from `world` (locked by the caller).
    init(plugin: OpaquePointer, world: LV2World) {
        uri = String(cString: lilv_node_as_uri(lilv_plugin_get_uri(plugin)))
        shortName = Self.shortName(of: uri)
        name = LV2World.take(lilv_plugin_get_name(plugin)) ?? shortName
        author = LV2World.take(lilv_plugin_get_author_name(plugin)) ?? ""
        let pluginClass = lilv_plugin_get_class(plugin)
        let label: OpaquePointer? = pluginClass.flatMap { lilv_plugin_class_get_label($0) }
        let classNode: OpaquePointer? = pluginClass.flatMap { lilv_plugin_class_get_uri($0) }
        className = label.flatMap { lilv_node_as_string($0) }.map { String(cString: $0) } ?? "Plugin"
        classURI = classNode.flatMap { lilv_node_as_uri($0) }.map { String(cString: $0) } ?? ""
        func integer(_ predicate: String) -> Int {
            guard let nodes = lilv_plugin_get_value(plugin, world.uri(predicate)) else { return 0 }
            defer { lilv_nodes_free(nodes) }
            return lilv_nodes_get_first(nodes).map { Int(lilv_node_as_int($0)) } ?? 0
        }
        version = "\(integer(LV2URI.minorVersion)).\(integer(LV2URI.microVersion))"
        var required: [String] = []
        if let features = lilv_plugin_get_required_features(plugin) {
            var i = lilv_nodes_begin(features)
            while !lilv_nodes_is_end(features, i) {
                if let f = lilv_nodes_get(features, i) { required.append(String(cString: lilv_node_as_uri(f))) }
                i = lilv_nodes_next(features, i)
            }
            lilv_nodes_free(features)
        }
        requiredFeatures = required
        hasStateInterface = lilv_plugin_has_extension_data(plugin, world.uri(LV2URI.stateInterface))
        hasWorkerInterface = lilv_plugin_has_extension_data(plugin, world.uri(LV2URI.workerInterface))
        bundlePath = lilv_node_as_uri(lilv_plugin_get_bundle_uri(plugin)).map { String(cString: $0) } ?? ""

        var ports: [LV2Port] = []
        var parameters: [ParameterDefinition] = []
        for index in 0..<lilv_plugin_get_num_ports(plugin) {
            guard let port = lilv_plugin_get_port_by_index(plugin, index) else { continue }
            let reader = PortReader(plugin: plugin, port: port, world: world)
            var role = LV2Port.Role.fixed
            let isControlInput = reader.kind == .control && reader.isInput
            if isControlInput {
                switch reader.designation {
                case LV2URI.enabled: role = .enabled
                case LV2URI.freeWheeling: role = .freeWheeling
                case LV2URI.beatsPerMinute: role = .beatsPerMinute
                default:
                    role = .parameter(parameters.count)
                    parameters.append(reader.parameter())
                }
            }
            ports.append(LV2Port(index: index, symbol: reader.symbol, kind: reader.kind, isInput: reader.isInput,
                                 isOptional: reader.has(LV2URI.connectionOptional), isSideChain: reader.has(LV2URI.isSideChain),
                                 takesMIDI: reader.kind == .atom && reader.isInput && reader.supportsMIDI,
                                 minimumBufferBytes: reader.minimumBufferBytes, role: role,
                                 defaultValue: Float(reader.range.defaultValue ?? reader.range.minimum ?? 0),
                                 reportsLatency: reader.kind == .control && !reader.isInput
                                     && (reader.has(LV2URI.reportsLatency) || reader.designation == LV2URI.latency),
                                 isInteger: reader.has(LV2URI.integer) || reader.has(LV2URI.toggled) || reader.has(LV2URI.enumeration),
                                 rateRelativeBounds: reader.rateRelativeBounds))
        }
        self.ports = ports
        kind = Self.classify(classURI: classURI, ports: ports)
        let code = String(shortName.filter { $0.isLetter || $0.isNumber }.prefix(4))
        descriptor = NodeDescriptor(name: "lv2:\(uri)", displayName: name, kind: kind, subtype: code.isEmpty ? "lv2 " : code,
                                    manufacturer: "LV2 ", version: version, tags: [className],
                                    summary: author.isEmpty ? className : "\(className) by \(author)",
                                    parameters: parameters)
    }

    /// The node kind of a plugin, from its class and its ports: MIDI in and no audio in is an
    /// instrument (as is anything of class Instrument), audio out and no input a generator,
    /// audio and MIDI in a music effect (so is a MIDI-only processor), anything else an effect.
    static func classify(classURI: String, ports: [LV2Port]) -> NodeKind {
        let audioIn = ports.contains { $0.kind == .audio && $0.isInput && !$0.isSideChain }
        let audioOut = ports.contains { $0.kind == .audio && !$0.isInput }
        let midiIn = ports.contains { $0.takesMIDI }
        if classURI == LV2URI.instrumentPlugin || (midiIn && !audioIn && audioOut) { return .instrument }
        if !audioIn && audioOut { return .generator }
        if midiIn { return .musicEffect }
        return .effect
    }
}

/// Reads one port's description from lilv (world locked by the caller).
private struct PortReader {
    let plugin: OpaquePointer
    let port: OpaquePointer
    let world: LV2World

    var symbol: String { String(cString: lilv_node_as_string(lilv_port_get_symbol(plugin, port))) }
    var name: String { LV2World.take(lilv_port_get_name(plugin, port)) ?? symbol }
    var isInput: Bool { lilv_port_is_a(plugin, port, world.uri(LV2URI.inputPort)) }
    var kind: LV2Port.Kind {
        if lilv_port_is_a(plugin, port, world.uri(LV2URI.audioPort)) { return .audio }
        if lilv_port_is_a(plugin, port, world.uri(LV2URI.controlPort)) { return .control }
        if lilv_port_is_a(plugin, port, world.uri(LV2URI.cvPort)) { return .cv }
        if lilv_port_is_a(plugin, port, world.uri(LV2URI.atomPort)) { return .atom }
        return .other
    }
    var rateRelativeBounds: ClosedRange<Double>? {
        guard kind == .control, has(LV2URI.sampleRateProperty) else { return nil }
        let (_, lo, hi) = range
        let low = lo ?? 0
        return low...max(hi ?? 0.5, low)
    }
    var supportsMIDI: Bool { lilv_port_supports_event(plugin, port, world.uri(LV2URI.midiEvent)) }
    func has(_ property: String) -> Bool { lilv_port_has_property(plugin, port, world.uri(property)) }

    func value(_ predicate: String) -> OpaquePointer? {
        guard let nodes = lilv_port_get_value(plugin, port, world.uri(predicate)) else { return nil }
        defer { lilv_nodes_free(nodes) }
        return lilv_nodes_get_first(nodes).flatMap { lilv_node_duplicate($0) }
    }
    var designation: String? { LV2World.take(value(LV2URI.designation)) }
    var minimumBufferBytes: Int {
        guard let node = value(LV2URI.minimumSize) else { return 0 }
        defer { lilv_node_free(node) }
        return Int(lilv_node_as_int(node))
    }

    var range: (defaultValue: Double?, minimum: Double?, maximum: Double?) {
        var d: OpaquePointer?, lo: OpaquePointer?, hi: OpaquePointer?
        lilv_port_get_range(plugin, port, &d, &lo, &hi)
        func number(_ node: OpaquePointer?) -> Double? {
            guard let node else { return nil }
            defer { lilv_node_free(node) }
            // Through the float's shortest text, so a bound of 1.41 is 1.41, not 1.4099999.
            let v = Double("\(lilv_node_as_float(node))") ?? .nan
            return v.isFinite ? v : nil
        }
        return (number(d), number(lo), number(hi))
    }

    var scalePoints: [ValueLabel] {
        guard let points = lilv_port_get_scale_points(plugin, port) else { return [] }
        defer { lilv_scale_points_free(points) }
        var labels: [ValueLabel] = []
        var i = lilv_scale_points_begin(points)
        while !lilv_scale_points_is_end(points, i) {
            if let point = lilv_scale_points_get(points, i), let value = lilv_scale_point_get_value(point),
               let label = lilv_scale_point_get_label(point) {
                labels.append(ValueLabel(value: Double(lilv_node_as_float(value)), label: String(cString: lilv_node_as_string(label))))
            }
            i = lilv_scale_points_next(points, i)
        }
        return labels.sorted { $0.value < $1.value }
    }

    /// A scale point's label as a choice name chain text can hold: lowercase words joined by
    /// `-` (`Seesaw - Equal Power` → `seesaw-equal-power`).
    static func choiceName(_ label: String) -> String {
        label.lowercased().split { !($0.isLetter || $0.isNumber || $0 == ".") }.joined(separator: "-")
    }

    /// The port's unit (units:unit), or, when it declares none, the one its name ends with
    /// (`Amps gain (dB)`, as the swh plugins write it).
    var unit: ParameterUnit {
        guard let node = value(LV2URI.unitsUnit) else {
            for (suffix, unit) in [("(dB)", ParameterUnit.decibels), ("(Hz)", .hertz), ("(ms)", .milliseconds),
                                   ("(s)", .seconds), ("(%)", .percent)] where name.hasSuffix(suffix) {
                return unit
            }
            return .plain
        }
        defer { lilv_node_free(node) }
        guard lilv_node_is_uri(node) else { return .plain }
        switch String(cString: lilv_node_as_uri(node)).dropFirst(LV2URI.units.count) {
        case "db": return .decibels
        case "hz": return .hertz
        case "ms": return .milliseconds
        case "s": return .seconds
        case "semitone12TET": return .semitones
        case "midiNote": return .midiNote
        case "frame": return .frames
        case "bpm": return .beatsPerMinute
        case "cent": return .cents
        case "pc": return .percent
        default: return .plain
        }
    }

    /// The parameter definition of a user-facing control input: id = symbol; a toggle is the
    /// choice off/on; an enumeration whose values are 0, 1, 2… is a choice of its labels;
    /// other scale points are shown as named values. A port whose bounds are fractions of the
    /// sample rate (lv2:sampleRate, e.g. a cutoff up to 0.45) is in hertz, its bounds taken
    /// at 48 kHz; the node clamps to the real rate's bounds.
    func parameter() -> ParameterDefinition {
        var (d, lo, hi) = range
        if has(LV2URI.sampleRateProperty) {
            let scale = LV2PluginInfo.referenceSampleRate
            (d, lo, hi) = (d.map { $0 * scale }, lo.map { $0 * scale }, hi.map { $0 * scale })
        }
        let minimum = lo ?? min(d ?? 0, 0)
        let maximum = max(hi ?? max(d ?? 1, 1), minimum)
        let defaultValue = min(max(d ?? minimum, minimum), maximum)
        var definition: ParameterDefinition
        if has(LV2URI.toggled) {
            definition = .choice(id: symbol, name: name, choices: ["off", "on"], defaultIndex: defaultValue >= 0.5 ? 1 : 0)
        } else {
            let points = scalePoints
            if has(LV2URI.enumeration), !points.isEmpty, points.enumerated().allSatisfy({ Double($0.offset) == $0.element.value }),
               case let names = points.map({ Self.choiceName($0.label) }),
               Set(names).count == names.count && names.allSatisfy({ Double($0) == nil && !$0.isEmpty }) {
                definition = .choice(id: symbol, name: name, choices: names, defaultIndex: Int(defaultValue.rounded()))
            } else {
                let whole = has(LV2URI.integer) || has(LV2URI.enumeration)
                let unit = has(LV2URI.sampleRateProperty) && self.unit == .plain ? .hertz : self.unit
                definition = ParameterDefinition(id: symbol, name: name, unit: unit, minimum: minimum, maximum: maximum,
                                                 defaultValue: defaultValue, decimals: whole ? 0 : 2, valueLabels: points)
            }
        }
        definition.travel = travel(minimum: minimum, maximum: maximum)
        if let node = value(LV2URI.rangeSteps) {
            definition.rangeSteps = Int(lilv_node_as_int(node))
            lilv_node_free(node)
        }
        return definition
    }

    /// The port's travel as Ardour's `ParameterDescriptor` reads it (`update_steps`): a
    /// logarithmic scale first (not on a toggle or an enumeration, and only over bounds of one
    /// sign), then a toggle, then whole steps.
    private func travel(minimum: Double, maximum: Double) -> ParameterTravel {
        if has(LV2URI.logarithmic), !has(LV2URI.toggled), !has(LV2URI.enumeration), maximum > minimum, minimum * maximum > 0 {
            return .logarithmic
        }
        if has(LV2URI.toggled) { return .toggle }
        if has(LV2URI.integer), minimum < maximum { return .integer }
        return .linear
    }
}
