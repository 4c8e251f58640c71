import Foundation

/// `tapedeck bench`: the benchmarks behind the README's table.
struct BenchCommand: Command {
    static let name = "bench"
    static let summary = "run the benchmarks (against ecasound, sox and rubberband where they apply)"
    static let usage = """
    usage: tapedeck bench [all|mixdown|stretch|scale] [--runs N] [--folder DIR]

    Prints one row per benchmark: what Tapedeck measured, the peer tool's number, their
    ratio and the goal. Wall times are medians of N alternating runs (default 5): Tapedeck,
    peer, Tapedeck, peer, … so both see the same machine. Generated test material is kept
    in DIR (default bench-out/) and reused. Build with `make release` first: debug builds
    are several times slower. `make bench` does all of this.

      mixdown   W8: 8 stereo 16-bit 48 kHz tracks × 60 s through gain + low-pass + delay,
                mixed to one WAV, against ecasound's equivalent chains (goal ≤ 0.33×)
      stretch   live: stereo tracks one core sustains at 0.5× and 2× (256-frame blocks);
                export: 0.5× R3 stretch against `rubberband -3` on the same file (goal ≤ 1.1×)
      scale     opening a generated 32-track × 2-hour session (sparse audio, fresh peaks) as
                the screen does, in a child process (goal ≤ 0.5 s, ≤ 150 MB RSS)

    example: tapedeck bench mixdown --runs 3
    """

    let which: String
    let runs: Int
    let folder: String
    /// `scale`: the generated size (hidden options, for tests); `scale-open`: the session.
    let scaleSize: BenchScale.Size
    let scaleSession: String?

    init(arguments: inout Arguments) throws {
        runs = try arguments.intOption("--runs", in: 1...100) ?? 5
        folder = try arguments.option("--folder") ?? "bench-out"
        which = arguments.positional() ?? "all"
        scaleSize = BenchScale.Size(tracks: try arguments.intOption("--tracks", in: 1...256) ?? 32,
                                    minutes: try arguments.intOption("--minutes", in: 1...600) ?? 120)
        scaleSession = which == "scale-open" ? try arguments.required("SESSION") : nil
        guard ["all", "mixdown", "stretch", "scale", "scale-open"].contains(which) else {
            throw UsageError("bench: unknown benchmark '\(which)' (all, mixdown, stretch, scale)")
        }
    }

    func run() throws -> Int32 {
        if let scaleSession { return try BenchScale.openSession(path: scaleSession) }
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        var results: [BenchResult] = []
        func attempt(_ name: String, _ body: () throws -> [BenchResult]) {
            do { results += try body() } catch {
                results.append(BenchResult(name: name, measured: "not run", peer: "\(error)", ratio: "—", goal: "—", met: nil))
            }
        }
        if which == "all" || which == "mixdown" {
            attempt("W8 mixdown") { [try BenchMixdown.run(folder: folder, runs: runs)] }
        }
        if which == "all" || which == "stretch" {
            attempt("live stretch") { BenchStretch.live() }
            attempt("export stretch") { [try BenchStretch.export(folder: folder, runs: runs)] }
        }
        if which == "all" || which == "scale" {
            attempt("scale open") { [try BenchScale.run(folder: folder, runs: runs, size: scaleSize)] }
        }
        let rows = results.map { r in
            [r.name, r.measured, r.peer, r.ratio, r.goal, r.met.map { $0 ? "yes" : "NO" } ?? ""]
        }
        Terminal.out(BenchSupport.table(["benchmark", "tapedeck", "peer", "ratio", "goal", "met"], rows))
        Terminal.out("(\(ProcessInfo.processInfo.activeProcessorCount) cores; medians of \(runs) alternating runs)")
        return ExitCode.ok
    }
}
