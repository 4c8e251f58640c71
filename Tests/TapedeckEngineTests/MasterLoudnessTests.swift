import XCTest
import TapedeckCore
import TapedeckDSP
import TapedeckIO
@testable import TapedeckEngine
@testable import TapedeckDevices

/// The engine measures EBU R128 loudness on the master bus while rolling; a reset measures
/// afresh.
final class MasterLoudnessTests: XCTestCase {
    /// EBU Tech 3341 case 1: a stereo 1 kHz sine at −23 dBFS reads −23.0 LUFS.
    private func writeSine(_ path: String, dBFS: Double, seconds: Int) throws {
        let rate = 48000
        let writer = try AudioFileWriter(path: path, format: AudioFileFormat(container: .wav, encoding: .float32,
                                                                             sampleRate: rate, channelCount: 2))
        let amplitude = Float(pow(10, dBFS / 20))
        let block = (0..<rate).map { amplitude * Float(sin(2 * Double.pi * 1000 * Double($0) / Double(rate))) }
        for _ in 0..<seconds {
            try block.withUnsafeBufferPointer { try writer.write([$0.baseAddress!, $0.baseAddress!], frameCount: rate) }
        }
        try writer.close()
    }

    /// Rolls from where the transport stands to `frame` exactly (the engine stops there by
    /// itself, so every run lasts what it says on an unpaced clock too), then returns the
    /// reading.
    private func roll(_ engine: Engine, to frame: Int64, file: StaticString = #filePath, line: UInt = #line) -> LoudnessReading? {
        engine.setEndFrame(frame)
        engine.play()
        let deadline = Date().addingTimeInterval(30)
        while !(engine.status().transport == .stopped && engine.status().positionFrame >= frame) && Date() < deadline { usleep(1000) }
        XCTAssertEqual(engine.status().positionFrame, frame, "the transport rolled to the end frame", file: file, line: line)
        return engine.loudness()
    }

    func testASineAtMinus23dBFSReadsMinus23LUFSAndAResetMeasuresAfresh() throws {
        let dir = try Fixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/sine.wav"
        try writeSine(path, dBFS: -23, seconds: 40)
        let reader = try AudioFileReader(path: path, blockFrames: 16)
        let region = Region(file: path, timelineStartFrame: 0, lengthFrames: reader.frameCount)
        let spec = GraphSpec(tracks: [GraphSpec.Track(name: "sine", sources: [GraphSpec.Source(path: path, region: region)],
                                                      channelCount: 2)], sampleRate: 48000)
        let device = OfflineClockDevice(periodFrames: 256, capacityPeriods: 16)
        let engine = Engine(device: device)
        try engine.start(spec)
        defer { engine.close() }

        let first = try XCTUnwrap(roll(engine, to: 6 * 48000), "libebur128 made a meter")
        XCTAssertEqual(first.integratedLUFS, -23, accuracy: 0.2, "integrated")
        XCTAssertEqual(first.momentaryLUFS, -23, accuracy: 0.2, "momentary")
        XCTAssertEqual(first.shortTermLUFS, -23, accuracy: 0.2, "short-term")
        XCTAssertEqual(first.truePeakDecibels, -23, accuracy: 0.5, "true peak of a −23 dBFS sine")

        // Stop, the master fader to −10 dB, roll again as long: a stop does not restart the
        // measurement, so the integrated value is that of both runs (−23 and −33 LUFS of equal
        // length: their mean power, −25.6), the momentary that of now.
        engine.setMasterGain(decibels: -10)
        let both = try XCTUnwrap(roll(engine, to: 12 * 48000))
        XCTAssertEqual(both.momentaryLUFS, -33, accuracy: 0.3, "momentary, after the fader")
        XCTAssertEqual(both.integratedLUFS, 10 * log10((pow(10, -2.3) + pow(10, -3.3)) / 2), accuracy: 0.1,
                       "integrated over both runs; the stopped time in between does not count")

        // The reset: a new meter, nothing heard yet, then only what plays after it.
        engine.resetLoudness()
        XCTAssertEqual(try XCTUnwrap(engine.loudness()).integratedLUFS, -.infinity, "a reset begins with nothing heard")
        let fresh = try XCTUnwrap(roll(engine, to: 18 * 48000))
        XCTAssertEqual(fresh.integratedLUFS, -33, accuracy: 0.3, "integrated since the reset only")
    }

    /// The audio thread only copies the bus; the meter is fed off it (its thread, or a reader
    /// first), so a reading right after the audio has everything played.
    func testTheAudioThreadOnlyCopiesAndAReadingHasEverythingPlayed() throws {
        let handoff = LoudnessHandoff(sampleRate: 48000, maxFrames: 256)
        defer { handoff.close() }
        let amplitude = Float(pow(10, -23.0 / 20))
        let left = UnsafeMutablePointer<Float>.allocate(capacity: 256), right = UnsafeMutablePointer<Float>.allocate(capacity: 256)
        defer { left.deallocate(); right.deallocate() }
        var bus = [left, right]
        var frame = 0
        // 1.5 s in 256-frame periods, as fast as a loop goes (the ring holds two seconds).
        while frame < 72_000 {
            for i in 0..<256 { left[i] = amplitude * Float(sin(2 * Double.pi * 1000 * Double(frame + i) / 48000)) }
            right.update(from: left, count: 256)
            bus.withUnsafeBufferPointer { handoff.measure($0.baseAddress!, frameCount: 256, mayWait: false) }
            frame += 256
        }
        let reading = try XCTUnwrap(handoff.reading())
        XCTAssertEqual(handoff.droppedFrames.load(ordering: .relaxed), 0)
        XCTAssertEqual(reading.momentaryLUFS, -23, accuracy: 0.2)
        XCTAssertEqual(reading.integratedLUFS, -23, accuracy: 0.2)
        // A reset: what was played stays with the old meter.
        handoff.renew()
        XCTAssertEqual(try XCTUnwrap(handoff.reading()).integratedLUFS, -.infinity)
    }
}
