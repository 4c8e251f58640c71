import TapedeckRemote
#if canImport(Glibc)
import Glibc
#endif

/// OSC surfaces as a screen service: ``OSCSurfaces`` (the one OSC translation, shared with
/// headless `play` and `record`) turns what arrives into the screen's own verbs
/// (``ScreenModel``'s ``OSCHost`` conformance) and feeds registered surfaces back each pass
/// of the loop.
public final class ScreenOSC: ScreenService {
    /// The surfaces served.
    public let surfaces: OSCSurfaces

    /// Serves `server`; `clock` is monotonic seconds (a test may drive its own).
    public init(server: OSCServer, clock: (() -> Double)? = nil) {
        surfaces = OSCSurfaces(server: server, clock: clock ?? { MonotonicClock.seconds() })
    }

    public var pollDescriptors: [pollfd] { surfaces.pollDescriptors }

    /// The next frame of feedback to registered surfaces.
    public var dueInMilliseconds: Int? { surfaces.secondsUntilDue().map { Int(($0 * 1000).rounded(.up)) } }

    public func service(_ model: ScreenModel) {
        model.readLink()
        surfaces.service(model)
    }
}
