/// Where each part of the screen goes for a terminal size. Pure arithmetic, so resizing is
/// just computing a new layout.
public struct Layout: Equatable, Sendable {
    /// Smallest usable terminal width; below it the screen shows a notice instead.
    public static let minimumWidth = 60
    /// Smallest usable terminal height.
    public static let minimumHeight = 12
    /// Rows per track in the track list and timeline.
    public static let rowsPerTrack = 2

    /// Terminal rows.
    public let height: Int
    /// Terminal columns.
    public let width: Int

    /// Creates the layout of a `height` × `width` terminal.
    public init(height: Int, width: Int) {
        self.height = height
        self.width = width
    }

    /// Whether the terminal is big enough for the full screen.
    public var fits: Bool { height >= Layout.minimumHeight && width >= Layout.minimumWidth }
    /// Rows 0–1: the transport bar.
    public var transportRow: Int { 0 }
    /// Rows 2–3: the ruler (labels, then loop/punch/markers).
    public var rulerRow: Int { 2 }
    /// First row of the track area.
    public var tracksTop: Int { 4 }
    /// Rows of the chain panel when it has the focus.
    public var chainPanelRows: Int { min(8, max(3, (height - 8) / 3)) }
    /// The message line (last row).
    public var messageRow: Int { height - 1 }
    /// The status/hint line above it.
    public var statusRow: Int { height - 2 }
    /// Columns of the track list on the left.
    public var trackListWidth: Int { min(56, max(40, width * 45 / 100)) }
    /// First column of the timeline (one column of gutter after the list).
    public var timelineLeft: Int { trackListWidth + 1 }
    /// Columns of timeline.
    public var timelineWidth: Int { max(0, width - timelineLeft) }

    /// Rows of the track area, given whether the chain panel is open.
    public func trackRows(chainPanel: Bool) -> Int {
        max(0, statusRow - tracksTop - (chainPanel ? chainPanelRows : 0))
    }
}
