// swift-tools-version:6.0
import PackageDescription

/// The sample-processing targets are optimised in debug builds too: their kernels use Swift's
/// SIMD types, which without optimisation run through generic witness calls, many times
/// slower than a plain loop (a debug build's idle engine spent 6 % of a core on its meters,
/// and `make run` and the tests run debug builds).
let optimisedAlways: [SwiftSetting] = [.unsafeFlags(["-O"], .when(configuration: .debug))]

/// The real-time targets (nodes, the render) in a release build: no run-time exclusivity
/// checks. Every read of a class's stored `var` on the audio thread and the workers was a
/// call into the runtime's access set (swift_beginAccess, its thread-local lookup and insert:
/// 2.5 % of a 256-track period in perf). Debug builds, which the tests run, keep them.
let realtimeRelease: [SwiftSetting] = optimisedAlways + [.unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))]

/// Tapedeck: a multitrack recorder that lives in a terminal.
/// One job per target; see ../shared/DESIGN.md for the flow between them.
let package = Package(
    name: "Tapedeck",
    products: [
        .executable(name: "tapedeck", targets: ["tapedeck"]),
        // Tapedeck's effect nodes as LV2 plugins: `make lv2` puts this library and the TTL
        // that tapedeck-lv2-bundle writes into tapedeck.lv2/.
        .library(name: "tapedeck-lv2", type: .dynamic, targets: ["TapedeckLV2Bundle"]),
        .executable(name: "tapedeck-fuzz", targets: ["TapedeckFuzz"]),
    ],
    targets: [
        // Thin C bridges: system libraries plus a shim header for macros.
        .systemLibrary(name: "CALSA", pkgConfig: "alsa", providers: [.apt(["libasound2-dev"])]),
        .systemLibrary(name: "CSndfile", pkgConfig: "sndfile", providers: [.apt(["libsndfile1-dev"])]),
        // ncursesw: no pkgConfig (SwiftPM drops its -D flags); the shim defines them.
        .systemLibrary(name: "CNcurses", providers: [.apt(["libncurses-dev"])]),
        .systemLibrary(name: "CRubberBand", pkgConfig: "rubberband", providers: [.apt(["librubberband-dev"])]),
        .systemLibrary(name: "CSampleRate", pkgConfig: "samplerate", providers: [.apt(["libsamplerate0-dev"])]),
        // LV2: the specification's headers (the plugin ABI), and lilv for hosting.
        .systemLibrary(name: "CLV2", pkgConfig: "lv2", providers: [.apt(["lv2-dev"])]),
        .systemLibrary(name: "CLilv", pkgConfig: "lilv-0", providers: [.apt(["liblilv-dev"])]),
        .systemLibrary(name: "CEbur128", pkgConfig: "libebur128", providers: [.apt(["libebur128-dev"])]),
        // JACK (the backend, its transport, its MIDI ports) and liblo (OSC, for the NSM session manager).
        .systemLibrary(name: "CJACK", pkgConfig: "jack", providers: [.apt(["libjack-jackd2-dev"])]),
        .systemLibrary(name: "CLiblo", pkgConfig: "liblo", providers: [.apt(["liblo-dev"])]),
        // FluidSynth: the General MIDI instrument (`gm`) plays SoundFonts. Loaded with dlopen
        // when the first `gm` is prepared, not linked (see CFluidSynth.h: its forty libraries
        // cost every start 5 ms); only fluidsynth.h (libfluidsynth-dev) is needed to build.
        .target(name: "CFluidSynth", path: "Sources/CFluidSynth", linkerSettings: [.linkedLibrary("dl")]),
        // The git commit `make` writes into commit.h (absent: "unknown"), for --version.
        .target(name: "CBuildInfo", path: "Sources/CBuildInfo"),
        // Software prefetch for the audio thread's streaming reads (a static inline function).
        .target(name: "CPrefetch", path: "Sources/CPrefetch"),
        // The mix pass's inner loop in AVX2, chosen at run time (Swift builds for baseline
        // SSE2); no FMA contraction, so it gives the Swift loop's bits.
        .target(name: "CMixKernels", path: "Sources/CMixKernels", cSettings: [.unsafeFlags(["-O2", "-ffp-contract=off"])]),
        // The process graph's threads: per-strip dependency counts, a trigger queue and futex
        // waits for the render's workers (counters in plain arrays, which Swift's Atomic cannot
        // be laid over); thread names.
        .target(name: "CProcessGraph", path: "Sources/CProcessGraph", cSettings: [.unsafeFlags(["-O2"])]),
        // Test-only C helpers (allocation counting); never linked into the app.
        .target(name: "CTestSupport", path: "Sources/CTestSupport"),
        // JACK clients that play and hear audio against JACK's transport frame: for the tests,
        // and for `bench jack`'s stall row (the app itself never opens one).
        .target(name: "CJACKProbe", path: "Sources/CJACKProbe", linkerSettings: [.linkedLibrary("jack"), .linkedLibrary("m")]),

        .target(name: "TapedeckCore", swiftSettings: optimisedAlways),
        .target(name: "TapedeckDSP", dependencies: ["TapedeckCore", "CRubberBand", "CSampleRate", "CEbur128", "CMixKernels"],
                swiftSettings: realtimeRelease),
        .target(name: "TapedeckIO", dependencies: ["TapedeckCore", "CSndfile", "CSampleRate"], swiftSettings: optimisedAlways),
        // Takes on disk: the marker beside a take being recorded, recovery after a crash, WAV
        // header repair. Below the engine, which writes and removes the markers.
        .target(name: "TapedeckTakes", dependencies: ["TapedeckCore", "TapedeckIO"]),
        // The FluidSynth-backed General MIDI instrument node, apart from the other nodes so
        // that only programs that install it (NodeRegistry.install(type:)) ever load FluidSynth.
        .target(name: "TapedeckFluidSynth", dependencies: ["TapedeckDSP", "CFluidSynth"]),
        // The render core keeps the device protocols (AudioDevice, PeriodDevice and its driver,
        // the freewheel device export runs on); CALSA only for DeviceError's words for an errno.
        .target(name: "TapedeckEngine", dependencies: ["TapedeckCore", "TapedeckDSP", "TapedeckIO", "TapedeckTakes", "CALSA", "CPrefetch", "CMixKernels",
                                                    "CProcessGraph"],
                swiftSettings: realtimeRelease),
        // The device backends: ALSA, JACK, the offline clock and the loopback, the MIDI ports
        // (ALSA sequencer, JACK MIDI), latency calibration. Optimised like the engine: the
        // sample conversion and the JACK cycle run on the audio thread.
        .target(name: "TapedeckDevices", dependencies: ["TapedeckCore", "TapedeckIO", "TapedeckEngine", "CALSA", "CJACK"],
                swiftSettings: optimisedAlways),
        // The transport opens the MIDI ports (ALSA sequencer, JACK MIDI) and asks a JACK device
        // for its MIDI port names, hence the backends.
        .target(name: "TapedeckTransport", dependencies: ["TapedeckCore", "TapedeckDSP", "TapedeckIO", "TapedeckTakes", "TapedeckEngine",
                                                          "TapedeckDevices"]),
        // Remote control: the control socket every running Tapedeck serves, and the NSM client.
        .target(name: "TapedeckRemote", dependencies: ["TapedeckCore", "TapedeckDSP", "TapedeckTransport", "CLiblo"]),
        // The session library: the one owner of an open session (its document and undo, its
        // folder and saves, the transport it tells every change), which the screen and
        // headless record and play host alike.
        .target(name: "TapedeckSession", dependencies: ["TapedeckCore", "TapedeckDSP", "TapedeckIO", "TapedeckEngine", "TapedeckTransport"]),
        .target(name: "TapedeckLV2", dependencies: ["TapedeckCore", "TapedeckDSP", "CLV2", "CLilv"]),
        .target(name: "TapedeckLV2Export", dependencies: ["TapedeckDSP", "CLV2"]),
        // -z nodelete: a host's dlclose must not unmap Swift code the Swift runtime has
        // registered (a host that loads the bundle again, or Tapedeck itself, would crash).
        .target(name: "TapedeckLV2Bundle", dependencies: ["TapedeckLV2Export", "CLV2"],
                linkerSettings: [.unsafeFlags(["-Xlinker", "-z", "-Xlinker", "nodelete"])]),
        .executableTarget(name: "tapedeck-lv2-bundle", dependencies: ["TapedeckLV2Export"]),
        .target(name: "TapedeckUI", dependencies: ["TapedeckCore", "TapedeckDSP", "TapedeckEngine", "TapedeckTransport", "TapedeckIO", "TapedeckRemote",
                                                "TapedeckSession", "CNcurses"]),
        // The benchmarks (`tapedeck bench`, `make bench`): harnesses that build sessions, run the
        // engine, the screen and the peers, and measure; the executable only parses and prints.
        .target(name: "TapedeckBench", dependencies: [
            "TapedeckCore", "TapedeckDSP", "TapedeckIO", "TapedeckTakes", "TapedeckEngine", "TapedeckDevices", "TapedeckTransport",
            "TapedeckUI", "CJACKProbe",
        ]),
        // The command layer: the command tables, argument parsing, help, man page, completions,
        // every sub-command, the screen's and headless play/record's set-up, and a command-line
        // edit handed to whoever holds the session. A library, so the executable is only its
        // entry point and tests reach the same code.
        .target(name: "TapedeckCommands", dependencies: [
            "TapedeckCore", "TapedeckDSP", "TapedeckIO", "TapedeckTakes", "TapedeckEngine", "TapedeckDevices", "TapedeckTransport",
            "TapedeckSession", "TapedeckUI", "TapedeckLV2", "TapedeckRemote", "TapedeckFluidSynth", "TapedeckBench",
            // Only for the library versions `--version` prints, and the build's commit.
            "CALSA", "CSndfile", "CRubberBand", "CSampleRate", "CEbur128", "CBuildInfo",
        ]),
        // The executable: `runMain` and nothing else.
        .executableTarget(name: "tapedeck", dependencies: ["TapedeckCommands"]),

        // A JACK MIDI listener stamping what it hears with JACK's frame time, for the end-to-end
        // tests (a process of its own: see its source). Built by `swift build`, never installed.
        .executableTarget(name: "td-jack-midi-clock", linkerSettings: [.linkedLibrary("jack")]),
        // A JACK MIDI sender, the controller a person turns, for the end-to-end tests.
        .executableTarget(name: "td-jack-midi-send", linkerSettings: [.linkedLibrary("jack")]),
        // A loopback cable on JACK that reports its latency as a sound card does (or keeps part
        // of it to itself, for `calibrate` to find): the tests' and `bench jack`'s round trips.
        .executableTarget(name: "td-jack-loop", dependencies: ["CJACKProbe"]),

        // The fuzzers behind `make fuzz` (and the fixed corpus `make test` runs): seeded,
        // each case in a worker process it watches for crashes and hangs.
        .executableTarget(name: "TapedeckFuzz", dependencies: [
            "TapedeckCore", "TapedeckDSP", "TapedeckIO", "TapedeckEngine", "TapedeckUI", "TapedeckRemote", "CSndfile",
        ]),

        .testTarget(name: "TapedeckCoreTests", dependencies: ["TapedeckCore"]),
        .testTarget(name: "TapedeckDSPTests", dependencies: ["TapedeckDSP", "CTestSupport"]),
        .testTarget(name: "TapedeckFluidSynthTests", dependencies: ["TapedeckFluidSynth", "TapedeckDSP"]),
        .testTarget(name: "TapedeckIOTests", dependencies: ["TapedeckIO", "CSndfile"]),
        .testTarget(name: "TapedeckTakesTests", dependencies: ["TapedeckTakes", "TapedeckCore", "TapedeckIO"]),
        .testTarget(name: "TapedeckEngineTests", dependencies: ["TapedeckEngine", "TapedeckDevices", "TapedeckFluidSynth", "CALSA", "CTestSupport"]),
        .testTarget(name: "TapedeckDevicesTests", dependencies: ["TapedeckDevices", "TapedeckEngine", "TapedeckCore", "CALSA"]),
        .testTarget(name: "TapedeckTransportTests", dependencies: ["TapedeckTransport", "TapedeckEngine", "TapedeckDevices", "TapedeckFluidSynth", "CALSA",
                                                               "CTestSupport", "CJACKProbe"]),
        .testTarget(name: "TapedeckRemoteTests", dependencies: ["TapedeckRemote"]),
        .testTarget(name: "TapedeckUITests", dependencies: ["TapedeckUI", "TapedeckSession", "TapedeckTransport", "TapedeckIO", "CNcurses"]),
        .testTarget(name: "TapedeckLV2Tests", dependencies: ["TapedeckLV2", "TapedeckDSP", "CTestSupport"]),
        .testTarget(name: "EndToEnd", dependencies: ["TapedeckIO", "TapedeckCore", "TapedeckDSP", "TapedeckRemote", "CLiblo", "CSndfile"]),
        // The command tables against the parser, the man page and the completions.
        .testTarget(name: "CLITests", dependencies: ["TapedeckCommands"]),
    ]
)
