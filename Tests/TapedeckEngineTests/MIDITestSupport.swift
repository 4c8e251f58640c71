import Foundation
import Synchronization
import TapedeckCore
import TapedeckDSP
import TapedeckIO
@testable import TapedeckEngine

/// A playback device paced by the monotonic clock, like a sound card: the period holding
/// device frames [k·n, (k+1)·n) is due when they have passed, at `startNanoseconds + (k+1)·n/rate`.
/// So device frame f is "now" at `startNanoseconds + f/rate`, which is how a test turns a
/// frame into the moment to send a MIDI message. It keeps everything played (left channel,
/// at its device frame), and tells the engine its schedule (``periodTime(frameCount:)``), as a
/// card tells its timestamps.
///
/// `lateWakeUps` makes the audio thread late as a busy machine does, deterministically: the
/// period starting at device frame `frame` is handed over `nanoseconds` after it is due (the
/// periods behind it then follow at once until the schedule is caught up; no frame is lost).
///
/// `xruns` makes it lose frames as a card does when the thread stalls: the period rendered
/// from device frame `frame` is refused (the thread stalls until that period and `lostFrames`
/// more have passed, unheard, and the write says so); the next period renders from where
/// the device's clock then is.
final class PacedRecordingDevice: PeriodDevice, @unchecked Sendable {
    var configuration: DeviceConfiguration
    let driver = PeriodDriver()
    private(set) var output: UnsafeMutablePointer<Float>
    let capacityFrames: Int
    /// The device frame of the period about to render.
    private var nextFrame: Int64 = 0
    /// When device frame 0 happened (set as the streams start).
    let startNanoseconds = Atomic<Int64>(0)
    let framesWritten = Atomic<Int>(0)

    private let lateWakeUps: [(frame: Int64, nanoseconds: Int64)]
    private let xruns: [(frame: Int64, lostFrames: Int64)]

    init(periodFrames: Int = 256, seconds: Double = 10, sampleRate: Int = 48000,
         lateWakeUps: [(frame: Int64, nanoseconds: Int64)] = [], xruns: [(frame: Int64, lostFrames: Int64)] = []) {
        self.lateWakeUps = lateWakeUps
        self.xruns = xruns
        configuration = DeviceConfiguration(name: "paced", sampleRate: sampleRate, captureChannels: 0, playbackChannels: 2,
                                            periodFrames: periodFrames, periodCount: 2, bufferFrames: periodFrames * 2,
                                            captureFormat: nil, playbackFormat: .float32,
                                            captureLatencyFrames: 0, playbackLatencyFrames: 0, linked: false)
        capacityFrames = Int(seconds * Double(sampleRate))
        output = .allocate(capacity: capacityFrames)
        output.initialize(repeating: 0, count: capacityFrames)
    }

    deinit { output.deallocate() }

    func startStreams() throws(DeviceError) { startNanoseconds.store(monotonicNanoseconds(), ordering: .releasing) }
    func stopStreams() {}

    /// The monotonic time at which device frame `frame` happens.
    func nanoseconds(atFrame frame: Int64) -> Int64 {
        startNanoseconds.load(ordering: .acquiring) + frame * 1_000_000_000 / Int64(configuration.sampleRate)
    }

    private func sleep(untilFrame frame: Int64, late: Int64 = 0) {
        let wait = nanoseconds(atFrame: frame) + late - monotonicNanoseconds()
        if wait > 0 { sleepNanoseconds(wait) }
    }

    func read(into channels: UnsafePointer<UnsafeMutablePointer<Float>>, frameCount: Int) -> DeviceIOResult {
        let next = nextFrame + Int64(configuration.periodFrames)
        var late: Int64 = 0
        for l in lateWakeUps where l.frame == next { late += l.nanoseconds }
        sleep(untilFrame: next, late: late)
        return .ok
    }

    /// The period about to render began when its first frame was due on the schedule,
    /// whenever the thread got to it. (Capture-less, the period from frame f renders after
    /// the write that waited for frame f.)
    func periodTime(frameCount: Int) -> DevicePeriodTime? {
        DevicePeriodTime(beganNanoseconds: nanoseconds(atFrame: nextFrame), isExact: true)
    }

    func write(from channels: UnsafePointer<UnsafeMutablePointer<Float>>, frameCount: Int) -> DeviceIOResult {
        if let xrun = xruns.first(where: { $0.frame == nextFrame }) {
            // The thread stalls; the device plays on, unheard, and refuses this period.
            let resume = nextFrame + Int64(frameCount) + xrun.lostFrames
            sleep(untilFrame: resume)
            nextFrame = resume
            framesWritten.store(Int(min(resume, Int64(capacityFrames))), ordering: .releasing)
            return .xrun(lostFrames: xrun.lostFrames)
        }
        if configuration.captureChannels == 0 {
            // Capture-less: read is not called, so the pace is kept here.
            _ = read(into: channels, frameCount: frameCount)
        }
        let at = Int(nextFrame)
        let n = min(frameCount, capacityFrames - at)
        if n > 0 { (output + at).update(from: channels[0], count: n) }
        nextFrame += Int64(frameCount)
        framesWritten.store(Int(nextFrame), ordering: .releasing)
        return .ok
    }

    /// The output so far (silence where frames were lost).
    var played: [Float] { Array(UnsafeBufferPointer(start: output, count: min(framesWritten.load(ordering: .acquiring), capacityFrames))) }
}

enum MIDIFixture {
    /// A session folder with one MIDI track playing `chain`, its MIDI regions holding
    /// `sequence` from timeline frame `at`.
    static func session(in dir: String, chain: String, sequence: MIDISequence?, at: Int64 = 0,
                        sampleRate: Int = 48000) throws -> (Session, SessionFolder) {
        let folder = SessionFolder(path: dir + "/m")
        var session = Session(sampleRate: sampleRate)
        try folder.create(session)
        var track = Track(name: "Keys", playbackChain: chain, isMIDI: true)
        if let sequence {
            let file = try MIDIRegionFile.writeNew(sequence, base: "keys", name: "Keys", folder: folder, tempoMap: session.tempoMap)
            track.regions = [Region(file: file, timelineStartFrame: at, lengthFrames: sequence.lengthFrames, isMIDI: true)]
        }
        session.tracks = [track]
        try folder.save(session)
        return (session, folder)
    }

    /// A click sample: one full-scale frame, then silence (an onset is unmistakable).
    static func writeClick(_ path: String, frames: Int = 4800) throws {
        var samples = [Float](repeating: 0, count: frames)
        samples[0] = 1
        let w = try AudioFileWriter(path: path, format: AudioFileFormat(container: .wav, encoding: .float32, sampleRate: 48000, channelCount: 1))
        try samples.withUnsafeBufferPointer { p in try w.write([p.baseAddress!], frameCount: frames) }
        try w.close()
    }

    /// Frames where `x` rises above `threshold` after being quiet for `gap` frames.
    static func onsets(_ x: [Float], threshold: Float = 0.1, gap: Int = 1000) -> [Int] {
        var out: [Int] = []
        var quiet = gap
        for (i, v) in x.enumerated() {
            if abs(v) > threshold {
                if quiet >= gap { out.append(i) }
                quiet = 0
            } else {
                quiet += 1
            }
        }
        return out
    }

    /// Waits (sleeping) until the monotonic clock reaches `nanoseconds`.
    static func sleep(until nanoseconds: Int64) {
        let wait = nanoseconds - monotonicNanoseconds()
        if wait > 0 { usleep(useconds_t(wait / 1000)) }
    }
}
