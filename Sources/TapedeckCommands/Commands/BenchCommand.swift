import Foundation
import TapedeckBench
import TapedeckDSP
import TapedeckIO
import TapedeckUI

/// `tapedeck bench`: the benchmarks behind the README's table.
struct BenchCommand: Command {
    static let spec = CommandSpec(
        name: "bench", summary: "run the benchmarks (against ecasound, sox and rubberband where they apply)",
        synopsis: ["bench [all|mixdown|loudness|stretch|speed|scale|engine|load|capture|screen|jack|budgets] [--runs N] [--folder DIR]"],
        positionals: [PositionalSpec("BENCHMARK", complete: .choices,
                                     choices: ["all", "mixdown", "loudness", "stretch", "speed", "scale", "engine", "automation", "load", "capture",
                                               "screen", "jack", "budgets"])],
        options: [
            OptionSpec("--runs", value: "N", "alternating runs per wall time, 1...100 (default 5)"),
            OptionSpec("--folder", value: "DIR", "where generated test material is kept (default bench-out)", complete: .directory),
            OptionSpec("--tracks", value: "N", "tracks for scale (32), engine (128), speed (128), capture (32) and screen (32)"),
            OptionSpec("--minutes", value: "M", "length for scale (120) and capture (10)"),
            OptionSpec("--period", value: "FRAMES", "period for engine (64), speed (256) and capture (128)"),
            OptionSpec("--chain", value: "CHAIN", "engine: each track's chain"),
            OptionSpec("--seconds", value: "S", "engine: seconds to run (15; the recording run 10); speed: per case (6); screen (10); jack: per measurement (3)"),
            OptionSpec("--record", value: "N", "engine: tracks that record at once while the tracks play (32; 0: skip)"),
            OptionSpec("--channels", value: "N", "capture: channels (32)"),
            OptionSpec(flag: "--stereo", "engine: stereo tracks"),
            OptionSpec("--threads", value: "N", "load and mixdown: the threads measured beside one, 2...64 (default: one per core)"),
            OptionSpec("--row", value: "TEXT", "load: only the rows whose name holds TEXT (strip, mono, routing, headroom, automation)"),
        ],
        details: """
        Prints one row per benchmark: what Tapedeck measured, the peer tool's number, their
        ratio and the goal. Wall times are medians of N alternating runs (default 5): Tapedeck,
        peer, Tapedeck, peer, … so both see the same machine. Generated test material is kept
        in DIR (default bench-out/) and reused. Build with `make release` first: debug builds
        are several times slower. `make bench` does all of this.

          mixdown   W8: 8 stereo 16-bit 48 kHz tracks × 60 s through gain + low-pass + delay,
                mixed to one WAV, against ecasound's equivalent chains (goal ≤ 0.10×); then
                export --threads N (all cores) against --threads 1 on 64 mono tracks × 30 s ×
                'hpf,comp,eq,gain' (goal ≤ 0.6×)
          stretch   live: one stereo stretcher's cost at 0.5× and 2× (256-frame blocks, R2 and R3);
                export: 0.5× and 2×, R3 and R2, against `rubberband -3`/`-2` on the same file,
                by CPU time (goal ≤ 1.1×)
          speed     the engine's session (stereo, no track chains) with the mix at 1/32×, 0.5×,
                2× and 32×, stretch and varispeed, then R3 stretch at 0.5× and 2×: DSP load
                p50, p99, p99.9 and tracks per core by the 99th-percentile period (goal: 128
                tracks at 256-frame periods, p99.9 < 60 %). --tracks N (128), --period FRAMES
                (256), --seconds S of device time per case (6)
          scale     opening a generated 32-track × 2-hour session (sparse audio, fresh peaks) as
                the screen does, in a child process (goal ≤ 0.5 s, ≤ 150 MB RSS)
          engine    real-time headroom: the live engine (disk thread streaming a generated
                session, track chains, mix) on the offline clock, which runs periods back to
                back and times each: DSP load = period cost ÷ period length, p50 and p99.9
                (goal: 128 mono tracks × 4 built-in nodes at 64-frame periods, 48 kHz:
                p50 ≤ 50 %, p99.9 < 100 %). --tracks N (128), --chain CHAIN
                ('hpf:80,comp:-18,eq,gain:-3'), --period FRAMES (64), --seconds S (15), --stereo.
                Then routing: 256 mono tracks × those 4 nodes, each with two post-fader sends
                to 8 stereo buses that each run the reverb, at 32-frame periods (goal p99.9 < 80 %).
                Then automation: 256 such tracks with the fader, pan and comp.threshold automated,
                32-frame periods, beside the same session without (goal p99.9 < 80 % and within
                10 % of the plain run; `bench automation` runs this row alone).
                Then --record N (32; 0: skip) tracks record at once from an N-channel device
                while those tracks play, on the offline clock paced in real time for 10 s
                (--seconds): DSP load p99.9 < 100 % and 0 dropped input frames
          load      first the strip DSP alone: 1,024 mono 'hpf,comp,eq,gain' chains (and the
                same with every EQ band active) in 256-frame blocks on one thread's CPU clock,
                CPU seconds per second of audio. Then the load that matters: each period's wall
                time against its deadline on a paced JACK server (a private jackd -d dummy), beside the audio thread's CPU time,
                missed deadlines and xruns, every row with --threads 1 and all cores (--threads N)
                side by side, runs alternating: 1,024 mono tracks × 'hpf,comp,eq,gain' at
                256-frame periods for 60 s (goal: 0 xruns on all cores); the routing row at 32
                frames (goal p99.9 < 60 %); the headroom and automation rows. --seconds S per run
                (60 for the first row, 15 for the others), --tracks N for every row, --runs N (≤ 3),
                --row TEXT only the rows whose name holds TEXT (strip, mono, routing, ...)
          capture   32 channels 96 kHz/24-bit onto 32 armed tracks (a WAV each) while 32 tracks play,
                128-frame periods, 10 minutes through the unpaced filetap ALSA device (from
                TAPEDECK_ALSA_CONFIG, else written to DIR): dropped frames (goal 0), xruns,
                capture ring high water, real-time factor. Needs the take's size + 45 % free
                (8 GB); the take is deleted afterwards. --minutes M (10), --channels N (32),
                --tracks N (32), --period FRAMES (128)
          screen    the screen's drawing alone (model update, layout, curses output to a
                pseudo-terminal, no audio) for a --tracks N (32) session playing, at 30
                frames a second for --seconds S (10): CPU per second of drawing (goal ≤ 3 %);
                then every track recording, its take's waveform growing on its row: the same
                (goal ≤ 3 %), and the live waveform rows' cost against the meter rows' in the
                same frames (goal: no more than the meters)
          jack      round trip through Tapedeck monitoring an armed track, measured by
                jack_iodelay on private `jackd -d dummy` servers at 64, 256 and 1024 frames,
                against jack_iodelay looped straight back (goal: no frames added); overdubs
                of clicks through a loopback that reports its latency, at 64, 256 and 1024
                frames, its ports connected at start and patched after (goal: 0 frames off);
                and a take of another client's sine with a busy process per core, a 60 ms
                stall of Tapedeck and a 200 ms stop of the server, judged by the sine's phase
                (goal: silence exactly where frames were lost, nothing off its frame)
          budgets   the time budgets tests hold only to 10× (they held these once, and failed on
                a busy machine): a session of 10^6 automation points opens in ≤ 0.5 s; at the
                region limit (100,000) info ≤ 5 s CPU, export --range 0-2 ≤ 5 s, play --to 2
                ≤ 6 s, ≤ 300 MB each; at 1,024 tracks and 10,000 markers info ≤ 5 s CPU and
                export --range 0-1 ≤ 15 s; the first speed change while playing stops the
                screen's loop (which answers ctl) < 100 ms and the clock < 200 ms; so does an
                import of 30 minutes of 24-bit stereo at 44.1 kHz handed to the playing screen
        """,
        examples: ["tapedeck bench mixdown --runs 3"])

