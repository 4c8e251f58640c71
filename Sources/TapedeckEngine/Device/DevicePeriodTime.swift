/// Where a period lies on the device's own clock, in CLOCK_MONOTONIC nanoseconds (the clock
/// MIDI input is stamped with). The engine places stamped MIDI against it, so a note lands at
/// the frame it was played however late the audio thread woke: the thread's wake-up is only
/// when the period was *handled*, the device's clock says when it *was*.
///
/// A device tells it before each period it hands over
/// (``AudioDeviceClient/devicePeriodBegan(_:)``); one that cannot leaves the engine to
/// estimate the period starts from its wake-ups with a delay-locked loop.
public struct DevicePeriodTime: Sendable, Equatable, BitwiseCopyable {
    /// When the period began on the device's clock: the moment the device was ready for it
    /// (its capture complete; for playback alone, the buffer just filled by the period
    /// before), which a thread woken on time sees as its wake-up. MIDI played in the period's length before it is placed in
    /// it at the same offset — one period after it was played — and MIDI stamped later
    /// waits for the next period.
    public var beganNanoseconds: Int64
    /// Whether the reading is the device's clock itself — a timestamp taken with the
    /// hardware pointer, JACK's cycle times, a test device's schedule — and is used as it
    /// is. False for a reading no finer than a wake-up (a plugin whose pointer moves by
    /// another program's whole periods): the engine smooths those like wake-ups.
    public var isExact: Bool

    /// A reading.
    public init(beganNanoseconds: Int64, isExact: Bool) {
        self.beganNanoseconds = beganNanoseconds
        self.isExact = isExact
    }
}

extension AudioDeviceClient {
    /// Ignores the device's clock (a client with no stamped input).
    ///
    /// Audio thread: does nothing.
    public func devicePeriodBegan(_ time: DevicePeriodTime) {}
}

extension PeriodDevice {
    /// No reading: the engine estimates period starts from the audio thread's wake-ups.
    ///
    /// Audio thread: does nothing.
    public func periodTime(frameCount: Int) -> DevicePeriodTime? { nil }
}
