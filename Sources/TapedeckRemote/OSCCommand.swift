import TapedeckCore
#if canImport(Glibc)
import Glibc
#endif

/// Which strip a strip message means: Ardour's `ssid` (1-based in the surface's bank), the
/// master (`/master/…`), or the strip the surface selected (`/select/…`).
public enum OSCStripRef: Equatable, Hashable, Sendable {
    case id(Int)
    case master
    case selected
}

/// One validated request from an OSC surface, in Ardour's address space. Strip ids are
/// Ardour's `ssid`: 1-based in the surface's bank, which ``OSCSurfaces`` resolves against the
/// session of that moment.
public enum OSCCommand: Equatable, Sendable {
    case play, stop, toggleRoll, gotoStart, gotoEnd
    /// `/rewind`, `/ffwd`: a fast wind backwards or forwards (faster at each press).
    case rewind, fastForward
    /// `/locate spos roll`: to frame `frame`, then rolling (true), stopped (false).
    case locate(frame: Int64, roll: Bool)
    /// `/rec_enable_toggle`: a recording pass over the armed tracks starts, or stops.
    case recordToggle
    case loopToggle
    /// Ardour's `/save_state`: the session saved.
    case saveState
    case addMarker(name: String?)
    case nextMarker, previousMarker
    /// `/set_surface …`: the sender wants feedback.
    case setSurface(OSCSurfaceSettings)
    /// `/refresh`: the sender wants every name and state again.
    case refresh
    /// `/strip/list`: the sender wants a `/reply` row per strip.
    case stripList
    /// `/bank_up`, `/bank_down`: the next or previous bank of the surface's bank size.
    case bankUp, bankDown
    /// `/set_bank N`: the bank starting at strip N (1-based).
    case setBank(Int)
    /// A button's release, or a press with a value other than 1: nothing to do (Ardour's
    /// `osc.h` acts only on a float 1.0).
    case ignored
    case stripGain(strip: OSCStripRef, decibels: Double)
    /// Ardour's fader position 0…1, already turned into dB.
    case stripFader(strip: OSCStripRef, decibels: Double)
    /// Ardour's stereo position 0 (left) … 1 (right), already turned into −1…+1.
    case stripPan(strip: OSCStripRef, pan: Double)
    case stripMute(strip: OSCStripRef, on: Bool)
    case stripSolo(strip: OSCStripRef, on: Bool)
    case stripRecordEnable(strip: OSCStripRef, on: Bool)
    /// `/strip/monitor_input`: the track hears its input (on), or not.
    case stripMonitorInput(strip: OSCStripRef, on: Bool)
    /// `/strip/trimdB`: Tapedeck's strips have no trim (refused, with why).
    case stripTrim(strip: OSCStripRef, decibels: Double)
    /// `/strip/select ssid 1`: the surface's selected strip (for `/select/…`).
    case stripSelect(strip: Int)
    /// `sendid` is 1-based among the strip's sends.
    case sendGain(strip: OSCStripRef, send: Int, decibels: Double)
    /// `/select/plugin f delta`: the node `delta` on (or back) in the selected strip's chain
    /// (Ardour's `(int) f`: 1.0 the next, -1.0 the previous, 0.5 nothing).
    case selectPlugin(delta: Int)
    /// `/select/plug_page f ±1`: the plugin page's next or previous page of parameters (by
    /// the surface's `plugin_page_size`).
    case pluginPage(delta: Int)
    /// `/select/plugin/activate f` (on above 0) for the plugin page's node, or
    /// `/strip/plugin/activate ssid piid`, `/strip/plugin/deactivate ssid piid`: the node in
    /// (not bypassed) or bypassed.
    case pluginActive(strip: OSCStripRef, plugin: Int?, on: Bool)
    /// `/select/plugin/parameter`: parameter `parameter` (1-based) of node `plugin` (1-based;
    /// nil: the surface's current one) of the selected strip's chain to `position` 0…1 of
    /// its range.
    case pluginParameter(plugin: Int?, parameter: Int, position: Double)

    /// Ids above this are refused before any lookup (no session has as many strips).
    public static let maximumID = 100_000

    /// The addresses that are buttons: carried out on a press (no argument, `f 1.0`, `i 1`
    /// or `T`) and not on its release, as Ardour's `PATH_CALLBACK` does.
    static let buttons: [String: OSCCommand] = [
        "/transport_play": .play, "/transport_stop": .stop, "/toggle_roll": .toggleRoll, "/goto_start": .gotoStart,
        "/goto_end": .gotoEnd, "/rewind": .rewind, "/ffwd": .fastForward, "/rec_enable_toggle": .recordToggle,
        "/loop_toggle": .loopToggle, "/next_marker": .nextMarker, "/prev_marker": .previousMarker,
        "/refresh": .refresh, "/strip/list": .stripList, "/bank_up": .bankUp, "/bank_down": .bankDown,
        "/add_marker": .addMarker(name: nil), "/save_state": .saveState,
    ]

