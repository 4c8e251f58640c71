import Foundation
import TapedeckDSP
#if canImport(Glibc)
import Glibc
#endif

/// Makes the first live speed or pitch change quick.
///
/// The first ``LiveStretcher`` of a process measures Rubber Band's start delays for its rate
/// and channel count (kept process-wide afterwards): about a second of CPU in a release
/// build, over ten in a debug one. The engine makes its stretchers on the control thread
/// when speed first leaves 1×, which for the screen is the UI thread, frozen meanwhile. So
/// the screen has the measurement done at startup, on a background thread at the lowest
/// priority, where it costs the music and the keys nothing.
enum TimePitchWarmUp {
    /// Starts measuring for `sampleRate`, stereo (the engine stretches the stereo mix), for
    /// both engines: the mix's time-pitch makes an R2 and an R3 stretcher (R3 runs above 4×
    /// and with `--quality best`), and an R3 measured on the UI thread froze the first speed
    /// change for seconds.
    static func start(sampleRate: Int) {
        let thread = Thread {
            // SCHED_IDLE (Linux, no privilege needed): runs only on otherwise idle CPU time,
            // so the audio, disk and UI threads always come first.
            // Named for the OS too (Foundation's name is its own on Linux): `top -H` and the
            // tests see it. (pthread_setname_np is not in Swift's Glibc module.)
            if let comm = fopen("/proc/thread-self/comm", "w") {
                fputs("tapedeck time", comm)
                fclose(comm)
            }
            var param = sched_param()
            param.sched_priority = 0
            pthread_setschedparam(pthread_self(), 5 /* SCHED_IDLE */, &param)
            for quality in [StretchQuality.fast, .best] {
                let source = SilentSource(channelCount: 2)
                withExtendedLifetime(source) {
                    _ = LiveStretcher(sampleRate: sampleRate, channelCount: 2, maxFrames: 256, source: source, quality: quality)
                }
            }
        }
        thread.name = "tapedeck time-pitch warm-up"
        thread.start()
    }
}

/// Endless silence, the warm-up's input.
private final class SilentSource: TimePitchSource {
    let channelCount: Int
    init(channelCount: Int) { self.channelCount = channelCount }

    func read(into channels: UnsafePointer<UnsafeMutablePointer<Float>>, frameCount: Int) -> Int {
        for c in 0..<channelCount { channels[c].update(repeating: 0, count: frameCount) }
        return frameCount
    }
}
