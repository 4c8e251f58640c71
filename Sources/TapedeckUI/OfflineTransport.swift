import TapedeckCore
import TapedeckIO
#if canImport(Glibc)
import Glibc
#endif

/// A ``TransportLink`` with no sound device, so the screen works anywhere.
///
/// While "playing" the playhead follows the monotonic clock at the chosen speed (and cycles
/// over the loop); the meters read the peak files at the playhead, so the screen shows the
/// music moving even though nothing is heard. Recording is refused, unless
/// `pretendsToRecord` is set (tests use it to see the recording display without hardware).
public final class OfflineTransport: TransportLink {
    private var session = Session()
    private let peaks: PeakCache
    private let folderPath: String?
    private let pretendsToRecord: Bool
    private let clock: () -> Double
    private var state = TransportState.stopped
    private var anchorFrame: Int64 = 0
    private var anchorSeconds = 0.0
    private var speed = 1.0
    private var loop: FrameRange?
    private var loopEnabled = false

    /// The name shown where a device name would be.
    public static let deviceName = "offline (no audio device)"

    /// A transport for `session` whose files live in `folderPath`, reading peaks through
    /// `peaks`. `clock` gives monotonic seconds (injectable for tests).
    public init(session: Session, folderPath: String?, peaks: PeakCache, pretendsToRecord: Bool = false,
                clock: @escaping () -> Double = OfflineTransport.monotonicSeconds) {
        self.session = session
        self.peaks = peaks
        self.folderPath = folderPath
        self.pretendsToRecord = pretendsToRecord
        self.clock = clock
        self.loop = session.loopRange
        self.loopEnabled = session.loopEnabled
    }

    /// Seconds on the monotonic clock.
    public static func monotonicSeconds() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    /// Follows session edits (the meters use mute, solo and gains).
    public func update(session: Session) { self.session = session }

    /// Starts the clock at `fromFrame`.
    public func play(fromFrame: Int64) {
        anchor(at: fromFrame)
        state = .playing
    }

    /// Freezes the playhead where it is.
    public func stop() {
        anchor(at: position())
        state = .stopped
    }

    /// Refuses (no device), unless pretending for tests.
    public func record(fromFrame: Int64) -> String? {
        guard pretendsToRecord else { return "no audio device: recording needs one" }
        anchor(at: fromFrame)
        state = .recording
        return nil
    }

    /// Moves the playhead.
    public func locate(frame: Int64) { anchor(at: max(0, frame)) }

    /// Changes how fast the clock runs the playhead.
    public func setSpeed(_ ratio: Double) {
        anchor(at: position())
        speed = min(max(ratio, 0.0625), 16)
    }

    /// Nothing is heard offline, so the mode changes nothing.
    public func setMode(_ mode: PlaybackMode) {}
    /// Nothing is heard offline, so pitch changes nothing.
    public func setPitch(semitones: Double) {}

    /// The playhead cycles over `range` while playing when `enabled`.
    public func setLoop(_ range: FrameRange?, enabled: Bool) {
        anchor(at: position())
        loop = range
        loopEnabled = enabled
    }

    /// Nothing records offline, so punching changes nothing.
    public func setPunch(_ range: FrameRange?, enabled: Bool) {}

    /// The clock's position and the peak-file meters at it.
    public func snapshot() -> TransportSnapshot {
        let pos = position()
        if state != .stopped { anchor(at: pos) }
        return TransportSnapshot(state: state, positionFrame: pos, trackLevels: levels(at: pos),
                                 xrunCount: 0, dspLoad: 0, diskSecondsLeft: diskSecondsLeft(),
                                 deviceName: OfflineTransport.deviceName, isOffline: true, lastError: nil)
    }

    /// Only the offline device.
    public func devices() -> [String] { [OfflineTransport.deviceName] }

    /// Only the offline device can be chosen.
    public func selectDevice(_ name: String) -> String? {
        name == OfflineTransport.deviceName ? nil : "\(name): no such device (no sound card found)"
    }

    // MARK: - Clock

    private func anchor(at frame: Int64) {
        anchorFrame = frame
        anchorSeconds = clock()
    }

    /// The playhead now: the anchor plus the wall time since, at the chosen speed, wrapped
    /// into the loop when cycling.
    private func position() -> Int64 {
        guard state != .stopped else { return anchorFrame }
        let elapsed = max(0, clock() - anchorSeconds)
        var pos = anchorFrame + Int64(elapsed * speed * Double(session.sampleRate))
        if state == .playing, loopEnabled, let l = loop, l.frameCount > 0, anchorFrame < l.endFrame, pos >= l.endFrame {
            pos = l.startFrame + (pos - l.startFrame) % l.frameCount
        }
        return pos
    }

    // MARK: - Meters and disk

    private func levels(at frame: Int64) -> [[ChannelLevel]] {
        OfflineTransport.peakLevels(session: session, peaks: peaks, at: frame, moving: state != .stopped)
    }

    /// What each track's channels would read at `frame`: the peak-file peak over one UI frame
    /// (1/30 s), after region and track gain; silence when not `moving` or not audible. RMS
    /// is estimated as the peak of a sine (−3 dB) because peak files keep no power. The
    /// engine link uses it too, for the tracks it plays (the engine meters only inputs).
    public static func peakLevels(session: Session, peaks: PeakCache, at frame: Int64, moving: Bool) -> [[ChannelLevel]] {
        let window = Int64(session.sampleRate / 30)
        return session.tracks.indices.map { t in
            let track = session.tracks[t]
            let channels = max(1, track.inputChannels.count)
            guard moving, session.isAudible(trackIndex: t) else {
                return Array(repeating: .silent, count: channels)
            }
            return (0..<channels).map { c in
                var peak: Float = 0
                for region in track.regions where region.timelineStartFrame < frame + window && region.timelineEndFrame > frame {
                    let a = peaks.amplitude(region: region, channel: c, fromFrame: frame, toFrame: frame + window)
                    peak = max(peak, a * Float(Decibels.toLinear(region.gainDecibels)))
                }
                let db = Decibels.fromLinear(Double(peak)) + track.gainDecibels
                return ChannelLevel(peakDecibels: db, rmsDecibels: db - 3.01)
            }
        }
    }

    private func diskSecondsLeft() -> Double? {
        var st = statvfs()
        guard statvfs(folderPath ?? ".", &st) == 0 else { return nil }
        let bytes = Double(st.f_bavail) * Double(st.f_frsize)
        let channels = max(1, session.tracks.filter(\.armed).reduce(0) { $0 + $1.inputChannels.count })
        return bytes / (Double(channels) * 4 * Double(session.sampleRate))
    }
}
