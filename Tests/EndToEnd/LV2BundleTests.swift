import Foundation
import XCTest
import TapedeckDSP

/// The bundle `make lv2` builds, checked with lilv-utils as another host would see it: every
/// built-in effect is there as its descriptor says, and lv2apply runs the gain node.
final class LV2BundleTests: XCTestCase {
    var dir: URL!
    var environment: [String: String] = [:]

    override func setUpWithError() throws {
        dir = try Tapedeck.temporaryFolder(self)
        // What `make lv2` does, from the products `swift build` left beside tapedeck.
        let products = URL(fileURLWithPath: Tapedeck.binary).deletingLastPathComponent()
        let made = try Tapedeck.run([products.appendingPathComponent("libtapedeck-lv2.so").path,
                                     dir.appendingPathComponent("tapedeck.lv2").path],
                                    executable: products.appendingPathComponent("tapedeck-lv2-bundle").path)
        XCTAssertEqual(made.status, 0, made.stderr)
        environment = ["LV2_PATH": dir.path + ":/usr/lib/lv2"]
    }

    private var effects: [NodeDescriptor] { NodeRegistry.builtIn.descriptors.filter { $0.kind == .effect } }

    func testEveryEffectNodeIsAPluginWithItsDescriptorsPorts() throws {
        let list = try Tapedeck.run([], executable: "/usr/bin/lv2ls", environment: environment)
        let published = Set(list.stdout.split(separator: "\n").map(String.init).filter { $0.hasPrefix("urn:tapedeck:") })
        XCTAssertEqual(published, Set(effects.flatMap { ["urn:tapedeck:\($0.name)#mono", "urn:tapedeck:\($0.name)#stereo"] }))

        for d in effects {
            let info = try Tapedeck.run(["urn:tapedeck:\(d.name)#stereo"], executable: "/usr/bin/lv2info", environment: environment)
            XCTAssertEqual(info.status, 0, info.stderr)
            XCTAssertTrue(info.stdout.contains("Name:              Tapedeck \(d.displayName) (stereo)"), info.stdout)
            let ports = Self.controlInputs(info.stdout)
            XCTAssertEqual(ports.map(\.symbol), d.parameters.map(\.id), d.name)
            for (port, p) in zip(ports, d.parameters) {
                XCTAssertEqual(port.minimum, p.minimum, accuracy: 1e-4 * max(1, abs(p.minimum)), "\(d.name) \(p.id)")
                XCTAssertEqual(port.maximum, p.maximum, accuracy: 1e-4 * max(1, abs(p.maximum)), "\(d.name) \(p.id)")
                XCTAssertEqual(port.defaultValue, p.defaultValue, accuracy: 1e-4 * max(1, abs(p.defaultValue)), "\(d.name) \(p.id)")
            }
            XCTAssertEqual(info.stdout.components(separatedBy: "lv2core#AudioPort").count - 1, 4, "two in, two out")
        }
        let limiter = try Tapedeck.run(["urn:tapedeck:limiter#stereo"], executable: "/usr/bin/lv2info", environment: environment)
        XCTAssertTrue(limiter.stdout.contains("Has latency:       yes"), limiter.stdout)
        XCTAssertTrue(limiter.stdout.contains("Class:             Dynamics Plugin"), limiter.stdout)
    }

    func testLv2applyRunsTheGainNodeAtSixDecibels() throws {
        let input = dir.appendingPathComponent("in.wav").path, output = dir.appendingPathComponent("out.wav").path
        let tone = Signals.sine(hertz: 1000, amplitude: 0.2, frames: 48000)
        try Signals.write([tone], to: input)
        let r = try Tapedeck.run(["-i", input, "-o", output, "-c", "gain", "6.0206", "urn:tapedeck:gain#mono"],
                                 executable: "/usr/bin/lv2apply", environment: environment)
        XCTAssertEqual(r.status, 0, r.stderr)
        let out = try Signals.read(output).channels[0]
        XCTAssertEqual(out.count, tone.count)
        XCTAssertEqual(20 * log10(Signals.rms(out, 0..<48000) / Signals.rms(tone, 0..<48000)), 6.0206, accuracy: 0.01)
    }

    func testLv2applyRunsTheStereoLimiterUnderItsCeiling() throws {
        let input = dir.appendingPathComponent("in.wav").path, output = dir.appendingPathComponent("out.wav").path
        let loud = Signals.sine(hertz: 200, amplitude: 0.9, frames: 24000)
        try Signals.write([loud, loud], to: input)
        let r = try Tapedeck.run(["-i", input, "-o", output, "-c", "ceiling", "-6", "urn:tapedeck:limiter#stereo"],
                                 executable: "/usr/bin/lv2apply", environment: environment)
        XCTAssertEqual(r.status, 0, r.stderr)
        let out = try Signals.read(output).channels
        XCTAssertEqual(out.count, 2)
        let ceiling = Float(pow(10, -6.0 / 20))
        XCTAssertLessThanOrEqual(out.flatMap { $0 }.map(abs).max()!, ceiling * 1.0001)
        XCTAssertGreaterThan(out[0][12000..<24000].map(abs).max()!, ceiling * 0.99, "limited, not silenced")
    }

    /// The control input ports lv2info prints: symbol, minimum, maximum, default.
    static func controlInputs(_ text: String) -> [(symbol: String, minimum: Double, maximum: Double, defaultValue: Double)] {
        var result: [(String, Double, Double, Double)] = []
        for block in text.components(separatedBy: "\tPort ").dropFirst()
        where block.contains("lv2core#ControlPort") && block.contains("lv2core#InputPort") {
            func field(_ name: String) -> String? {
                block.split(separator: "\n").first { $0.trimmingCharacters(in: .whitespaces).hasPrefix(name + ":") }
                    .map { String($0.split(separator: ":", maxSplits: 1)[1]).trimmingCharacters(in: .whitespaces) }
            }
            guard let symbol = field("Symbol"), let lo = field("Minimum").flatMap(Double.init),
                  let hi = field("Maximum").flatMap(Double.init), let d = field("Default").flatMap(Double.init) else { continue }
            result.append((symbol, lo, hi, d))
        }
        return result
    }
}
