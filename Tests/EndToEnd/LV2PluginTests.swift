import Foundation
import XCTest

/// LV2 plugins in sessions through the command line: `nodes`, `chain` (which saves plugin
/// state into the session) and `export` (which reads it back), with the plugins of the
/// Debian packages swh-lv2, x42-plugins and mda-lv2.
final class LV2PluginTests: XCTestCase {
    var dir: URL!
    let rate = 48000
    let convolver = "http://gareus.org/oss/lv2/zeroconvolv#Mono"

    override func setUpWithError() throws {
        dir = try Tapedeck.temporaryFolder(self)
        XCTAssertEqual(try Tapedeck.run(["new", path("s")]).status, 0)
    }

    private func path(_ name: String) -> String { dir.appendingPathComponent(name).path }
    private var session: String { path("s.tapedeck") }

    private func importFile(_ channels: [[Float]], _ name: String, at: String = "0") throws {
        try Signals.write(channels, to: path(name))
        let r = try Tapedeck.run(["import", session, path(name), "--at", at])
        XCTAssertEqual(r.status, 0, r.stderr)
    }

    private func chain(_ track: String, _ text: String, environment: [String: String] = [:]) throws -> Tapedeck.Result {
        try Tapedeck.run(["chain", session, track, text], environment: environment)
    }

    private func export(_ args: [String] = [], environment: [String: String] = [:]) throws -> (mix: [Float], stderr: String) {
        let r = try Tapedeck.run(["export", session, "-o", path("out.wav"), "--bits", "32f"] + args, environment: environment)
        XCTAssertEqual(r.status, 0, r.stderr)
        return (try Signals.read(path("out.wav")).channels[0], r.stderr)
    }

    private func click(at frame: Int, count: Int = 48000, level: Float = 0.25) -> [Float] {
        var x = [Float](repeating: 0, count: count)
        x[frame] = level
        return x
    }

    private func peakFrame(_ y: [Float]) -> Int { y.indices.max { abs(y[$0]) < abs(y[$1]) }! }

    func testNodesListsTheInstalledPluginsAndDescribesOne() throws {
        let list = try Tapedeck.run(["nodes", "--lv2"])
        XCTAssertEqual(list.status, 0, list.stderr)
        let ampRow = list.stdout.split(separator: "\n").first { $0.hasPrefix("amp ") }
        XCTAssertNotNil(ampRow, list.stdout)
        XCTAssertTrue(ampRow?.contains("http://plugin.org.uk/swh-plugins/amp") == true && ampRow?.contains("Steve Harris") == true)
        XCTAssertTrue(list.stdout.contains("instrument") && list.stdout.contains("MDA JX10"), "instruments are classified")

        let amp = try Tapedeck.run(["nodes", "lv2:amp"])
        XCTAssertEqual(amp.status, 0, amp.stderr)
        XCTAssertTrue(amp.stdout.contains("gain") && amp.stdout.contains("-70 … 70") && amp.stdout.contains("dB"), amp.stdout)
        let synth = try Tapedeck.run(["nodes", "http://drobilla.net/plugins/mda/JX10"])
        XCTAssertTrue(synth.stdout.contains("(instrument") && synth.stdout.contains("Fretless Bass"), synth.stdout)
        let typo = try Tapedeck.run(["nodes", "lv2:ampp"])
        XCTAssertEqual(typo.status, 64)
        XCTAssertTrue(typo.stderr.contains("did you mean 'amp'"), typo.stderr)
    }

    func testAnAmplifierPluginOnATrackRaisesItBySixDecibelsInTheExport() throws {
        let tone = Signals.sine(hertz: 1000, amplitude: 0.2, frames: rate)
        try importFile([tone], "t.wav")
        let dry = Signals.rms(try export().mix, 4800..<43200)
        let set = try chain("1", "lv2:amp:6.0206")
        XCTAssertEqual(set.status, 0, set.stderr)
        XCTAssertTrue(set.stdout.contains("lv2:http://plugin.org.uk/swh-plugins/amp:gain=6.0206"), set.stdout)
        let wet = Signals.rms(try export().mix, 4800..<43200)
        XCTAssertEqual(20 * log10(wet / dry), 6.0206, accuracy: 0.01)
    }

