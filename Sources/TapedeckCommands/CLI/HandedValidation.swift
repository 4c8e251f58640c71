import TapedeckCore

// What each handed command's parser guarantees of its value, checked again when the value
// arrives as JSON (``HandedCommand/validate()``; ``OwnerForwarding/decode(_:)`` calls it). The
// parser gives these values only through the checks below, so the command line never meets a
// refusal here; a hand-made `cmd` line does (found by feeding the open screen a region number
// of -5: it trapped). Every handed command says what it checks, even when that is nothing but
// words read when it runs, so a command added later must decide.

extension RegionCommand {
    func validate() throws(UsageError) {
        if let regionID {
            try HandedCheck.within(regionID, 1...Int.max, "region", "regionID")
            guard number == 0 else { throw HandedCheck.refuse("region", "number", "goes with regionID only as 0") }
        } else {
            try HandedCheck.within(number, 1...Int.max, "region", "number")
        }
        if edit != nil, number == nil { throw HandedCheck.refuse("region", "edit", "without a region") }
        switch edit {
        case .gain(let db)?:
            guard !db.isNaN, db <= 24 else { throw HandedCheck.refuse("region", "gain", "\(db) is outside -inf...+24 dB") }
        case .rate(let r)?:
            guard r.isFinite, r >= 1.0 / 32, r <= 32 else { throw HandedCheck.refuse("region", "rate", "\(r) is outside 1/32...32") }
        default:
            break
        }
    }
}

extension TrackCommand {
    func validate() throws(UsageError) {
        try HandedCheck.level(gain, "track", "gain")
        try HandedCheck.pan(pan, "track", "pan")
        if let input {
            guard (1...2).contains(input.count), input.allSatisfy({ (1...InputChannels.maximumChannel).contains($0) }),
                  input.count == 1 || input[0] != input[1] else {
                throw HandedCheck.refuse("track", "input", "\(input) is not one channel or a pair of 1...\(InputChannels.maximumChannel)")
            }
        }
    }
}

extension SendCommand {
    func validate() throws(UsageError) {
        try HandedCheck.level(level, "send", "level")
        try HandedCheck.pan(pan, "send", "pan")
        if busText == nil && (level != nil || pan != nil || preFader != nil || remove) {
            throw HandedCheck.refuse("send", "busText", "missing with a change")
        }
    }
}

extension TakesCommand {
    func validate() throws(UsageError) {
        try HandedCheck.within(cycle, 1...1_000_000, "takes", "cycle")
        if let choose {
            try HandedCheck.within(choose.group, 1...Int.max, "takes", "choose.group")
            try HandedCheck.within(choose.take, 1...Int.max, "takes", "choose.take")
        }
        if cycle != nil && choose != nil { throw UsageError("takes: --cycle and --choose cannot be combined") }
    }
}

extension InfoCommand {
    func validate() throws(UsageError) {
        try HandedCheck.within(width, 30...1000, "info", "width")
    }
}

// Words only: times, names, bars, chains, files and the automation's points are read (and
// refused in one line) when the command runs, as the command line's are; the rest are
// flags and enumerations the decoder already holds to their cases.
extension AutomationCommand { func validate() throws(UsageError) {} }
extension BusCommand { func validate() throws(UsageError) {} }
extension ChainCommand { func validate() throws(UsageError) {} }
extension ImportCommand { func validate() throws(UsageError) {} }
extension MarkerCommand { func validate() throws(UsageError) {} }
extension LoopCommand { func validate() throws(UsageError) {} }
extension PunchCommand { func validate() throws(UsageError) {} }
extension SessionCommand { func validate() throws(UsageError) {} }
extension TempoCommand { func validate() throws(UsageError) {} }
extension MeterCommand { func validate() throws(UsageError) {} }
extension UndoCommand { func validate() throws(UsageError) {} }
extension RedoCommand { func validate() throws(UsageError) {} }
