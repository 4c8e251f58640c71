import Foundation
import TapedeckCore
import TapedeckDSP

/// One line of the control protocol: what a remote asks a running Tapedeck to do.
///
/// ```
/// play | stop | record [on|off|toggle] | rewind | back [N] | forward [N] | locate TIME
///   | loop on|off|toggle | speed R | save | status
/// ```
/// `record` toggles (starts recording the armed tracks, or stops a recording); `record on`
/// only starts one and `record off` only ends one, rolling on (MIDI machine control's record
/// strobe and exit, which must not toggle: a second strobe is not a stop); `back` and
/// `forward` move N bars, one by default (a surface's rewind and fast-forward buttons);
/// `TIME` is any time Tapedeck reads (`12.5`, `1:02`, `4.1.1`, `3|2|480`, `90000f`), read
/// against the running session's tempo; `R` is a speed as `--speed` takes it (`0.75`, `3/4`,
/// `75%`); `save` saves the session as the screen's save key does (a session manager's save
/// is this command; headless hosts have nothing to save and say so).
///
/// `cmd {"command":"track","value":{…},"cwd":"/home/me","label":"track 1 --gain -6"}` is a
/// command-line edit or read handed to the session's owner (see `SessionOwner`) as a typed
/// command: the command's name and its parsed value (``TypedCommand``), never its words. The
/// owner runs it as that command would and answers one JSON line,
/// `{"status":0,"out":"…","err":"…"}`.
public enum RemoteCommand: Equatable, Sendable {
    case play
    case stop
    /// Starts a pass on the armed tracks, or ends the one running.
    case record
    /// Starts a pass when none runs (one running is left alone).
    case recordOn
    /// Ends the pass running; the transport rolls on where it can (a headless `record` ends).
    case recordOff
    case rewind
    /// Moves the playhead by `bars` bars (negative: back) of the session's tempo map there.
    case bars(Int)
    case locate(String)
    case loop(Bool)
    /// Loops if it does not, stops looping if it does.
    case loopToggle
    case speed(Double)
    /// Saves the session where it is kept (the screen's save key, NSM's save, Ardour's
    /// `/save_state`).
    case save
    case status
    /// A command the asker parsed (its paths absolute), for the session's owner to run.
    case typed(TypedCommand)

    /// The words the protocol knows, for messages and `tapedeck help ctl`.
    public static let words = ["play", "stop", "record [on|off|toggle]", "rewind", "back [N]", "forward [N]", "locate TIME",
                               "loop on|off|toggle", "speed R", "save", "status"]

    /// Reads one line (its words separated by spaces); why not, in one line.
    public static func parse(_ line: String) -> Result<RemoteCommand, RemoteError> {
        let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        guard let verb = words.first?.lowercased() else {
            return .failure(RemoteError("an empty command (known: \(RemoteCommand.words.joined(separator: ", ")))"))
        }
        let rest = Array(words.dropFirst())
        func none(_ command: RemoteCommand) -> Result<RemoteCommand, RemoteError> {
            rest.isEmpty ? .success(command) : .failure(RemoteError("'\(verb)' takes nothing after it"))
        }
        switch verb {
        case "play": return none(.play)
        case "stop": return none(.stop)
        case "record":
            switch rest.map({ $0.lowercased() }) {
            case [], ["toggle"]: return .success(.record)
            case ["on"]: return .success(.recordOn)
            case ["off"]: return .success(.recordOff)
            default: return .failure(RemoteError("record takes nothing, on, off or toggle"))
            }
        case "rewind": return none(.rewind)
        case "back", "forward":
            let sign = verb == "back" ? -1 : 1
            if rest.isEmpty { return .success(.bars(sign)) }
            guard rest.count == 1, let n = Int(rest[0]), (1...9999).contains(n) else {
                return .failure(RemoteError("\(verb) takes a number of bars from 1 to 9999 (or nothing: one bar)"))
            }
            return .success(.bars(sign * n))
        case "status": return none(.status)
        case "save": return none(.save)
        case "cmd":
            let json = line.drop { $0 == " " || $0 == "\t" }.dropFirst(3)
            return TypedCommand.parse(String(json)).map { .typed($0) }
        case "locate":
            guard rest.count == 1 else { return .failure(RemoteError("locate needs one time, e.g. 'locate 4.1.1' or 'locate 1:30'")) }
            return .success(.locate(rest[0]))
        case "loop":
            switch rest.map({ $0.lowercased() }) {
            case ["on"]: return .success(.loop(true))
            case ["off"]: return .success(.loop(false))
            case ["toggle"]: return .success(.loopToggle)
            default: return .failure(RemoteError("loop takes on, off or toggle"))
            }
        case "speed":
            guard rest.count == 1, let speed = TimePitchSettings.parseSpeed(rest[0]) else {
                return .failure(RemoteError("speed needs a ratio, e.g. 'speed 0.75' (or 3/4, 75%)"))
            }
            if let problem = TimePitchSettings.speedProblem(speed) { return .failure(RemoteError(problem)) }
            return .success(.speed(speed))
        default:
            let known = ["play", "stop", "record", "rewind", "back", "forward", "locate", "loop", "speed", "save", "status"]
            // Echoed as typed (matched without case).
            return .failure(RemoteError("unknown command '\((words.first ?? verb).terminalSafe)'\(NameMatch.suggestion(verb, in: known)); known: \(RemoteCommand.words.joined(separator: ", "))"))
        }
    }

