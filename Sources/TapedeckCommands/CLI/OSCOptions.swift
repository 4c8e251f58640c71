import Foundation
import TapedeckCore
import TapedeckRemote

extension SharedOptions {
    /// `--osc`, `--osc-address` (read by `OSCOptions`): the screen, `play` and `record`.
    static let osc: [OptionSpec] = [
        OptionSpec("--osc", value: "PORT", "take OSC (Ardour's addresses: /transport_play, /strip/gain …) on UDP PORT, with feedback to surfaces that send /set_surface"),
        OptionSpec("--osc-address", value: "ADDR", "listen for OSC on ADDR instead of 127.0.0.1 (e.g. 0.0.0.0: anyone on the network can then drive Tapedeck)"),
    ]
}

/// The OSC flags shared by the screen, `record` and `play`.
struct OSCOptions {
    /// The port asked for (nil: no OSC).
    var port: Int?
    /// Where to listen.
    var address = OSCServer.loopback

    /// Reads `--osc PORT` and `--osc-address ADDR`; `configured` are the config file's values
    /// (the screen's), which the flags override.
    init(arguments: inout Arguments, configured: (port: String?, address: String?) = (nil, nil)) throws(UsageError) {
        let text = try arguments.option("--osc")
        let addressText = try arguments.option("--osc-address")
        if let t = text ?? configured.port {
            port = try OSCOptions.port(t, source: text != nil ? "--osc" : "osc in the config file", command: arguments.command)
        }
        if let a = addressText ?? configured.address {
            guard !a.isEmpty else { throw UsageError("\(arguments.command): --osc-address needs an address (e.g. 0.0.0.0)") }
            address = a
        }
        if addressText != nil && port == nil { throw UsageError("\(arguments.command): --osc-address needs --osc PORT") }
    }

    /// A port 1…65535, or the one line saying why not.
    static func port(_ text: String, source: String, command: String) throws(UsageError) -> Int {
        guard let p = Int(text.trimmingCharacters(in: .whitespaces)), (1...65535).contains(p) else {
            throw UsageError("\(command): \(source) '\(text.terminalSafe)' is not a UDP port (1…65535)")
        }
        return p
    }

    /// The server, or the one line saying why it cannot listen; prints a line when it listens
    /// beyond this machine (`say`).
    func open(command: String, say: (String) -> Void) throws(UsageError) -> OSCServer? {
        guard let port else { return nil }
        let server: OSCServer
        do { server = try OSCServer(port: port, address: address) } catch {
            throw UsageError("\(command): \(error.description)")
        }
        if server.listensBeyondThisMachine {
            say("OSC listens on \(address):\(port), beyond this machine: anyone who can reach it can drive the transport and the mixer")
        }
        return server
    }
}
