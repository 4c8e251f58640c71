import Foundation
import TapedeckCore
import TapedeckEngine

/// Draws the "recording" banner (stderr) or the JSON status lines (stdout).
struct StatusLine {
    let label: String
    let file: String
    let sampleRate: Int
    let json: Bool
    private let tty = Terminal.stderrIsTTY
    private var lastDrawNanoseconds: Int64 = 0
    private var xrunFrames: [Int64] = []

    init(label: String, file: String, sampleRate: Int, json: Bool) {
        self.label = label
        self.file = file
        self.sampleRate = sampleRate
        self.json = json
    }

    /// Shows `status` if it is time (10 × a second on a terminal, once a second otherwise).
    mutating func update(_ status: EngineStatus, newXruns: [XrunEvent], elapsedFrames: Int64, force: Bool = false) {
        let now = DispatchTime.now().uptimeNanoseconds
        for x in newXruns {
            xrunFrames.append(x.frame)
            if json { emit(["event": "xrun", "frame": x.frame, "lost_frames": x.lostFrames, "file": file]) }
        }
        let interval: UInt64 = (tty && !json) ? 100_000_000 : 1_000_000_000
        guard force || lastDrawNanoseconds == 0 || now - UInt64(lastDrawNanoseconds) >= interval else { return }
        lastDrawNanoseconds = Int64(now)
        let clock = TimeText.clock(frames: elapsedFrames, sampleRate: sampleRate)
        if json {
            emit(["event": "status", "state": label, "elapsed_seconds": Double(elapsedFrames) / Double(max(sampleRate, 1)),
                  "frames": elapsedFrames, "position_frame": status.positionFrame,
                  "peak_dbfs": status.peaks.map { dB($0) }, "rms_dbfs": status.rms.map { dB($0) },
                  "xruns": status.xrunCount, "xrun_frames": xrunFrames, "disk_free_bytes": status.diskFreeBytes,
                  "capture_ring_fill": status.captureRingFill, "file": file])
            return
        }
        let levels = status.peaks.isEmpty ? status.outputPeaks : status.peaks
        let meters = levels.enumerated().map { "\($0.offset + 1) \(bar($0.element)) \(Decibels.text(dB($0.element)))" }
        var parts = ["\(label == "recording" ? "● REC" : "▶ PLAY") \(clock)"] + meters + ["xruns \(status.xrunCount)"]
        if status.diskFreeBytes >= 0 { parts.append("disk \(bytesText(status.diskFreeBytes)) free") }
        parts.append(file)
        let line = parts.joined(separator: "  ")
        Terminal.err(tty ? "\r\u{1B}[2K" + line : line + "\n")
    }

    /// Ends the in-place banner so the summary starts on a fresh line.
    func finish() {
        if tty && !json { Terminal.err("\n") }
    }

    /// One JSON object on one line of stdout.
    func emit(_ object: [String: Any]) {
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]),
              let text = String(data: data, encoding: .utf8) else { return }
        Terminal.out(text)
    }

    /// dBFS rounded to 0.1, clamped to −120…+60 so garbage input (NaN, huge floats from a
    /// float device) still prints and still encodes as JSON.
    private func dB(_ linear: Float) -> Double {
        guard linear.isFinite, linear > 0 else { return linear.isNaN || linear <= 0 ? -120 : 60 }
        return min(60, max(-120, (Decibels.fromLinear(Double(linear)) * 10).rounded() / 10))
    }

    private func bar(_ linear: Float) -> String {
        let db = min(0, max(-60, dB(linear)))
        let filled = min(10, max(0, Int(((db + 60) / 60 * 10).rounded())))
        return String(repeating: "█", count: filled) + String(repeating: "·", count: 10 - filled)
    }

    private func bytesText(_ b: Int64) -> String {
        let gb = Double(b) / 1e9
        if gb >= 1 { return "\((gb * 10).rounded() / 10) GB" }
        return "\(b / 1_000_000) MB"
    }
}
