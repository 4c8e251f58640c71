import TapedeckCore
import TapedeckDSP
import TapedeckTransport

/// What OSC surfaces see of whoever hosts them (the screen, headless `play` or `record`) at
/// one moment: the session as it stands, the transport, the meters.
public struct OSCView {
    /// The session as the host holds it now (its mix, markers, tempo map). Changing it brings
    /// ``chains`` up to it (only chain text not read before is parsed): a lookup never parses.
    public var session: Session { didSet { chains.update(to: session) } }
    public var transport: OSCTransport
    /// Each strip's peak over its channels in dBFS (−∞ for silence), in track order.
    public var meters: [Double]
    /// Where `/goto_end` goes.
    public var endFrame: Int64
    /// Whether stopping ends the host (headless `play`): then a `/locate` with roll 0 does not
    /// stop it (a surface's locate button sends 0).
    public var stopEnds: Bool
    /// The master's peak over its channels (dBFS).
    public var masterMeter: Double
    /// What `/session_name` shows.
    public var sessionName: String
    /// The playback speed the user set (1: as recorded).
    public var speed: Double
    /// The session's chains as the host keeps them (``SessionChains``), always up to
    /// ``session``: what every chain lookup (``playbackChain(_:)``) reads.
    public private(set) var chains: SessionChains

    public init(session: Session, transport: OSCTransport, meters: [Double], endFrame: Int64, stopEnds: Bool,
                masterMeter: Double = -.infinity, sessionName: String = "", speed: Double = 1, chains: SessionChains? = nil) {
        // A host hands its kept chains; without them (a test, a one-off view) the session's
        // chains are read here, once for the view's life.
        var chains = chains ?? SessionChains()
        chains.update(to: session)
        self.chains = chains
        self.session = session
        self.transport = transport
        self.meters = meters
        self.endFrame = endFrame
        self.stopEnds = stopEnds
        self.masterMeter = masterMeter
        self.sessionName = sessionName
        self.speed = speed
    }

    /// Track `t`'s playback chain as ``chains`` read it (no parsing here); nil when there is no
    /// such track or the chain does not parse.
    public func playbackChain(_ t: Int) -> Chain? {
        guard session.tracks.indices.contains(t) else { return nil }
        return chains.slot(t).value
    }

    /// A session folder's name without its extension (`song` for `/music/song.tapedeck`).
    public static func sessionName(path: String?) -> String {
        guard let path else { return "" }
        var name = path.split(separator: "/").last.map(String.init) ?? ""
        if name.hasSuffix(".tapedeck") { name.removeLast(".tapedeck".count) }
        return name
    }

    /// Each strip's peak over its channels (dBFS) from a transport snapshot's levels.
    public static func meters(_ levels: [[ChannelLevel]], trackCount: Int) -> [Double] {
        (0..<trackCount).map { t in t < levels.count ? peak(levels[t]) : -.infinity }
    }

    /// The peak over `channels` (dBFS; −∞ with none).
    public static func peak(_ channels: [ChannelLevel]) -> Double { channels.map(\.peakDecibels).max() ?? -.infinity }
}

/// A host of OSC surfaces: it carries out what ``OSCSurfaces`` translated a message into, as
/// ``SurfaceCommand``s (the vocabulary every surface shares), and shows surfaces its state.
/// UI thread (or whichever one thread owns the host).
public protocol OSCHost: SurfaceHost {
    /// The state surfaces are shown and commands are checked against.
    var oscView: OSCView { get }
}

/// The transport as a surface sees it.
public struct OSCTransport: Equatable, Sendable {
    public var rolling: Bool
    public var recording: Bool
    public var loop: Bool
    public var frame: Int64
    public var sampleRate: Int

    public init(rolling: Bool, recording: Bool, loop: Bool, frame: Int64, sampleRate: Int) {
        self.rolling = rolling
        self.recording = recording
        self.loop = loop
        self.frame = frame
        self.sampleRate = sampleRate
    }
}
