import TapedeckRemote
#if canImport(Glibc)
import Glibc
#endif

/// Something besides the keyboard the screen's loop waits on and serves, on the UI thread:
/// the control socket, the session manager. The loop polls the keyboard and every service's
/// descriptors together, so a remote command is carried out at once and by the same thread
/// that handles keys.
public protocol ScreenService: AnyObject {
    /// Descriptors to wait on beside the keyboard.
    var pollDescriptors: [pollfd] { get }
    /// Handles whatever arrived (never blocks). UI thread.
    func service(_ model: ScreenModel)
}

/// The control socket (`tapedeck ctl`) as a screen service: each command goes through
/// ``ScreenModel/handleRemote(_:from:)``.
public final class ScreenControl: ScreenService {
    let server: ControlServer

    /// Serves `server`.
    public init(server: ControlServer) { self.server = server }

    public var pollDescriptors: [pollfd] { server.pollDescriptors }

    public func service(_ model: ScreenModel) {
        server.service { command, peer in model.handleRemote(command, from: peer.description) }
    }
}
