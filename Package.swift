// swift-tools-version:6.0
import PackageDescription

/// Tapedeck: a multitrack recorder that lives in a terminal.
/// One job per target; see ../shared/DESIGN.md for the flow between them.
let package = Package(
    name: "Tapedeck",
    products: [
        .executable(name: "tapedeck", targets: ["tapedeck"]),
    ],
    targets: [
        // Thin C bridges: system libraries plus a shim header for macros.
        .systemLibrary(name: "CALSA", pkgConfig: "alsa", providers: [.apt(["libasound2-dev"])]),
        .systemLibrary(name: "CSndfile", pkgConfig: "sndfile", providers: [.apt(["libsndfile1-dev"])]),
        // ncursesw: no pkgConfig (SwiftPM drops its -D flags); the shim defines them.
        .systemLibrary(name: "CNcurses", providers: [.apt(["libncurses-dev"])]),
        .systemLibrary(name: "CRubberBand", pkgConfig: "rubberband", providers: [.apt(["librubberband-dev"])]),
        .systemLibrary(name: "CSampleRate", pkgConfig: "samplerate", providers: [.apt(["libsamplerate0-dev"])]),
        // Test-only C helpers (allocation counting); never linked into the app.
        .target(name: "CTestSupport", path: "Sources/CTestSupport"),

        .target(name: "TapedeckCore"),
        .target(name: "TapedeckDSP", dependencies: ["TapedeckCore", "CRubberBand", "CSampleRate"]),
        .target(name: "TapedeckIO", dependencies: ["TapedeckCore", "CSndfile", "CSampleRate"]),
        .target(name: "TapedeckEngine", dependencies: ["TapedeckCore", "TapedeckDSP", "TapedeckIO", "CALSA"]),
        .target(name: "TapedeckUI", dependencies: ["TapedeckCore", "TapedeckDSP", "TapedeckEngine", "TapedeckIO", "CNcurses"]),
        .executableTarget(name: "tapedeck", dependencies: [
            "TapedeckCore", "TapedeckDSP", "TapedeckIO", "TapedeckEngine", "TapedeckUI",
        ]),

        .testTarget(name: "TapedeckCoreTests", dependencies: ["TapedeckCore"]),
        .testTarget(name: "TapedeckDSPTests", dependencies: ["TapedeckDSP", "CTestSupport"]),
        .testTarget(name: "TapedeckIOTests", dependencies: ["TapedeckIO", "CSndfile"]),
        .testTarget(name: "TapedeckEngineTests", dependencies: ["TapedeckEngine", "CALSA", "CTestSupport"]),
        .testTarget(name: "TapedeckUITests", dependencies: ["TapedeckUI", "CNcurses"]),
        .testTarget(name: "EndToEnd", dependencies: ["TapedeckIO", "TapedeckCore"]),
    ]
)
