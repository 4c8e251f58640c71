import TapedeckCore

/// The panel that arrow keys act on.
public enum Panel: String, Sendable, CaseIterable {
    /// Up/down choose the track, left/right move the playhead.
    case tracks
    /// Like tracks; the timeline is highlighted.
    case timeline
    /// The selected track's chain: up/down choose a node, left/right change a parameter.
    case chain
}

/// A question that must be answered before something destructive happens.
public enum Confirmation: Equatable, Sendable {
    /// Quitting with unsaved changes.
    case quitUnsaved
    /// Deleting a track (index).
    case deleteTrack(Int)
    /// Removing a bus (index): what was routed to it goes to the master, sends to it go.
    case deleteBus(Int)
    /// Removing a node (track, node index) from the chain being edited.
    case removeNode(track: Int, node: Int)

    /// The question on screen.
    public var question: String {
        switch self {
        case .quitUnsaved: "Unsaved changes. Quit anyway?"
        case .deleteTrack: "Delete this track and its regions?"
        case .deleteBus: "Remove this bus? Sends to it go, outputs to it go to the master."
        case .removeNode: "Remove this node from the chain?"
        }
    }

    /// The answers, as a hint line.
    public var answers: String {
        switch self {
        case .quitUnsaved: "y quit without saving · s save and quit · n stay"
        case .deleteTrack: "y delete · n keep"
        case .deleteBus: "y remove · n keep"
        case .removeNode: "y remove · n keep"
        }
    }
}

/// What a line of typed text is for.
public enum TextPurpose: Equatable, Sendable {
    /// The whole chain of a track.
    case chain(track: Int)
    /// Where to save an untitled session.
    case saveAs
    /// The export file.
    case exportPath
    /// A track's new name.
    case renameTrack(Int)
    /// A marker's new name.
    case renameMarker(Int)
    /// A track's input channels.
    case input(Int)
    /// A region's new length or stretch factor.
    case stretch(RegionRef)
    /// A MIDI region's quantise grid and strength.
    case quantize(RegionRef)
    /// A new bus's name (its width is asked next).
    case newBus
    /// The level of send `send` of strip `strip`, in dB.
    case sendLevel(strip: Int, send: Int)
    /// Device outputs for strip `strip`, typed (`out:5-6`, `5-6`, `5`).
    case output(strip: Int)
    /// A new automation lane's parameter on track `track`.
    case automationLane(track: Int)
    /// A tempo or meter change at bar `bar`.
    case tempo(bar: Int)
}

/// A pick from a short list (a bus to send to, an output, a bus's width).
public struct Choice: Equatable, Sendable {
    /// What the pick is for.
    public enum Purpose: Equatable, Sendable {
        /// A new send from strip `strip`: the items are bus names.
        case sendTo(strip: Int)
        /// Strip `strip`'s output: the items are outputs as typed (`master`, `bus:NAME`,
        /// `out:3-4`), the last one asking for other device outputs.
        case output(strip: Int)
        /// The width of a new bus called `name`: `stereo` or `mono`.
        case busWidth(name: String)
    }

    /// What it is for.
    public var purpose: Purpose
    /// The window's title.
    public var title: String
    /// The entries, as shown.
    public var items: [String]
    /// The highlighted entry.
    public var selected: Int
    /// A line under the list (what the entries mean), or nil.
    public var note: String?
}

/// A line being typed in a dialog.
public struct TextInput: Equatable, Sendable {
    /// What it is for.
    public var purpose: TextPurpose
    /// The prompt shown before it.
    public var prompt: String
    /// The text so far.
    public var text: String
    /// Why the last attempt was refused, shown under it.
    public var problem: String?
    /// Lines of help shown under the text (what the export dialog's options are).
    public var notes: [String] = []
    /// Whether ``text`` is a value offered (a bus's next name, a send's level, a region's
    /// length) that the first character typed replaces, as a selected field does; any
    /// editing key (backspace, ctrl-w) keeps it to edit instead. False for text meant to be
    /// extended (a chain, a file path).
    public var offered: Bool

    public init(purpose: TextPurpose, prompt: String, text: String, problem: String? = nil, notes: [String] = [], offered: Bool = false) {
        self.purpose = purpose
        self.prompt = prompt
        self.text = text
        self.problem = problem
        self.notes = notes
        self.offered = offered && !text.isEmpty
    }
}

/// The import browser's state.
public struct Browser: Equatable, Sendable {
    /// The folder shown.
    public var folder: String
    /// Its folders and audio files: folders end in `/`; `../` first.
    public var allEntries: [String]
    /// What has been typed to narrow the list (case-insensitive, anywhere in the name).
    public var filter = ""
    /// The highlighted entry of ``entries``.
    public var selected: Int

    /// Creates a browser of `folder` showing `entries`.
    public init(folder: String, entries: [String], selected: Int = 0) {
        self.folder = folder
        self.allEntries = entries
        self.selected = selected
    }

    /// The entries shown: all of them, or those whose name contains ``filter``.
    public var entries: [String] {
        guard !filter.isEmpty else { return allEntries }
        let key = filter.lowercased()
        return allEntries.filter { $0 != "../" && $0.lowercased().contains(key) }
    }
}

/// A window over the screen that takes the keys while it is open.
public enum Overlay: Sendable {
    /// The key list, scrolled down by this many lines.
    case help(scroll: Int)
    /// A yes/no question.
    case confirm(Confirmation)
    /// A line of text being typed.
    case text(TextInput)
    /// The device list and the highlighted one.
    case devices([String], selected: Int)
    /// Files to import.
    case importBrowser(Browser)
    /// An export running or finished.
    case export(ExportJob, outputPath: String)
    /// A pick from a list.
    case choice(Choice)
}
