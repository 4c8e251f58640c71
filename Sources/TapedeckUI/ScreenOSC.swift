import TapedeckRemote
#if canImport(Glibc)
import Glibc
#endif

/// OSC surfaces as a screen service: each command goes through
/// ``ScreenModel/handleOSC(_:from:continuing:)`` on the UI thread, and the surfaces that
/// registered get feedback (names, fader and button states, meters, transport) each pass of
/// the loop, the meters at most ``OSCFeedback/updatesPerSecond`` a second per strip.
/// Malformed datagrams and messages for addresses Tapedeck does not answer are dropped quietly
/// (a surface sends many it means for other programs); a well-formed request that cannot be
/// done is said on the message line.
public final class ScreenOSC: ScreenService {
    let server: OSCServer
    /// The feedback sent to registered surfaces.
    public let feedback: OSCFeedback
    /// Seconds after which a continuous control's next move starts a new undo step.
    static let gestureSeconds = 1.0
    /// When each surface's control (peer and address and strip) last moved.
    private var lastMove: [String: Double] = [:]
    private let clock: () -> Double

    /// Serves `server`; `clock` is monotonic seconds (a test may drive its own).
    public init(server: OSCServer, clock: (() -> Double)? = nil) {
        self.server = server
        self.feedback = OSCFeedback(server: server)
        self.clock = clock ?? { MonotonicClock.seconds() }
    }

    public var pollDescriptors: [pollfd] { server.pollDescriptors }

    public func service(_ model: ScreenModel) {
        let now = clock()
        for request in server.receive() {
            guard case .success(let command) = request.command else { continue }
            switch command {
            case .setSurface(let settings): feedback.register(request.peer, settings: settings, now: now)
            case .refresh: feedback.register(request.peer, settings: nil, now: now)
            default:
                let key = gestureKey(command).map { "\(request.peer) \($0)" }
                let continuing = key.flatMap { lastMove[$0] }.map { now - $0 < ScreenOSC.gestureSeconds } ?? false
                if let key {
                    if lastMove.count > 1024 { lastMove.removeAll() } // bounded, whatever a surface sends
                    lastMove[key] = now
                }
                model.handleOSC(command, from: request.peer.description, continuing: continuing)
            }
        }
        guard feedback.surfaceCount > 0 else { return }
        feedback.update(strips: model.oscStrips, meters: model.oscMeters, transport: model.oscTransport, now: now)
    }

    /// The control a continuous command moves, or nil for one that is a step of its own.
    private func gestureKey(_ command: OSCCommand) -> String? {
        switch command {
        case .stripGain(let s, _), .stripFader(let s, _): return "gain \(s)"
        case .stripPan(let s, _): return "pan \(s)"
        case .sendGain(let s, let n, _): return "send \(s) \(n)"
        default: return nil
        }
    }
}
