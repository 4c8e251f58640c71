import Foundation
import XCTest

/// The tests' JACK MIDI client, `td-jack-midi-send CLIENT START GAP MESSAGE…`: a port
/// `CLIENT:midi_out` that, START milliseconds after something connects to it (or, when START
/// is a path, once that file exists), sends each message (decimal bytes, or `x`-prefixed hex
/// SysEx) GAP milliseconds apart. It prints `ready` once its port is on the server.
///
/// Every `swift build` builds it next to `tapedeck`, so it missing is a broken build and a
/// failure, never a skip.
enum JackMIDISender {
    /// Its path beside the `tapedeck` under test.
    static var path: String {
        URL(fileURLWithPath: Tapedeck.binary).deletingLastPathComponent().appendingPathComponent("td-jack-midi-send").path
    }

    /// Starts it as `client` on the JACK server of `environment`, printing into
    /// `folder`/send.txt and send.err, and returns once it is ready; it is killed when `test`
    /// ends. Throws (its stderr in the error) when it is not there or not ready in 15 s.
    @discardableResult
    static func start(_ test: XCTestCase, client: String, start: String, gapMilliseconds: Int, messages: [String],
                      environment: [String: String], folder: String) throws -> SpawnedChild {
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw RigError("td-jack-midi-send is not built next to tapedeck at \(path) (swift build builds it)")
        }
        let out = folder + "/send.txt", err = folder + "/send.err"
        let sender = try SpawnedChild([path, client, start, "\(gapMilliseconds)"] + messages, environment: environment,
                                      stdoutPath: out, stderrPath: err)
        test.addTeardownBlock { _ = sender.kill(SIGKILL) }
        let deadline = Date().addingTimeInterval(15)
        while !((try? String(contentsOfFile: out, encoding: .utf8)) ?? "").hasPrefix("ready") {
            if sender.wait(timeoutSeconds: 0.05) != nil || Date() > deadline {
                throw RigError("the test's JACK MIDI sender \(client) did not start: " + ((try? String(contentsOfFile: err, encoding: .utf8)) ?? ""))
            }
        }
        return sender
    }
}
