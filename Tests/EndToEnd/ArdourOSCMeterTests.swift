import Foundation
import XCTest
import TapedeckIO

/// Meters as Ardour's LED strip (feedback bit 256), replayed as ``ArdourOSCTests`` does: the
/// real screen, `oscsend`, and every value read back through `oscdump`.
extension ArdourOSCTests {
    /// Ardour's line, as `osc_route_observer.cc` computes it for a level in dB:
    /// `ledlvl = (uint32_t)(((dB + 54) / 3.75) - 1); ledbits = ~(0xfff << ledlvl)`, in 16
    /// bits (a strip, the select page) or 32 (the master). Only where that line is defined
    /// C++ (above −54 dB).
    func ardourLEDs(_ decibels: Double, width: Int) -> UInt64 {
        let level = Int(((Double(Float(decibels)) + 54) / 3.75) - 1)
        precondition(level >= 0)
        let bits = ~(UInt64(0xfff) << UInt64(level)) & 0xffff_ffff
        return width == 16 ? bits & 0xffff : bits
    }

    func testMetersAreArdoursLEDStripWithFeedbackBit256() throws {
        // A fifth strip playing a steady sine at -18.4 dBFS for 20 s (mid-way in an LED's
        // 3.75 dB: 8 lit, 255; 7, 127, if the meter hears a -3 dB pan law).
        let rate = try SessionFolder(path: session).load().sampleRate
        let amplitude = Float(pow(10, -18.4 / 20))
        try Signals.write([Signals.sine(hertz: 1000, amplitude: amplitude, frames: 20 * rate, sampleRate: rate)], to: folder + "/sine.wav")
        let imported = try Tapedeck.run(["import", session, folder + "/sine.wav"])
        XCTAssertEqual(imported.status, 0, imported.stderr)
        XCTAssertEqual(try SessionFolder(path: session).load().tracks.count, 5)
        // The demo's music silenced, so the master hears the steady sine only.
        for t in 1...4 { XCTAssertEqual(try Tapedeck.run(["track", session, "\(t)", "--gain", "-inf"]).status, 0) }

        // Buttons, master, LED meters, signal, select page (1 + 16 + 256 + 512 + 8192), in
        // banks of 6: slot 6 is empty.
        let (screen, surface, port) = try open(feedback: 8977, bankSize: 6)
        wait("the meters sent") { surface.last("/strip/meter", id: 6) != nil && surface.last("/master/meter") != nil }
        // Stopped: nothing lit. A strip's LEDs are an int, the master's and the select
        // page's a float, an empty slot's (and no selection's) a float 0, as Ardour sends them.
        XCTAssertEqual(surface.last("/strip/meter", id: 5), Dumped(path: "/strip/meter", types: "ii", values: ["5", "0"]))
        XCTAssertEqual(surface.last("/strip/meter", id: 6), Dumped(path: "/strip/meter", types: "if", values: ["6", "0.000000"]))
        XCTAssertEqual(surface.last("/master/meter"), Dumped(path: "/master/meter", types: "f", values: ["0.000000"]))
        XCTAssertEqual(surface.last("/select/meter"), Dumped(path: "/select/meter", types: "f", values: ["0.000000"]))
        XCTAssertEqual(surface.last("/strip/signal", id: 5)?.values, ["5", "0.000000"])

        oscsend(port, "/strip/select", "if", "5", "1.0")
        oscsend(port, "/transport_play", "f", "1.0")
        screen.waitFor("PLAYING")
        wait("the sine lighting LEDs") { surface.last("/strip/meter", id: 5).map { $0.values[1] != "0" } == true }
        usleep(500_000) // past the meter's rise
        XCTAssertEqual(surface.last("/strip/meter", id: 5)?.types, "ii")
        let stripLEDs = try XCTUnwrap(surface.last("/strip/meter", id: 5)?.values.last.flatMap(UInt64.init))
        wait("the select page's meter") { surface.last("/select/meter")?.values == ["\(stripLEDs).000000"] }
        XCTAssertEqual(surface.last("/select/meter")?.types, "f")
        XCTAssertEqual(surface.last("/strip/signal", id: 5)?.values, ["5", "1.000000"])
        XCTAssertEqual(surface.last("/strip/meter", id: 6)?.values, ["6", "0.000000"], "an empty slot stays cleared")
        XCTAssertEqual(surface.last("/master/meter")?.types, "f")
        let masterLEDs = try XCTUnwrap(surface.last("/master/meter")?.values.first.flatMap(Double.init))

        // The same moment in dB (bit 128, gain mode 0): the LEDs are Ardour's line of it.
        oscsend(port, "/set_surface", "iiiiiii", "6", "0", "\(1 + 16 + 128 + 8192)", "0", "0", "0", "\(surface.port)")
        wait("the meters in dB") { surface.last("/strip/meter", id: 5)?.types == "if" && surface.last("/master/meter").map { Double($0.values[0])! < 0 } == true }
        let stripDecibels = try XCTUnwrap(surface.last("/strip/meter", id: 5)?.values.last.flatMap(Double.init))
        // The sine's peak (-18.4 dBFS; the strip's meter may hear a pan law after it).
        XCTAssertTrue((-22.0 ... -18.0).contains(stripDecibels), "\(stripDecibels) dB")
        let masterDecibels = try XCTUnwrap(surface.last("/master/meter")?.values.first.flatMap(Double.init))
        // A level a 0.1 dB step away may have been the one sent: either LED count is Ardour's.
        let strip = Set([-0.1, 0, 0.1].map { ardourLEDs(stripDecibels + $0, width: 16) })
        XCTAssertTrue(strip.contains(stripLEDs), "strip \(stripDecibels) dB: \(stripLEDs), Ardour's \(strip)")
        XCTAssertTrue(stripLEDs == 127 || stripLEDs == 255, "7 or 8 LEDs lit: \(stripLEDs)")
        let master = Set([-0.1, 0, 0.1].map { Double(Float(ardourLEDs(masterDecibels + $0, width: 32))) })
        XCTAssertTrue(master.contains(masterLEDs), "master \(masterDecibels) dB: \(masterLEDs), Ardour's \(master)")

        // Bit 128 wins over bit 256 when both are asked for (dB, not LEDs).
        let before = surface.messages.count
        oscsend(port, "/set_surface", "iiiiiii", "6", "0", "\(1 + 128 + 256)", "0", "0", "0", "\(surface.port)")
        wait("the strips sent again") { surface.messages.dropFirst(before).contains { $0.path == "/strip/name" } }
        usleep(300_000)
        let meters = surface.messages.dropFirst(before).filter { $0.path == "/strip/meter" }
        XCTAssertFalse(meters.isEmpty)
        XCTAssertTrue(meters.allSatisfy { $0.types == "if" && Double($0.values[1])! < 0 }, "dB with both bits: \(meters)")
        oscsend(port, "/set_surface", "iiiiiii", "6", "0", "\(1 + 16 + 256)", "0", "0", "0", "\(surface.port)")
        oscsend(port, "/transport_stop", "f", "1.0")
        screen.waitFor("STOPPED")
        wait("nothing lit once stopped") { surface.last("/strip/meter", id: 5)?.values == ["5", "0"] && surface.last("/master/meter")?.values == ["0.000000"] }
        XCTAssertTrue(screen.isRunning)
    }
}
