import Foundation
import XCTest

/// `make install-files` / `make uninstall` into a DESTDIR, the installed binary finding its
/// clips and themes from where it is, `--version`, and `demo` leaving nothing on failure.
final class InstallTests: XCTestCase {
    /// Runs `make TARGET VARS…` in the package root.
    func make(_ args: [String]) throws -> Tapedeck.Result {
        try Tapedeck.run(["-C", Tapedeck.packageRoot.path, "--no-print-directory"] + args, executable: "/usr/bin/make", timeout: 300)
    }

    func files(under root: URL) -> [String] {
        let e = FileManager.default.enumerator(atPath: root.path)
        var out: [String] = []
        while let p = e?.nextObject() as? String {
            var dir: ObjCBool = false
            if FileManager.default.fileExists(atPath: root.appendingPathComponent(p).path, isDirectory: &dir), !dir.boolValue {
                out.append(p)
            }
        }
        return out.sorted()
    }

    func testInstallIntoADestdirThenUninstallLeavesNoFile() throws {
        let tmp = try Tapedeck.temporaryFolder(self)
        let dest = tmp.appendingPathComponent("stage")
        let vars = ["DESTDIR=\(dest.path)", "PREFIX=/usr", "BIN=\(Tapedeck.binary)"]
        let install = try make(["install-files"] + vars)
        XCTAssertEqual(install.status, 0, install.stderr)
        let installed = files(under: dest)
        for expected in ["usr/bin/tapedeck", "usr/share/man/man1/tapedeck.1", "usr/share/man/man1/tapedeck-record.1",
                         "usr/share/man/man1/tapedeck-export.1", "usr/share/bash-completion/completions/tapedeck",
                         "usr/share/zsh/vendor-completions/_tapedeck", "usr/share/fish/vendor_completions.d/tapedeck.fish",
                         "usr/share/tapedeck/samples/drums.flac", "usr/share/tapedeck/themes/light.theme"] {
            XCTAssertTrue(installed.contains(expected), "\(expected) missing from \(installed)")
        }
        // The installed binary, run from elsewhere, builds the demo from its own share/.
        let binary = dest.appendingPathComponent("usr/bin/tapedeck").path
        let demo = tmp.appendingPathComponent("home/d.tapedeck").path
        try FileManager.default.createDirectory(atPath: tmp.appendingPathComponent("home").path, withIntermediateDirectories: true)
        var r = try Tapedeck.run(["demo", demo], executable: binary)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains(dest.appendingPathComponent("usr/share/tapedeck/samples").path), r.stdout)
        r = try Tapedeck.run(["info", demo], executable: binary)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("tracks    4"), r.stdout)
        // The man page renders.
        let man = try Tapedeck.run(["-c", "groff -man -Tutf8 -ww '\(dest.path)/usr/share/man/man1/tapedeck.1' 2>&1"], executable: "/bin/sh")
        XCTAssertTrue(man.stdout.contains("--normalize"), "the man page shows the options")
        // And each command's own page (man tapedeck-record), one per command of the table.
        let record = try Tapedeck.run(["-c", "groff -man -Tutf8 -ww '\(dest.path)/usr/share/man/man1/tapedeck-record.1' 2>&1"], executable: "/bin/sh")
        XCTAssertTrue(record.stdout.contains("--split"), "tapedeck-record(1) shows record's options")
        let commandPages = installed.filter { $0.hasPrefix("usr/share/man/man1/tapedeck-") }
        let committed = try FileManager.default.contentsOfDirectory(atPath: Tapedeck.packageRoot.appendingPathComponent("docs/commands").path)
        XCTAssertEqual(commandPages.count, committed.count - 1, "a man page per command (docs/commands less its README.md)")

        let uninstall = try make(["uninstall"] + vars)
        XCTAssertEqual(uninstall.status, 0, uninstall.stderr)
        XCTAssertEqual(files(under: dest), [], "uninstall removes exactly what install put there")
        XCTAssertFalse(FileManager.default.fileExists(atPath: dest.appendingPathComponent("usr/share/tapedeck").path))
    }

    func testAnInstallWithoutItsClipsSynthesisesThem() throws {
        let tmp = try Tapedeck.temporaryFolder(self)
        let bin = tmp.appendingPathComponent("opt/bin")
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        let binary = bin.appendingPathComponent("tapedeck").path
        try FileManager.default.copyItem(atPath: Tapedeck.binary, toPath: binary)
        let demo = tmp.appendingPathComponent("d.tapedeck").path
        let r = try Tapedeck.run(["demo", demo], executable: binary)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("freshly synthesised clips"), r.stdout)
        let info = try Tapedeck.run(["info", demo], executable: binary)
        XCTAssertTrue(info.stdout.contains("Drums") && info.stdout.contains("Keys"), info.stdout)
    }

    func testAFailedDemoLeavesNothingSoTheRetryWorks() throws {
        let tmp = try Tapedeck.temporaryFolder(self)
        let bad = tmp.appendingPathComponent("bad")
        try FileManager.default.createDirectory(at: bad, withIntermediateDirectories: true)
        for clip in ["drums.flac", "bass.flac", "keys.flac"] {
            try FileManager.default.copyItem(atPath: Tapedeck.packageRoot.appendingPathComponent("Samples/\(clip)").path,
                                             toPath: bad.appendingPathComponent(clip).path)
        }
        // The last clip is corrupt: the first two are imported before it fails.
        try Data("not a flac file".utf8).write(to: bad.appendingPathComponent("keys.flac"))
        let demo = tmp.appendingPathComponent("d.tapedeck").path
        let failed = try Tapedeck.run(["demo", demo, "--samples", bad.path])
        XCTAssertEqual(failed.status, 65, failed.stderr)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: tmp.path), ["bad"], "nothing left behind")
        let retry = try Tapedeck.run(["demo", demo])
        XCTAssertEqual(retry.status, 0, retry.stderr)
    }

    func testVersionNamesTheCommitAndTheLibrariesInUse() throws {
        let r = try Tapedeck.run(["--version"])
        XCTAssertEqual(r.status, 0)
        let lines = r.stdout.split(separator: "\n").map(String.init)
        // The commit `make` embedded (commit.h), or "unknown" for a plain `swift build`.
        let header = try? String(contentsOf: Tapedeck.packageRoot.appendingPathComponent("Sources/CBuildInfo/commit.h"), encoding: .utf8)
        let embedded = header.flatMap { $0.split(separator: "\"").dropFirst().first.map(String.init) } ?? "unknown"
        XCTAssertTrue(lines[0].hasPrefix("tapedeck 0.") && lines[0].hasSuffix("(commit \(embedded))"), lines[0])
        if embedded != "unknown" {
            let head = try Tapedeck.run(["-C", Tapedeck.packageRoot.path, "rev-parse", "HEAD"], executable: "/usr/bin/git")
            XCTAssertTrue(head.stdout.hasPrefix(String(embedded.prefix(12))), "\(embedded) is not HEAD \(head.stdout)")
        }
        for (label, module) in [("ALSA", "alsa"), ("libsndfile", "sndfile"), ("Rubber Band", "rubberband"),
                                ("libsamplerate", "samplerate"), ("libebur128", "libebur128")] {
            let v = try Tapedeck.run(["--modversion", module], executable: "/usr/bin/pkg-config").stdout
                .trimmingCharacters(in: .whitespacesAndNewlines)
            XCTAssertTrue(lines.contains { $0.hasPrefix("\(label) \(v)") }, "\(label) \(v) not in \(lines)")
        }
    }
}