    /// What a MIDI transport request (machine control, a surface's buttons) asks, in this one
    /// vocabulary, so it is carried out, checked and refused as `tapedeck ctl` would be. MMC's
    /// locate is in microseconds; `sampleRate` turns it into the frame it names.
    public init(_ machine: MachineCommand, sampleRate: Int) {
        switch machine {
        case .play: self = .play
        case .stop, .pause: self = .stop
        case .recordStrobe: self = .recordOn
        case .recordExit: self = .recordOff
        case .rewind: self = .bars(-1)
        case .fastForward: self = .bars(1)
        case .toggleLoop: self = .loopToggle
        case .locate(let microseconds):
            let frame = Double(microseconds) * Double(max(sampleRate, 1)) / 1_000_000
            let clamped = Int64(min(max(frame, 0), Double(SessionLimits.maximumTimelineFrames)))
            self = .locate("\(clamped)f")
        }
    }

    /// The line that asks for this command.
    public var line: String {
        switch self {
        case .play: "play"
        case .stop: "stop"
        case .record: "record"
        case .recordOn: "record on"
        case .recordOff: "record off"
        case .rewind: "rewind"
        case .bars(let n): (n < 0 ? "back" : "forward") + (abs(n) == 1 ? "" : " \(abs(n))")
        case .status: "status"
        case .save: "save"
        case .locate(let time): "locate \(time)"
        case .loop(let on): "loop \(on ? "on" : "off")"
        case .loopToggle: "loop toggle"
        case .speed(let r): "speed \(r)"
        case .typed(let command): "cmd " + command.json
        }
    }
}

/// A command-line edit or read handed to the session's owner, typed: the command's name, its
/// value as the command's own `Codable` encoding (a JSON object: the asker parsed the command
/// line, the owner decodes it by the name and never sees words), the folder it was typed in
/// (what a command reads relative to it: the sample a chain names) and how it was typed
/// without the session (`marker add 1:00 Chorus`), only for the owner's undo step and message
/// line, never parsed.
public struct TypedCommand: Equatable, Sendable {
    /// The command's name (`marker`).
    public var name: String
    /// The command's value, a JSON object (its `Codable` encoding), paths in it absolute.
    public var value: String
    /// The folder it was typed in, absolute.
    public var workingFolder: String
    /// How it was typed, for people (the owner's undo step names it).
    public var label: String

    /// Creates a typed command.
    public init(name: String, value: String, workingFolder: String, label: String) {
        self.name = name
        self.value = value
        self.workingFolder = workingFolder
        self.label = label
    }

    /// The JSON object that travels after `cmd ` (or in a `cmd-file`), keys sorted.
    public var json: String {
        func quoted(_ text: String) -> String {
            (try? JSONSerialization.data(withJSONObject: [text], options: [.withoutEscapingSlashes]))
                .map { String(decoding: $0.dropFirst().dropLast(), as: UTF8.self) } ?? "\"\""
        }
        return "{\"command\":\(quoted(name)),\"cwd\":\(quoted(workingFolder)),\"label\":\(quoted(label)),\"value\":\(value)}"
    }

    /// Reads the JSON object after `cmd `; why not, in one line.
    public static func parse(_ json: String) -> Result<TypedCommand, RemoteError> {
        let why = RemoteError("cmd needs a JSON object: the command's name (command), its value (value, an object), the folder it was typed in (cwd) and how it was typed (label)")
        guard let object = try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any],
              let name = object["command"] as? String, !name.isEmpty,
              let folder = object["cwd"] as? String, folder.hasPrefix("/"),
              let value = object["value"] as? [String: Any],
              let valueData = try? JSONSerialization.data(withJSONObject: value, options: [.withoutEscapingSlashes, .sortedKeys]) else {
            return .failure(why)
        }
        return .success(TypedCommand(name: name, value: String(decoding: valueData, as: UTF8.self), workingFolder: folder,
                                     label: object["label"] as? String ?? name))
    }
}

/// A refusal or failure of the control protocol, as one line.
public struct RemoteError: Error, CustomStringConvertible, Equatable, Sendable {
    public var description: String
    /// Nothing listens on the socket: no such file, or a file left by a process that is gone
    /// (its pid may since be another program's). Whoever asked can go on as if no Tapedeck
    /// took requests there.
    public var nobodyListens: Bool
    public init(_ description: String, nobodyListens: Bool = false) {
        self.description = description
        self.nobodyListens = nobodyListens
    }
}

/// What a front-end answers a command: `ok` (with news), `error: why`, or a JSON object.
public enum RemoteReply: Equatable, Sendable {
    case ok(String)
    case error(String)
    case json(String)

    /// The reply's line, without its line end.
    public var line: String {
        switch self {
        case .ok(let text): text.isEmpty ? "ok" : "ok: \(text)"
        case .error(let text): "error: \(text)"
        case .json(let text): text
        }
    }
}