    func testPluginStateRoundTripsThroughTheSavedSession() throws {
        try importFile([click(at: 24000)], "click.wav")
        let dry = try export().mix
        // The preset loads an impulse response (a single spike) into x42's convolver; `chain`
        // runs it once and saves its state into the session, in place of the preset.
        let set = try chain("1", "lv2:zeroconvolv-mono:@preset=No-OP Mono")
        XCTAssertEqual(set.status, 0, set.stderr)
        let stored = try Tapedeck.run(["chain", session, "1"]).stdout
        XCTAssertTrue(stored.hasPrefix("lv2:\(convolver):@state=lv2-zeroconvolv-mono-1.lv2"), stored)
        XCTAssertFalse(stored.contains("@preset"))
        let state = session + "/plugins/lv2-zeroconvolv-mono-1.lv2/state.ttl"
        XCTAssertTrue(try String(contentsOfFile: state, encoding: .utf8).contains("zeroconvolv#ir"))

        // Export is a new process reading the session back: the impulse response is restored
        // and the click comes through unchanged, on its frame.
        let (wet, warnings) = try export()
        XCTAssertEqual(warnings, "")
        XCTAssertEqual(peakFrame(wet), 24000)
        XCTAssertEqual(wet[24000], dry[24000], accuracy: 1e-4)

        // Without its saved state the convolver has nothing to convolve with: silence, and a
        // warning that says which state is gone.
        try FileManager.default.removeItem(atPath: session + "/plugins")
        let (lost, why) = try export()
        XCTAssertLessThan(lost.map(abs).max()!, 1e-5)
        XCTAssertTrue(why.contains("lv2-zeroconvolv-mono-1.lv2") && why.contains("missing or unreadable"), why)
    }

    func testSettingAChainAgainReplacesItsStateAndRemovesTheOldOne() throws {
        try importFile([click(at: 100)], "click.wav")
        XCTAssertEqual(try chain("1", "lv2:zeroconvolv-mono:@preset=No-OP Mono").status, 0)
        XCTAssertEqual(try chain("1", "lv2:\(convolver):@state=lv2-zeroconvolv-mono-1.lv2").status, 0)
        // The backup (the previous session.json) still names state 1, so it is kept.
        var names = try FileManager.default.contentsOfDirectory(atPath: session + "/plugins").sorted()
        XCTAssertEqual(names, ["lv2-zeroconvolv-mono-1.lv2", "lv2-zeroconvolv-mono-2.lv2"])
        XCTAssertEqual(try chain("1", "gain:-1").status, 0)
        names = try FileManager.default.contentsOfDirectory(atPath: session + "/plugins").sorted()
        XCTAssertEqual(names, ["lv2-zeroconvolv-mono-2.lv2"], "only what the session or its backup names is kept")
    }

    func testAPluginThatIsNotInstalledIsKeptAndPassedThrough() throws {
        try importFile([Signals.sine(hertz: 500, amplitude: 0.2, frames: rate)], "t.wav")
        let dry = Signals.rms(try export().mix, 4800..<43200)
        let text = "gain:-6,lv2:urn:tapedeck-test:gone:drive=3:@state=old.lv2,gain:-6"
        let set = try chain("1", text)
        XCTAssertEqual(set.status, 0, set.stderr)
        XCTAssertTrue(set.stderr.contains("lv2:urn:tapedeck-test:gone") && set.stderr.contains("not installed"), set.stderr)
        let shown = try Tapedeck.run(["chain", session, "1"]).stdout
        XCTAssertTrue(shown.hasPrefix("gain:gain=-6,lv2:urn:tapedeck-test:gone:drive=3:@state=old.lv2,gain:gain=-6"), shown)
        XCTAssertTrue(shown.contains("is not installed here"), shown)
        let (mix, warnings) = try export()
        XCTAssertTrue(warnings.contains("track 1 (t) chain: node 2 (lv2:urn:tapedeck-test:gone)"), warnings)
        XCTAssertEqual(20 * log10(Signals.rms(mix, 4800..<43200) / dry), -12, accuracy: 0.01, "the other nodes still work")
    }