    /// The command `message` asks for, or why it cannot be one (one line).
    public static func parse(_ message: OSCMessage) -> Result<OSCCommand, OSCRefusal> {
        let a = message.arguments
        let p = OSCArguments(path: message.path, values: a)
        do throws(OSCRefusal) {
            if message.path == "/add_marker", a.count == 1, case .string(let name) = a[0] { return .success(.addMarker(name: name)) }
            if let button = buttons[message.path] { return .success(isPress(a) ? button : .ignored) }
            switch message.path {
            case "/locate":
                let frame = try p.integer(0, "spos")
                guard (0...Int(SessionLimits.maximumTimelineFrames)).contains(frame) else {
                    throw OSCRefusal("/locate: sample \(frame) is outside 0…\(SessionLimits.maximumTimelineFrames)")
                }
                return .success(.locate(frame: Int64(frame), roll: a.count > 1 ? try p.flag(1, "roll") : false))
            case "/set_surface": return .success(.setSurface(try surface(p)))
            case "/set_bank":
                let bank = try p.integer(0, "bank")
                guard (1...maximumID).contains(bank) else { throw OSCRefusal("/set_bank: bank \(bank) is not 1 or more") }
                return .success(.setBank(bank))
            default:
                if let strip = try stripCommand(message) { return .success(strip) }
                return .failure(OSCRefusal("\(message.path.terminalSafe): not an address Tapedeck answers"))
            }
        } catch {
            return .failure(error)
        }
    }

    /// Whether a button's arguments are a press: none, `f 1.0`, `i 1`, `T` (and anything
    /// Ardour does not check, such as a string). Ardour checks a lone float only; a lone int
    /// other than 1 is ignored here too, so a layout sending `i 1` then `i 0` presses once.
    static func isPress(_ a: [OSCValue]) -> Bool {
        guard a.count == 1 else { return true }
        switch a[0] {
        case .float(let v): return v == 1
        case .double(let v): return v == 1
        case .int(let v): return v == 1
        case .int64(let v): return v == 1
        case .bool(let b): return b
        default: return true
        }
    }

