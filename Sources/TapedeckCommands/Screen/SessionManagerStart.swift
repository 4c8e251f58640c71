import Foundation
import TapedeckEngine
import TapedeckRemote
import TapedeckDevices

/// The screen joining an NSM session when `NSM_URL` is set: announce, then wait for the
/// manager to name the project before anything (the JACK client above all) is opened, as
/// NSM's API asks.
struct SessionManagerStart {
    let client: NSMClient
    /// Where the session lives: the manager's path with `.tapedeck` added.
    let sessionPath: String
    /// The JACK client name the manager gave.
    let clientID: String
    /// The manager's name, for the message line.
    let manager: String

    /// How long the screen waits for the manager's answer and its open.
    static let waitSeconds = 10.0

    /// Joins the manager in `NSM_URL`; nil when it is not set, or the manager refused or did
    /// not answer (said in `messages`: Tapedeck then runs on its own).
    static func join(messages: inout [String]) -> SessionManagerStart? {
        guard let url = ProcessInfo.processInfo.environment["NSM_URL"], !url.isEmpty else { return nil }
        guard let client = NSMClient(url: url) else {
            messages.append("session manager: NSM_URL '\(url.terminalSafe)' is not an address liblo can reach; running without it")
            return nil
        }
        client.announce(executable: CommandLine.arguments.first ?? "tapedeck")
        var manager: String?
        let deadline = Date().addingTimeInterval(waitSeconds)
        while Date() < deadline {
            for event in client.receive(milliseconds: 100) {
                switch event {
                case .announced(let name): manager = name
                case .refused(let code, let text):
                    messages.append("session manager refused Tapedeck (\(code)): \(text.terminalSafe); running without it")
                    return nil
                case .open(let path, _, let id):
                    return SessionManagerStart(client: client, sessionPath: path + ".tapedeck", clientID: id,
                                               manager: manager ?? "the session manager")
                case .save, .sessionIsLoaded: break
                }
            }
        }
        messages.append("session manager at \(url.terminalSafe) did not \(manager == nil ? "answer" : "open a session") within \(Int(waitSeconds)) s; running without it")
        return nil
    }

    /// The device under the manager: the JACK client it named (when `--device` asks for JACK,
    /// or asks nothing and a JACK server runs), else what `--device` says.
    func device(given: String?) -> String {
        if let given, JACKRequest.clientName(inDeviceName: given) == nil { return given }
        if given != nil || JACKDevice.serverIsRunning() { return "jack:" + clientID }
        return "default"
    }
}