    let which: String
    let runs: Int
    let folder: String
    /// `scale`: the generated size (hidden options, for tests); `scale-open`: the session.
    let scaleSize: BenchScale.Size
    let scaleSession: String?
    /// `engine` and `capture`: what to run (defaults are the goals' sizes; smaller for tests).
    let engineSize: BenchEngine.Size
    /// `engine`: tracks recording at once from as many inputs while the tracks play.
    let recordTracks: Int
    /// `engine`: seconds of the paced recording run.
    let recordSeconds: Double
    let captureSize: BenchCapture.Size
    /// `speed`: tracks, period and seconds per case.
    let speedTracks: Int, speedPeriod: Int, speedSeconds: Double
    /// `screen`: tracks and seconds.
    let screenTracks: Int, screenSeconds: Double
    /// `jack`: seconds jack_iodelay runs for each measurement.
    let jackSeconds: Double
    /// `load`: seconds per run (nil: each row's own), tracks for every row, threads beside one.
    let loadSeconds: Double?, loadTracks: Int?, loadThreads: Int
    /// `load --row TEXT`: only the rows whose name holds TEXT (nil: every row).
    let loadRow: String?

    init(arguments: inout Arguments) throws {
        runs = try arguments.intOption("--runs", in: 1...100) ?? 5
        folder = try arguments.option("--folder") ?? "bench-out"
        // Shared by several benchmarks, each with its own default: read here, resolved below.
        let tracks = try arguments.intOption("--tracks", in: 1...4096)
        let minutes = try arguments.doubleOption("--minutes", in: 0.001...600)
        let period = try arguments.intOption("--period", in: 16...4096)
        let chain = try arguments.option("--chain")
        let seconds = try arguments.doubleOption("--seconds", in: 0.1...600)
        let channels = try arguments.intOption("--channels", in: 1...256)
        let stereo = arguments.flag("--stereo")
        which = arguments.positional() ?? "all"
        if let minutes, minutes != minutes.rounded() || minutes < 1, which == "scale" {
            throw UsageError("bench: --minutes '\(minutes)' must be a whole number of minutes for scale")
        }
        scaleSize = BenchScale.Size(tracks: tracks ?? 32, minutes: max(1, Int(minutes ?? 120)))
        scaleSession = which == "scale-open" ? try arguments.required("SESSION") : nil
        if let chain { _ = try Chain(parsing: chain) } // a mistake is refused here, with its caret
        engineSize = BenchEngine.Size(tracks: tracks ?? 128, chain: chain ?? BenchEngine.defaultChain,
                                      periodFrames: period ?? 64, seconds: seconds ?? 15, stereo: stereo)
        recordTracks = try arguments.intOption("--record", in: 0...256) ?? 32
        recordSeconds = seconds ?? 10
        captureSize = BenchCapture.Size(channels: channels ?? 32, tracks: tracks ?? 32, minutes: minutes ?? 10,
                                        periodFrames: period ?? 128)
        speedTracks = tracks ?? 128
        speedPeriod = period ?? 256
        speedSeconds = seconds ?? 6
        screenTracks = tracks ?? 32
        screenSeconds = seconds ?? 10
        jackSeconds = seconds ?? 3
        loadSeconds = seconds
        loadTracks = tracks
        loadThreads = try arguments.intOption("--threads", in: 2...64) ?? max(2, ProcessInfo.processInfo.activeProcessorCount)
        loadRow = try arguments.option("--row")
        if let loadRow, loadRow.isEmpty || which != "load" {
            throw UsageError("bench: --row '\(loadRow)' names a row of load only (strip, mono, routing, headroom, automation)")
        }
        if let loadRow, !BenchLoad.names(tracks: tracks).contains(where: { $0.contains(loadRow) }) {
            // A typo would otherwise measure nothing and print an empty table.
            throw UsageError("bench: no row of load holds '\(loadRow)' (rows: "
                             + BenchLoad.names(tracks: tracks).map { "'\($0)'" }.joined(separator: ", ") + ")")
        }
        guard ["all", "mixdown", "loudness", "stretch", "speed", "scale", "scale-open", "engine", "automation", "load", "capture", "screen",
               "jack", "budgets"].contains(which) else {
            throw UsageError("bench: unknown benchmark '\(which)' (all, mixdown, loudness, stretch, speed, scale, engine, automation, load, capture, screen, jack, budgets)")
        }
        if let tracks, tracks > 256, which != "load" {
            throw UsageError("bench: --tracks '\(tracks)' must be a whole number in 1...256 (up to 4096 for load)")
        }
    }

