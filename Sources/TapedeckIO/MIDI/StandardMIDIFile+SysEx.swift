import TapedeckCore

// Apart from StandardMIDIFile.swift to keep that file under 500 lines.
extension StandardMIDIFile {
    /// A SysEx event of a track, in ticks: `status` 0xF0 or 0xF7 and the bytes after its
    /// length, exactly as the file holds them (see ``MIDISequence/SysEx``).
    public struct SysEx: Equatable, Sendable {
        /// Ticks from the track's start.
        public var tick: Int64
        /// 0xF0 (a message or its first packet) or 0xF7 (a continuation or an escape).
        public var status: UInt8
        /// The bytes after the length.
        public var data: [UInt8]

        /// Creates a SysEx event.
        public init(tick: Int64, status: UInt8 = 0xF0, data: [UInt8]) {
            self.tick = tick
            self.status = status
            self.data = data
        }
    }
}