    func testAPluginThatFailsToStartIsNamedAndPassedThrough() throws {
        // A plugin whose library is broken: lilv finds it, instantiation fails.
        let bundle = dir.appendingPathComponent("lv2/broken.lv2")
        try FileManager.default.createDirectory(at: bundle, withIntermediateDirectories: true)
        try """
        @prefix doap: <http://usefulinc.com/ns/doap#> .
        @prefix lv2: <http://lv2plug.in/ns/lv2core#> .
        <urn:tapedeck-test:broken> a lv2:Plugin, lv2:AmplifierPlugin ;
            lv2:binary <broken.so> ;
            doap:name "Broken" ;
            lv2:port [ a lv2:InputPort, lv2:AudioPort ; lv2:index 0 ; lv2:symbol "in" ; lv2:name "In" ] ,
                     [ a lv2:OutputPort, lv2:AudioPort ; lv2:index 1 ; lv2:symbol "out" ; lv2:name "Out" ] .
        """.write(to: bundle.appendingPathComponent("manifest.ttl"), atomically: true, encoding: .utf8)
        try "not a library".write(to: bundle.appendingPathComponent("broken.so"), atomically: true, encoding: .utf8)
        let environment = ["LV2_PATH": dir.appendingPathComponent("lv2").path + ":/usr/lib/lv2"]

        try importFile([Signals.sine(hertz: 500, amplitude: 0.2, frames: rate)], "t.wav")
        let dry = Signals.rms(try export().mix, 4800..<43200)
        let set = try chain("1", "gain:-6,lv2:urn:tapedeck-test:broken,gain:-6", environment: environment)
        XCTAssertEqual(set.status, 0, set.stderr)
        let (mix, warnings) = try export(environment: environment)
        XCTAssertTrue(warnings.contains("track 1 (t) chain: node 2 (lv2:urn:tapedeck-test:broken): failed to instantiate: "), warnings)
        XCTAssertTrue(warnings.contains("broken.so") && warnings.contains("passed through"), warnings)
        XCTAssertEqual(20 * log10(Signals.rms(mix, 4800..<43200) / dry), -12, accuracy: 0.01, "skipped, the rest intact")
    }

    func testAPluginsReportedLatencyIsCompensatedInTheExportToTheFrame() throws {
        try importFile([click(at: 0, count: 4800, level: 0.1)], "click.wav", at: "30000f")
        XCTAssertEqual(try chain("1", "lv2:dpl-mono").status, 0)
        XCTAssertEqual(try chain("master", "lv2:dpl-stereo,limiter").status, 0)
        let mix = try export(["--range", "0-1"]).mix
        XCTAssertEqual(peakFrame(mix), 30000, "x42 dpl's look-ahead on the track and the master, compensated")
        XCTAssertEqual(mix.count, rate)
    }

    /// The null test through a plugin: a track's dry path against its send through a bus
    /// running x42's look-ahead limiter (64 frames reported) with its polarity flipped.
    /// Cancels below -100 dBFS when the dry path is held back by the plugin's latency, in the
    /// export and live on `filetap` (the same render, freewheeled and paced).
    func testASendThroughALatentPluginOnABusNullsAgainstTheDryPathLiveAndInExport() throws {
        var seed: UInt32 = 11
        let noise = (0..<rate).map { _ -> Float in
            seed = seed &* 1_664_525 &+ 1_013_904_223
            return Float(Int32(bitPattern: seed)) / Float(Int32.max) * 0.2
        }
        try importFile([noise], "noise.wav")
        for args in [["bus", session, "add", "Look", "--stereo"], ["chain", session, "Look", "lv2:dpl-stereo,gain:invert=1"],
                     ["send", session, "1", "Look", "--level", "0"]] {
            let r = try Tapedeck.run(args)
            XCTAssertEqual(r.status, 0, r.stderr)
        }
        let info = try Tapedeck.run(["info", session])
        XCTAssertTrue(info.stdout.contains("latency   64 frames"), info.stdout)
        let floor = Float(pow(10, -100.0 / 20))
        XCTAssertLessThan(try export().mix.map(abs).max() ?? 1, floor, "export")

        let out = path("live.raw")
        let r = try Tapedeck.run(["play", session, "--device", "filetap:OUT=\(out)", "--device-format", "float",
                                  "--period", "256", "--periods", "4"], environment: RecordSupport.environment, timeout: 180)
        XCTAssertEqual(r.status, 0, r.stderr)
        let live: [Float] = try Data(contentsOf: URL(fileURLWithPath: out)).withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        XCTAssertGreaterThan(live.count, 2 * rate, "the whole second played")
        XCTAssertLessThan(live.map(abs).max() ?? 1, floor, "live")

        let muted = try Tapedeck.run(["track", session, "Look", "--mute"])
        XCTAssertEqual(muted.status, 0, muted.stderr)
        XCTAssertGreaterThan(try export().mix.map(abs).max() ?? 0, 0.1, "the dry path alone is loud")
    }

