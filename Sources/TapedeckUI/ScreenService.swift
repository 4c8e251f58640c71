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
    /// How soon the service must run again with nothing arriving (milliseconds), or nil.
    var dueInMilliseconds: Int? { get }
}

extension ScreenService {
    /// Nothing due: served when something arrives.
    public var dueInMilliseconds: Int? { nil }
}

/// The control socket (`tapedeck ctl`) as a screen service: each command goes through
/// ``ScreenModel/handleRemote(_:from:answer:)``, answered at once or (an import handed to
/// the screen) once its work has run on a worker and landed.
public final class ScreenControl: ScreenService {
    let server: ControlServer

    /// Serves `server`.
    public init(server: ControlServer) { self.server = server }

    public var pollDescriptors: [pollfd] { server.pollDescriptors }

    public func service(_ model: ScreenModel) {
        server.serviceDeferred { request in
            let server = self.server
            let answer = { (reply: RemoteReply) in
                server.deliver(reply, to: request.connection)
                // Sent now, not at the next pass: a late answer lands between two frames.
                server.sendPending()
            }
            switch request.command {
            case .success(let command): model.handleRemote(command, from: request.peer.description, answer: answer)
            case .failure(let error): answer(.error(error.description))
            }
        }
    }
}

/// The NSM session manager as a screen service: its saves go through the screen's own save
/// (Ctrl-S), a second open is refused (Tapedeck does not switch sessions: the manager
/// restarts it), and unsaved changes are told as they come and go.
public final class ScreenSessionManager: ScreenService {
    let client: NSMClient
    let manager: String

    /// Serves `client`, the manager called `manager`.
    public init(client: NSMClient, manager: String) {
        self.client = client
        self.manager = manager
    }

    public var pollDescriptors: [pollfd] { client.pollDescriptors }

    public func service(_ model: ScreenModel) {
        for event in client.receive() {
            switch event {
            case .save:
                // The control socket's save, as `tapedeck ctl save` and the save key ask it.
                if case .error(let problem) = model.handleRemote(.save, from: manager) {
                    client.fail("/nsm/client/save", code: .general, problem)
                } else {
                    client.reply(to: "/nsm/client/save", "saved")
                }
            case .open:
                client.fail("/nsm/client/open", code: .notNow, "Tapedeck opens one session per run: restart it for another")
            case .announced, .refused, .sessionIsLoaded:
                break
            }
        }
        client.setDirty(model.document.isDirty)
    }
}
