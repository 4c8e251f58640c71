import XCTest
import TapedeckRemote
@testable import TapedeckCommands

/// `tapedeck ctl … cmd {…}` exits with the handed command's own status, as the owner's answer
/// says it: a script sees a refusal (64) as it would running the command itself.
final class ControlExitStatusTests: XCTestCase {
    private let typed = RemoteCommand.typed(TypedCommand(name: "region", value: "{}", workingFolder: "/", label: "region"))

    func testAHandedCommandsStatusIsTheExitStatus() {
        XCTAssertEqual(ControlCommand.exitStatus(of: typed, reply: #"{"status":64,"out":"","err":"region: number -5 is below 1\n"}"#), 64)
        XCTAssertEqual(ControlCommand.exitStatus(of: typed, reply: #"{"status":1,"out":"","err":"tapedeck: no such file\n"}"#), 1)
        XCTAssertEqual(ControlCommand.exitStatus(of: typed, reply: #"{"status":0,"out":"ok\n","err":""}"#), 0)
        XCTAssertEqual(ControlCommand.exitStatus(of: typed, reply: #"{"status":300,"out":"","err":""}"#), 1, "no process exits with 300")
        XCTAssertEqual(ControlCommand.exitStatus(of: typed, reply: "ok"), 0, "an answer without a status is printed as it came")
    }

    func testOtherVerbsExitZeroOnAnAnswer() {
        // `status` answers JSON of its own; a field of that name there is no exit status.
        XCTAssertEqual(ControlCommand.exitStatus(of: .status, reply: #"{"status":64,"state":"stopped"}"#), 0)
        XCTAssertEqual(ControlCommand.exitStatus(of: .play, reply: "ok"), 0)
    }
}