    func run(_ context: CommandContext) throws -> Int32 {
        if let scaleSession {
            let (line, problem) = try BenchScale.openSession(path: scaleSession)
            Terminal.out(line)
            if let problem { Terminal.err("tapedeck: \(problem)\n"); return ExitCode.failure }
            return ExitCode.ok
        }
        // Generated material is written here: never into what a session keeps.
        try WriteGuard.check(folder, as: "bench: --folder", kind: .folder)
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        var results: [BenchResult] = []
        func attempt(_ name: String, _ body: () throws -> [BenchResult]) {
            do { results += try body() } catch {
                results.append(BenchResult(name: name, measured: "not run", peer: "\(error)", ratio: "—", goal: "—", met: nil))
            }
        }
        if which == "all" || which == "mixdown" {
            attempt("W8 mixdown") { [try BenchMixdown.run(folder: folder, runs: runs)] }
            attempt("export threads") { [try BenchMixdown.threads(folder: folder, runs: runs, threads: loadThreads)] }
        }
        if which == "all" || which == "loudness" {
            attempt("loudness") { try BenchLoudness.run(folder: folder, runs: min(runs, 3)) }
        }
        if which == "all" || which == "stretch" {
            attempt("live stretch") { BenchStretch.live() }
            attempt("export stretch") { try BenchStretch.export(folder: folder, runs: runs) }
        }
        if which == "all" || which == "speed" {
            attempt("mix at speed") {
                try BenchSpeed.run(folder: folder, runs: min(runs, 3), tracks: speedTracks, periodFrames: speedPeriod, seconds: speedSeconds)
            }
        }
        if which == "all" || which == "scale" {
            attempt("scale open") { [try BenchScale.run(folder: folder, runs: runs, size: scaleSize)] }
        }
        if which == "all" || which == "engine" {
            attempt("engine headroom") { [try BenchEngine.run(folder: folder, runs: runs, size: engineSize)] }
            attempt("engine routing") {
                [try BenchEngine.run(folder: folder, runs: runs, size: .routing(seconds: min(engineSize.seconds, 10)))]
            }
            attempt("engine automation") {
                [try BenchEngine.runAutomation(folder: folder, runs: runs, seconds: min(engineSize.seconds, 10))]
            }
            if recordTracks > 0 {
                var size = engineSize
                size.seconds = recordSeconds
                attempt("engine recording") { [try BenchRecording.run(folder: folder, size: size, recordTracks: recordTracks)] }
            }
        }
        if which == "automation" {
            // The automation row alone (it is part of `engine`).
            attempt("engine automation") {
                [try BenchEngine.runAutomation(folder: folder, runs: runs, seconds: min(engineSize.seconds, 10))]
            }
        }
        if which == "all" || which == "load" {
            attempt("paced load") {
                try BenchLoad.run(folder: folder, runs: min(runs, 3), seconds: loadSeconds, threads: loadThreads, tracks: loadTracks,
                                  only: loadRow)
            }
        }
        if which == "all" || which == "capture" {
            attempt("capture") { [try BenchCapture.run(folder: folder, size: captureSize)] }
        }
        if which == "all" || which == "screen" {
            attempt("screen") {
                [try BenchScreen.run(folder: folder, tracks: screenTracks, seconds: screenSeconds)]
                    + (try BenchScreenRecording.run(folder: folder, tracks: screenTracks, seconds: screenSeconds))
            }
        }
        if which == "all" || which == "jack" {
            attempt("JACK round trip") { try BenchJack.run(seconds: jackSeconds) }
            attempt("JACK overdub alignment") { [try BenchJackAlignment.run()] }
            attempt("JACK take under load") { [try BenchJackStalls.run(seconds: max(jackSeconds, 4))] }
        }
        if which == "all" || which == "budgets" {
            attempt("automation open") { [try BenchBudgets.automationOpen(folder: folder, runs: runs)] }
            attempt("limits") { try BenchBudgets.limits(folder: folder, runs: min(runs, 3)) }
            attempt("first speed change") { [try BenchBudgets.firstSpeedChange(folder: folder)] }
            // The screen's own hooks: the import is the command's, its copying on a worker.
            let hooks = ScreenHooks(
                command: { typed, served in MainActor.assumeIsolated { OwnerForwarding.run(typed, served: served) } },
                commandWork: { typed, rate in ImportInBackground.work(typed, sampleRate: rate) })
            attempt("import on the screen") {
                [try BenchBudgets.screenImport(folder: folder, hooks: hooks) { session, file in
                    try OwnerForwarding.typed(ImportCommand.self, [session, file], session: session)
                }]
            }
        }
        let rows = results.map { r in
            [r.name, r.measured, r.peer, r.ratio, r.goal, r.met.map { $0 ? "yes" : "NO" } ?? ""]
        }
        Terminal.out(BenchSupport.table(["benchmark", "tapedeck", "peer", "ratio", "goal", "met"], rows))
        Terminal.out("(\(ProcessInfo.processInfo.activeProcessorCount) cores; medians of \(runs) alternating runs)")
        return ExitCode.ok
    }
}
