import XCTest
import TapedeckEngine
@testable import TapedeckUI
#if canImport(Glibc)
import Glibc
#endif

/// The engine's activity signal wakes the screen's loop through a descriptor it polls.
final class ScreenWakeTests: XCTestCase {
    func testASignalMakesTheDescriptorReadableAtOnceAndNothingElseDoes() throws {
        let wake = try XCTUnwrap(ScreenWake())
        defer { wake.stop() }
        // Whatever earlier tests signalled is let through first.
        usleep(300_000)
        wake.drain()
        var fds = [pollfd(fd: wake.descriptor, events: Int16(POLLIN), revents: 0)]
        XCTAssertEqual(poll(&fds, 1, 300), 0, "no signal, no wake")
        for _ in 0..<5 {
            usleep(30_000)
            let start = MonotonicClock.seconds()
            EngineActivity.shared.signal()
            fds[0].revents = 0
            XCTAssertEqual(poll(&fds, 1, 1000), 1)
            XCTAssertLessThan(MonotonicClock.seconds() - start, 0.05, "woken within 50 ms")
            wake.drain()
        }
    }
}
