import TapedeckTransport

/// Meter scaling and drawing, kept pure so it can be tested without a terminal.
public enum MeterRender {
    /// The bottom of the meter scale.
    public static let floorDecibels = -60.0
    /// Peaks at or above this count as clipping.
    public static let clipDecibels = 0.0

    /// Where `decibels` sits on a meter, 0 (floor or below) … 1 (0 dBFS or above).
    public static func fraction(decibels: Double) -> Double {
        guard decibels.isFinite else { return decibels > 0 ? 1 : 0 }
        return min(1, max(0, (decibels - floorDecibels) / -floorDecibels))
    }

    /// Cells lit for `decibels` on a meter `width` cells wide.
    public static func cells(decibels: Double, width: Int) -> Int {
        Int((fraction(decibels: decibels) * Double(max(0, width))).rounded())
    }

    /// The decibel value at the right edge of cell `index` of `width`.
    public static func decibels(atCell index: Int, width: Int) -> Double {
        floorDecibels + Double(index + 1) / Double(max(1, width)) * -floorDecibels
    }

    /// Colour zone for a cell whose right edge is at `decibels`.
    public static func role(forDecibels decibels: Double) -> Role {
        decibels > -6 ? .meterHigh : decibels > -18 ? .meterMid : .meterLow
    }

    /// Draws one channel's meter at (`y`, `x`), `width` cells: full cells to the RMS level,
    /// half cells on to the peak, a hold tick, and a clip marker in the last cell.
    public static func draw(into canvas: inout Canvas, y: Int, x: Int, width: Int, meter: MeterReading, glyphs: Glyphs) {
        guard width >= 2 else { return }
        let barWidth = width - 1
        let rmsCells = cells(decibels: meter.rmsDecibels, width: barWidth)
        let peakCells = cells(decibels: meter.peakDecibels, width: barWidth)
        let holdCell = cells(decibels: meter.holdDecibels, width: barWidth) - 1
        for i in 0..<barWidth {
            let zone = role(forDecibels: decibels(atCell: i, width: barWidth))
            if i < rmsCells {
                canvas.set(y, x + i, glyphs.meterFull, zone)
            } else if i < peakCells {
                canvas.set(y, x + i, glyphs.levels[4], zone)
            } else if i == holdCell {
                canvas.set(y, x + i, glyphs.hold, .meterHold)
            } else {
                canvas.set(y, x + i, glyphs.meterEmpty, .dim)
            }
        }
        canvas.set(y, x + barWidth, meter.clipped ? "!" : " ", meter.clipped ? .clip : .dim)
    }
}

/// What one channel's meter shows: levels plus the screen's own peak hold and clip latch.
public struct MeterReading: Equatable, Sendable {
    /// Current peak, dBFS.
    public var peakDecibels = -Double.infinity
    /// Current RMS, dBFS.
    public var rmsDecibels = -Double.infinity
    /// Highest recent peak, held for ``MeterBallistics/holdSeconds``.
    public var holdDecibels = -Double.infinity
    /// When the hold was set (monotonic seconds).
    public var holdSetAtSeconds = 0.0
    /// Latched when a peak reached 0 dBFS, until the clip lights are reset.
    public var clipped = false

    /// A silent meter.
    public init() {}
}

/// Peak hold and clip latch over the engine's snapshots.
public enum MeterBallistics {
    /// How long a peak hold stays before it falls to the current peak.
    public static let holdSeconds = 1.5

    /// Folds a new level into a reading taken at `nowSeconds`, merging the engine's own
    /// peak hold and clip indicator when the link keeps them.
    public static func update(_ reading: inout MeterReading, with level: ChannelLevel, nowSeconds: Double) {
        reading.peakDecibels = level.peakDecibels
        reading.rmsDecibels = level.rmsDecibels
        // The engine holds peaks it saw between snapshots too; the screen holds them a while.
        let top = max(level.peakDecibels, level.holdDecibels)
        if top >= reading.holdDecibels || nowSeconds - reading.holdSetAtSeconds > holdSeconds {
            reading.holdDecibels = top
            reading.holdSetAtSeconds = nowSeconds
        }
        if level.peakDecibels >= MeterRender.clipDecibels { reading.clipped = true }
        // The engine sees every sample, the screen only snapshots: its hold and clip light win.
        reading.holdDecibels = max(reading.holdDecibels, level.holdDecibels)
        if level.clipped { reading.clipped = true }
    }
}