    /// A `/strip/…`, `/master/…` or `/select/…` message, its strip id where Ardour takes it:
    /// the first argument (`/strip/fader 1 0.5`), or the address (`/strip/fader/1 0.5`,
    /// `/strip/1/fader 0.5`, what a layout with feedback bit 4 sends). Nil: not one.
    private static func stripCommand(_ message: OSCMessage) throws(OSCRefusal) -> OSCCommand? {
        var parts = message.path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard parts.count >= 3, parts[0].isEmpty else { return nil }
        let section = parts[1]
        parts.removeFirst(2)
        var values = message.arguments
        let ref: OSCStripRef
        switch section {
        case "master": ref = .master
        case "select": ref = .selected
        case "strip":
            let id: Int
            if parts.count > 1, let n = Int(parts[0]) {
                id = n
                parts.removeFirst()
            } else if parts.count > 1, let n = Int(parts[parts.count - 1]) {
                id = n
                parts.removeLast()
            } else {
                id = try OSCArguments(path: message.path, values: values).integer(0, "ssid")
                values.removeFirst()
            }
            guard (1...maximumID).contains(id) else { throw OSCRefusal("\(message.path.terminalSafe): strip id \(id) is not 1 or more") }
            ref = .id(id)
        default: return nil
        }
        let address = "/\(section)/" + parts.joined(separator: "/")
        let p = OSCArguments(path: address, values: values)
        switch parts.joined(separator: "/") {
        case "gain": return .stripGain(strip: ref, decibels: OSCLaw.clampedDecibels(try p.number(0, "gain")))
        case "fader": return .stripFader(strip: ref, decibels: OSCLaw.decibels(position: try p.unit(0, "position")))
        case "pan_stereo_position": return .stripPan(strip: ref, pan: try p.unit(0, "position") * 2 - 1)
        case "mute": return .stripMute(strip: ref, on: try p.flag(0, "mute"))
        case "solo": return .stripSolo(strip: ref, on: try p.flag(0, "solo"))
        case "recenable": return .stripRecordEnable(strip: ref, on: try p.flag(0, "recenable"))
        case "monitor_input": return .stripMonitorInput(strip: ref, on: try p.flag(0, "monitor_input"))
        case "trimdB": return .stripTrim(strip: ref, decibels: try p.number(0, "trim"))
        case "select":
            guard case .id(let id) = ref else { return nil }
            return try p.flag(0, "select") ? .stripSelect(strip: id) : .ignored
        case "send/gain":
            guard case .id = ref else { return nil }
            let send = try p.integer(0, "sendid")
            guard (1...maximumID).contains(send) else { throw OSCRefusal("\(address): send id \(send) is not 1 or more") }
            return .sendGain(strip: ref, send: send, decibels: OSCLaw.clampedDecibels(try p.number(1, "gain")))
        case "send/fader":
            guard case .id = ref else { return nil }
            let send = try p.integer(0, "sendid")
            guard (1...maximumID).contains(send) else { throw OSCRefusal("\(address): send id \(send) is not 1 or more") }
            return .sendGain(strip: ref, send: send, decibels: OSCLaw.decibels(position: try p.unit(1, "position")))
        case "plugin" where ref == .selected, "plug_page" where ref == .selected:
            let delta = Int(max(-Double(maximumID), min(Double(maximumID), try p.number(0, "delta"))).rounded(.towardZero))
            if delta == 0 { return .ignored }
            return parts == ["plugin"] ? .selectPlugin(delta: delta) : .pluginPage(delta: delta)
        case "plugin/activate" where ref == .selected:
            return .pluginActive(strip: ref, plugin: nil, on: try p.number(0, "state") > 0)
        case "plugin/activate", "plugin/deactivate":
            guard case .id = ref else { return nil }
            let plugin = try p.integer(0, "piid")
            guard (1...maximumID).contains(plugin) else { throw OSCRefusal("\(address): plugin id \(plugin) is not 1 or more") }
            return .pluginActive(strip: ref, plugin: plugin, on: parts[1] == "activate")
        case let sub where ref == .selected && (sub == "plugin/parameter" || sub.hasPrefix("plugin/parameter/")):
            // The plugin and parameter ids as arguments, or in the address (Ardour's forms).
            let inAddress = sub.split(separator: "/").dropFirst(2).map { Int($0) }
            guard !inAddress.contains(nil), inAddress.count <= 2, inAddress.count + values.count >= 2, inAddress.count + values.count <= 3 else {
                return nil
            }
            let ids = inAddress.compactMap { $0 }
            let all = ids.map { OSCValue.int(Int32(clamping: $0)) } + values
            let q = OSCArguments(path: address, values: all)
            let plugin = all.count == 3 ? try q.integer(0, "piid") : nil
            let parameter = try q.integer(all.count - 2, "paid")
            guard (1...maximumID).contains(parameter), plugin.map({ (1...maximumID).contains($0) }) ?? true else {
                throw OSCRefusal("\(address): plugin and parameter ids are 1 or more")
            }
            return .pluginParameter(plugin: plugin, parameter: parameter, position: try q.unit(all.count - 1, "value"))
        default: return nil
        }
    }

    /// `/set_surface` with up to Ardour's nine arguments (each an int or a float).
    private static func surface(_ p: OSCArguments) throws(OSCRefusal) -> OSCSurfaceSettings {
        var s = OSCSurfaceSettings()
        if p.values.count > 0 {
            s.bankSize = try p.integer(0, "bank_size")
            guard (0...maximumID).contains(s.bankSize) else { throw OSCRefusal("/set_surface: bank_size \(s.bankSize) is not 0 or more") }
        }
        if p.values.count > 1 {
            let types = try p.integer(1, "strip_types")
            guard types >= 0 else { throw OSCRefusal("/set_surface: strip_types \(types) is not a set of bits") }
            s.stripTypes = OSCSurfaceSettings.StripTypes(rawValue: types)
        }
        if p.values.count > 2 {
            let bits = try p.integer(2, "feedback")
            guard bits >= 0 else { throw OSCRefusal("/set_surface: feedback \(bits) is not a set of bits") }
            s.feedback = OSCSurfaceSettings.Feedback(rawValue: bits).intersection(.all)
        }
        if p.values.count > 3 {
            s.faderMode = try p.integer(3, "fader_mode")
            guard (0...3).contains(s.faderMode) else { throw OSCRefusal("/set_surface: fader_mode \(s.faderMode) is not 0…3") }
        }
        if p.values.count > 5 {
            s.pluginPageSize = try p.integer(5, "plugin_page_size")
            guard (0...maximumID).contains(s.pluginPageSize) else {
                throw OSCRefusal("/set_surface: plugin_page_size \(s.pluginPageSize) is not 0 or more")
            }
        }
        if p.values.count > 6 {
            s.replyPort = try p.integer(6, "port")
            guard (0...65535).contains(s.replyPort) else { throw OSCRefusal("/set_surface: port \(s.replyPort) is not 0…65535") }
        }
        return s
    }
}

