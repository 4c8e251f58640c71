import TapedeckCore
import TapedeckDSP
import TapedeckIO

/// `tapedeck chain`: sets or shows a track's (or the master) effect chain.
struct ChainCommand: Command {
    static let name = "chain"
    static let summary = "set or show a track's input or playback chain, or the master chain"
    static let usage = """
    usage: tapedeck chain SESSION TRACK|master [--input] [CHAIN]

    TRACK is a 1-based number or a track name. Without --input the playback chain is set
    (it runs on the track before its fader); with --input, the chain recording goes through.
    `master` sets the chain on the mix. Without CHAIN the current one is printed; an empty
    CHAIN ('') clears it. The chain is checked before anything is saved and the session
    stores it in canonical form.

    example: tapedeck chain song.tapedeck 2 'hpf:80,comp:threshold=-18:ratio=4'
    example: tapedeck chain song.tapedeck Vocal --input 'gate:-50,hpf:100'
    example: tapedeck chain song.tapedeck master 'limiter:ceiling=-1'
    """

    let folder: SessionFolder
    let trackText: String
    let input: Bool
    let chainText: String?

    init(arguments: inout Arguments) throws {
        input = arguments.flag("--input")
        folder = SessionFolder(path: try arguments.required("a session folder"))
        trackText = try arguments.required("a track number, name or 'master'")
        chainText = arguments.positional()
    }

    func run() throws -> Int32 {
        // Only a change needs the session's lock; showing the chain reads.
        let lock = try chainText.map { _ throws(SessionError) in try SessionLock.acquire(folder) }
        defer { withExtendedLifetime(lock) {} }
        var document = SessionDocument(session: try folder.load())
        let isMaster = trackText == "master"
        if isMaster && input { throw UsageError("chain: the master has no input chain") }
        let index = isMaster ? nil : try TrackSelector.index(of: trackText, in: document.session, command: "chain")
        guard let chainText else {
            let current: String
            if let index {
                current = input ? document.session.tracks[index].inputChain : document.session.tracks[index].playbackChain
            } else {
                current = document.session.masterChain
            }
            Terminal.out(current.isEmpty ? "(no effects)" : current.terminalSafe)
            return ExitCode.ok
        }
        let chain = try Chain(parsing: chainText)
        document.edit("set chain") { (s: inout Session) in
            if let index {
                if input { s.tracks[index].inputChain = chain.text } else { s.tracks[index].playbackChain = chain.text }
            } else {
                s.masterChain = chain.text
            }
        }
        try folder.save(document.session)
        let place = index.map { "track \($0 + 1) (\(document.session.tracks[$0].name.terminalSafe)) \(input ? "input" : "playback")" } ?? "master"
        Terminal.out("\(place) chain: \(chain.text.isEmpty ? "(no effects)" : chain.text)")
        return ExitCode.ok
    }
}