    /// A plugin that reports 10^8 frames of latency (half an hour) is not compensated — which
    /// would shift the whole export into silence — and the export says so in one line.
    func testAnAbsurdReportedLatencyIsNotCompensatedAndIsSaid() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/cc") else { throw XCTSkip("no C compiler") }
        let bundle = dir.appendingPathComponent("lv2/latent.lv2")
        try FileManager.default.createDirectory(at: bundle, withIntermediateDirectories: true)
        try """
        #include <lv2/core/lv2.h>
        #include <stdlib.h>
        typedef struct { float *in, *out, *latency; } P;
        static LV2_Handle make(const LV2_Descriptor *d, double rate, const char *path, const LV2_Feature *const *f) { return calloc(1, sizeof(P)); }
        static void connect(LV2_Handle h, uint32_t port, void *data) {
            P *p = h; if (port == 0) p->in = data; else if (port == 1) p->out = data; else p->latency = data;
        }
        static void run(LV2_Handle h, uint32_t n) {
            P *p = h; for (uint32_t i = 0; i < n; i++) p->out[i] = p->in[i];
            if (p->latency) *p->latency = 1e8f;
        }
        static void cleanup(LV2_Handle h) { free(h); }
        static const LV2_Descriptor descriptor = { "urn:tapedeck-test:latent", make, connect, NULL, run, NULL, cleanup, NULL };
        LV2_SYMBOL_EXPORT const LV2_Descriptor *lv2_descriptor(uint32_t i) { return i == 0 ? &descriptor : NULL; }
        """.write(to: bundle.appendingPathComponent("latent.c"), atomically: true, encoding: .utf8)
        let cc = try Tapedeck.run(["-shared", "-fPIC", "-o", bundle.appendingPathComponent("latent.so").path,
                                   bundle.appendingPathComponent("latent.c").path], executable: "/usr/bin/cc")
        XCTAssertEqual(cc.status, 0, cc.stderr)
        try """
        @prefix doap: <http://usefulinc.com/ns/doap#> .
        @prefix lv2: <http://lv2plug.in/ns/lv2core#> .
        <urn:tapedeck-test:latent> a lv2:Plugin, lv2:AmplifierPlugin ;
            lv2:binary <latent.so> ;
            doap:name "Latent" ;
            lv2:port [ a lv2:InputPort, lv2:AudioPort ; lv2:index 0 ; lv2:symbol "in" ; lv2:name "In" ] ,
                     [ a lv2:OutputPort, lv2:AudioPort ; lv2:index 1 ; lv2:symbol "out" ; lv2:name "Out" ] ,
                     [ a lv2:OutputPort, lv2:ControlPort ; lv2:index 2 ; lv2:symbol "latency" ; lv2:name "Latency" ;
                       lv2:designation lv2:latency ; lv2:portProperty lv2:reportsLatency ] .
        """.write(to: bundle.appendingPathComponent("manifest.ttl"), atomically: true, encoding: .utf8)
        let environment = ["LV2_PATH": dir.appendingPathComponent("lv2").path + ":/usr/lib/lv2"]
        try importFile([click(at: 0, count: 4800, level: 0.1)], "click.wav", at: "30000f")
        let set = try chain("1", "lv2:urn:tapedeck-test:latent", environment: environment)
        XCTAssertEqual(set.status, 0, set.stderr)
        let (mix, warnings) = try export(["--range", "0-1"], environment: environment)
        XCTAssertEqual(peakFrame(mix), 30000, "the click stays where it is: the absurd latency is not compensated")
        XCTAssertTrue(warnings.contains("node 1 (lv2:urn:tapedeck-test:latent): reports 100000000 frames of latency"), warnings)
        XCTAssertTrue(warnings.contains("not compensated"), warnings)
    }

    func testMistakesInPluginChainsAreRefusedBeforeAnythingIsSaved() throws {
        for text in ["lv2:ampp:3", "lv2:amp:gain=100", "lv2:amp:@preset=nothing", "lv2:<http://x", "lv2:xfade"] {
            let r = try chain("master", text)
            XCTAssertEqual(r.status, 64, "\(text): \(r.stderr)")
            XCTAssertTrue(r.stderr.contains("chain error at column"), r.stderr)
        }
        XCTAssertEqual(try Tapedeck.run(["chain", session, "master"]).stdout, "(no effects)\n")
    }
}