/// Why a message was not carried out: one line.
public struct OSCRefusal: Error, Equatable, CustomStringConvertible, Sendable {
    public let text: String
    public init(_ text: String) { self.text = text }
    public var description: String { text }
}

/// Reads a message's arguments the way Ardour's surfaces send them: a number may come as an
/// int or a float (TouchOSC sends floats for everything), a switch as a number or T/F.
struct OSCArguments {
    let path: String
    let values: [OSCValue]

    private func value(_ i: Int, _ name: String) throws(OSCRefusal) -> OSCValue {
        guard i < values.count else { throw OSCRefusal("\(path.terminalSafe): needs \(name) (argument \(i + 1))") }
        return values[i]
    }

    /// A finite number.
    func number(_ i: Int, _ name: String) throws(OSCRefusal) -> Double {
        let v: Double
        switch try value(i, name) {
        case .int(let x): v = Double(x)
        case .int64(let x): v = Double(x)
        case .float(let x): v = Double(x)
        case .double(let x): v = x
        default: throw OSCRefusal("\(path.terminalSafe): \(name) must be a number")
        }
        guard v.isFinite else { throw OSCRefusal("\(path.terminalSafe): \(name) must be a finite number") }
        return v
    }

    /// A whole number (a float only when it is one).
    func integer(_ i: Int, _ name: String) throws(OSCRefusal) -> Int {
        let v = try number(i, name)
        guard v == v.rounded(), abs(v) <= Double(1 << 53) else { throw OSCRefusal("\(path.terminalSafe): \(name) must be a whole number") }
        return Int(v)
    }

    /// A strip id, 1…``OSCCommand/maximumID``.
    func strip(_ i: Int) throws(OSCRefusal) -> Int {
        let id = try integer(i, "ssid")
        guard (1...OSCCommand.maximumID).contains(id) else { throw OSCRefusal("\(path.terminalSafe): strip id \(id) is not 1 or more") }
        return id
    }

    /// 0…1 (a little past either end is clamped: faders overshoot).
    func unit(_ i: Int, _ name: String) throws(OSCRefusal) -> Double {
        let v = try number(i, name)
        guard (-0.01...1.01).contains(v) else { throw OSCRefusal("\(path.terminalSafe): \(name) \(v) is not 0…1") }
        return min(1, max(0, v))
    }

    /// On or off: T/F, or a number read as Ardour reads it (`(int) f`: on from 1, so a
    /// float button's 1.0 is on and its 0.0 or 0.5 off).
    func flag(_ i: Int, _ name: String) throws(OSCRefusal) -> Bool {
        if case .bool(let b) = try value(i, name) { return b }
        return try number(i, name).rounded(.towardZero) != 0
    }

    /// A string.
    func string(_ i: Int, _ name: String) throws(OSCRefusal) -> String {
        guard case .string(let s) = try value(i, name) else { throw OSCRefusal("\(path.terminalSafe): \(name) must be a string") }
        return s
    }
}

/// Ardour's fader law, so a layout's fader sits where Ardour's would: position 0…1 to gain
/// `2^((p^(1/8)·198 − 192)/6)` (1 is +6 dB, 0 is −∞).
public enum OSCLaw {
    /// Below this Ardour's surfaces mean −∞.
    public static let silentBelowDecibels = -193.0

    /// dB for a fader position.
    public static func decibels(position p: Double) -> Double {
        guard p > 0 else { return Fader.silentDecibels }
        let exponent = (pow(min(1, p), 1.0 / 8) * 198 - 192) / 6
        return clampedDecibels(20 * log10(pow(2, exponent)))
    }

    /// The position for `decibels` (−∞ is 0; above +6 dB, 1).
    public static func position(decibels: Double) -> Double {
        guard decibels > silentBelowDecibels, !Fader.isSilent(decibels) else { return 0 }
        let gain = pow(10, decibels / 20)
        return min(1, max(0, pow((6 * log2(gain) + 192) / 198, 8)))
    }

    /// A surface's dB on Tapedeck's fader: −193 and below is −∞, the top is the fader's.
    public static func clampedDecibels(_ decibels: Double) -> Double {
        if decibels <= silentBelowDecibels { return Fader.silentDecibels }
        return min(Fader.maximumDecibels, decibels)
    }
}
