import Foundation
import XCTest

/// A JACK MIDI listener of the tests' own (`td-jack-midi-clock`, built beside `tapedeck`): it
/// keeps every message it hears on `NAME:midi_in` with its JACK frame time (the cycle's
/// `jack_last_frame_time` plus the event's offset). `jack_midi_dump -a` cannot stand in for
/// it: it counts its own cycles, so it cannot see the cycles JACK's clock moved on without
/// running any client. It runs as a process of its own (libjack in the test process would stay
/// bound to the first server it served); stopped when the test ends.
struct JACKClockListener {
    private let child: SpawnedChild
    private let outputPath: String
    /// The client's name.
    let name: String

    /// Starts `name` on `jack`'s server and waits until it runs.
    init(_ test: XCTestCase, name: String, jack: JackServer, folder: URL) throws {
        let tool = URL(fileURLWithPath: Tapedeck.binary).deletingLastPathComponent().appendingPathComponent("td-jack-midi-clock").path
        guard FileManager.default.isExecutableFile(atPath: tool) else {
            throw XCTSkip("td-jack-midi-clock is not built next to tapedeck (swift build builds it)")
        }
        outputPath = folder.appendingPathComponent("\(name).txt").path
        child = try SpawnedChild([tool, name], environment: jack.environment, stdoutPath: outputPath,
                                 stderrPath: folder.appendingPathComponent("\(name).err").path)
        self.name = name
        let child = child
        test.addTeardownBlock { _ = child.kill(SIGKILL) }
        let deadline = Date().addingTimeInterval(15)
        while !((try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "").hasPrefix("ready") {
            if child.wait(timeoutSeconds: 0.05) != nil || Date() > deadline {
                throw XCTSkip("the test's JACK listener did not start: "
                              + ((try? String(contentsOfFile: folder.appendingPathComponent("\(name).err").path, encoding: .utf8)) ?? ""))
            }
        }
    }

    /// Stops the listener; the note-ons (velocity above 0) and note-offs it heard: JACK frame
    /// time, note, on or off.
    func stop() -> [(frame: Int64, note: Int, on: Bool)] {
        _ = child.kill(SIGTERM)
        let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").dropFirst().compactMap { line in
            let f = line.split(separator: " ").compactMap { Int64($0) }
            guard f.count == 4 else { return nil }
            let status = Int(f[1]) & 0xF0
            guard status == 0x90 || status == 0x80 else { return nil }
            return (f[0], Int(f[2]), status == 0x90 && f[3] > 0)
        }
    }
}
