import Foundation
import TapedeckCore
import TapedeckTransport

/// The answer to `status`: one JSON object on one line.
///
/// ```
/// {"armed_tracks":[{"name":"Vocal","number":2}],"bars_beats_ticks":"3|1|0","device":"jack",
///  "front_end":"screen","levels":{"master":[-12.1,-12.4],"tracks":[…]},"loop":null,"pid":4242,
///  "position":"00:04.000","position_frame":192000,"sample_rate":48000,
///  "session":"/home/me/song.tapedeck","speed":1,"state":"playing","xruns":0, …}
/// ```
/// Levels are peak dBFS per channel (null for silence).
public struct RemoteStatus {
    /// `screen`, `record` or `play`.
    public var frontEnd: String
    /// The session's folder (absolute), or nil for a take outside any session.
    public var sessionPath: String?
    /// The transport now.
    public var snapshot: TransportSnapshot
    /// The session now.
    public var session: Session
    /// The playback speed ratio.
    public var speed: Double
    /// Whether playback loops over the session's loop range.
    public var loopEnabled: Bool

    /// A status.
    public init(frontEnd: String, sessionPath: String?, snapshot: TransportSnapshot, session: Session, speed: Double,
                loopEnabled: Bool) {
        self.frontEnd = frontEnd
        self.sessionPath = sessionPath.map(RemoteStatus.absolute)
        self.snapshot = snapshot
        self.session = session
        self.speed = speed
        self.loopEnabled = loopEnabled
    }

    /// The state's word: `stopped`, `playing`, `count-in`, `pre-roll`, `recording`.
    public static func word(_ state: TransportState) -> String {
        switch state {
        case .stopped: "stopped"
        case .playing: "playing"
        case .countIn: "count-in"
        case .preRoll: "pre-roll"
        case .recording: "recording"
        }
    }

    /// The object as one line of JSON (keys sorted).
    public var json: String {
        let map = session.tempoMap
        let frame = snapshot.positionFrame
        var object: [String: Any] = [
            "pid": Int(getpid()),
            "front_end": frontEnd,
            "session": sessionPath as Any? ?? NSNull(),
            "state": RemoteStatus.word(snapshot.state),
            "position_frame": frame,
            "position": TimeText.clock(frames: frame, sampleRate: session.sampleRate),
            "bars_beats_ticks": map.barsBeatsTicks(ofFrame: frame),
            "sample_rate": session.sampleRate,
            "speed": speed,
            "xruns": snapshot.xrunCount,
            "dropped_frames": snapshot.droppedFrames,
            "underrun_frames": snapshot.underrunFrames,
            "device": snapshot.deviceName,
            "device_stopped": snapshot.deviceStopped,
        ]
        if let loop = session.loopRange {
            object["loop"] = ["on": loopEnabled, "start_frame": loop.startFrame, "end_frame": loop.endFrame] as [String: Any]
        } else {
            object["loop"] = NSNull()
        }
        object["armed_tracks"] = session.tracks.indices.filter { session.tracks[$0].armed }.map { t in
            ["number": t + 1, "name": session.tracks[t].name] as [String: Any]
        }
        let master = snapshot.masterLevels.isEmpty ? snapshot.outputLevels : snapshot.masterLevels
        object["levels"] = [
            "master": master.map { RemoteStatus.decibels($0.peakDecibels) },
            "tracks": session.tracks.indices.map { t in
                ["number": t + 1, "name": session.tracks[t].name,
                 "peak_dbfs": (t < snapshot.trackLevels.count ? snapshot.trackLevels[t] : []).map { RemoteStatus.decibels($0.peakDecibels) }]
                    as [String: Any]
            },
        ] as [String: Any]
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]),
              let text = String(data: data, encoding: .utf8) else { return "{}" }
        return SafeText.jsonSafe(text)
    }

    /// dBFS to 0.1, or null for silence (JSON has no −∞) and nonsense.
    static func decibels(_ value: Double) -> Any {
        guard value.isFinite else { return NSNull() }
        return (min(max(value, -200), 60) * 10).rounded() / 10
    }

    static func absolute(_ path: String) -> String {
        let full = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        return URL(fileURLWithPath: full).standardizedFileURL.path
    }
}
