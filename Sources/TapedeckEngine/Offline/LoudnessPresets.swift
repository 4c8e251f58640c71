/// Delivery targets by name, for `export --normalize NAME`.
extension NormalizedMixdown.Target {
    /// The names ``named(_:)`` knows, in the order help lists them.
    public static let presetNames = ["podcast", "podcast-mono", "broadcast", "broadcast-mono"]

    /// The target called `name` (any case), or nil.
    ///
    /// - `podcast`: −16 LUFS, −1 dBTP, stereo: AES TD1004's distribution loudness for
    ///   streaming and Apple Podcasts' published target.
    /// - `podcast-mono`: −19 LUFS, −1 dBTP, one channel. BS.1770 measures a mono file as one
    ///   channel, but a player puts it on both speakers, where it sounds 3 LU louder than it
    ///   reads; Apple's guidance (as the podcast loudness guides quote it) is −19 LUFS for a
    ///   mono file, heard like a −16 LUFS stereo one.
    /// - `broadcast`: EBU R128, −23 LUFS with a −1 dBTP maximum true peak.
    /// - `broadcast-mono`: the same −23 LUFS / −1 dBTP for a one-channel file: R128's target
    ///   does not change with the channel format (the file is measured as one channel).
    public static func named(_ name: String) -> NormalizedMixdown.Target? {
        switch name.lowercased() {
        case "podcast": NormalizedMixdown.Target(integratedLUFS: -16, truePeakCeilingDecibels: -1)
        case "podcast-mono": NormalizedMixdown.Target(integratedLUFS: -19, truePeakCeilingDecibels: -1, mono: true)
        case "broadcast": NormalizedMixdown.Target(integratedLUFS: -23, truePeakCeilingDecibels: -1)
        case "broadcast-mono": NormalizedMixdown.Target(integratedLUFS: -23, truePeakCeilingDecibels: -1, mono: true)
        default: nil
        }
    }
}
