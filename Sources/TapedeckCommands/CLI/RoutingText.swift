import Foundation
import TapedeckCore

/// How `bus`, `send`, `track` and `info` print routing: the same words, and the same JSON
/// keys, everywhere.
enum RoutingText {
    /// `track 2 (Vocal)` or `bus 3 (Reverb)`: the strip's number counts tracks and buses alike.
    static func label(_ session: Session, _ index: Int) -> String {
        let t = session.tracks[index]
        return "\(t.isBus ? "bus" : "track") \(index + 1) (\(t.name.terminalSafe))"
    }

    /// `stereo` or `mono`: a bus's width.
    static func width(_ bus: Track) -> String { bus.busChannelCount == 1 ? "mono" : "stereo" }

    /// `-6.0 dB pre-fader, pan C`: a send's settings, without its bus.
    static func settings(_ send: Send) -> String {
        "\(Fader.text(send.levelDecibels)) dB \(send.preFader ? "pre-fader" : "post-fader"), pan \(Pan.text(send.pan))"
    }

    /// `Reverb -6.0 dB post` for listings that show many sends on one line.
    static func short(_ send: Send) -> String {
        "\(send.bus.terminalSafe) \(Fader.text(send.levelDecibels)) dB \(send.preFader ? "pre" : "post")"
    }

    /// What feeds strip `bus`: every strip whose output is it (`Keys (output)`) and every send
    /// to it (`Vocal (send -6.0 dB pre)`), in session order.
    static func feeders(of bus: Int, in session: Session) -> [(strip: Int, send: Send?)] {
        let key = session.tracks[bus].name.lowercased()
        var out: [(strip: Int, send: Send?)] = []
        for (i, t) in session.tracks.enumerated() where i != bus {
            if case .bus(let name) = t.output, name.lowercased() == key { out.append((i, nil)) }
            for s in t.sends where s.bus.lowercased() == key { out.append((i, s)) }
        }
        return out
    }

    /// `Keys (output), Vocal (send -6.0 dB pre)`, or `nothing`.
    static func feedersText(of bus: Int, in session: Session) -> String {
        let list = feeders(of: bus, in: session).map { f in
            "\(session.tracks[f.strip].name.terminalSafe) (\(f.send.map { "send \(Fader.text($0.levelDecibels)) dB \($0.preFader ? "pre" : "post")" } ?? "output"))"
        }
        return list.isEmpty ? "nothing" : list.joined(separator: ", ")
    }

    /// The strips routed to device outputs, each with the highest output it names: what a
    /// device must open for every strip to be heard.
    static func deviceOutputs(of session: Session) -> [(name: String, output: StripOutput, highest: Int)] {
        session.tracks.compactMap { t in
            guard case .device(let channels) = t.output, let highest = channels.max() else { return nil }
            return (t.name, t.output, highest)
        }
    }

    /// The JSON spelling of a level: a number of dB, or null for −∞ (JSON has no infinity).
    static func decibels(_ db: Double) -> Any {
        Fader.isSilent(db) || !db.isFinite ? NSNull() : (db * 100).rounded() / 100
    }

    /// A send as JSON.
    static func json(_ send: Send) -> [String: Any] {
        ["bus": send.bus, "level_db": decibels(send.levelDecibels), "pan": send.pan, "pre_fader": send.preFader]
    }

    /// One bus as JSON: what `bus list --json` prints and `info --json` carries.
    static func busJSON(_ session: Session, _ index: Int) -> [String: Any] {
        let t = session.tracks[index]
        return [
            "number": index + 1, "name": t.name, "channels": t.busChannelCount, "gain_db": decibels(t.gainDecibels),
            "pan": t.pan, "mute": t.mute, "solo": t.solo, "solo_safe": t.isSoloSafe, "output": t.output.description,
            "sends": t.sends.map(json), "chain": t.playbackChain,
            "fed_by": feeders(of: index, in: session).map { f -> [String: Any] in
                var o: [String: Any] = ["strip": session.tracks[f.strip].name, "via": f.send == nil ? "output" : "send"]
                if let s = f.send { o["level_db"] = decibels(s.levelDecibels); o["pre_fader"] = s.preFader; o["pan"] = s.pan }
                return o
            },
        ]
    }

    /// Pretty, key-sorted JSON on stdout (a whole document, unlike `play`'s one object a line).
    static func printJSON(_ object: Any, to console: Console) throws {
        let data = try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        console.out(SafeText.jsonSafe(String(decoding: data, as: UTF8.self)))
    }
}
