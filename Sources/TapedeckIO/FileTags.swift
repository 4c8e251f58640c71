import CSndfile

/// What a published file is called and by whom (`export --tag title=…`): ID3v2 text frames in
/// an MP3, Vorbis comments in Opus and FLAC, LIST/INFO strings in a WAV.
public struct FileTags: Equatable, Sendable {
    /// The title (TIT2, TITLE, INAM).
    public var title: String?
    /// The artist (TPE1, ARTIST, IART).
    public var artist: String?
    /// The album, or a podcast's show (TALB, ALBUM, IPRD).
    public var album: String?
    /// The date, `YYYY-MM-DD` (TDRC, DATE).
    public var date: String?

    /// Tags as given; nil fields are left to the session.
    public init(title: String? = nil, artist: String? = nil, album: String? = nil, date: String? = nil) {
        self.title = title
        self.artist = artist
        self.album = album
        self.date = date
    }

    /// The keys `--tag` takes.
    public static let keys = ["title", "artist", "album", "date"]

    /// Sets `key` (one of ``keys``, any case) to `value`; false for another key.
    public mutating func set(_ key: String, _ value: String) -> Bool {
        switch key.lowercased() {
        case "title": title = value
        case "artist": artist = value
        case "album": album = value
        case "date": date = value
        default: return false
        }
        return true
    }

    /// The word for a libsndfile string kind, for messages.
    static func name(_ kind: Int) -> String {
        switch kind {
        case SF_STR_TITLE: "title"
        case SF_STR_ARTIST: "artist"
        case SF_STR_ALBUM: "album"
        case SF_STR_DATE: "date"
        default: "software"
        }
    }
}
