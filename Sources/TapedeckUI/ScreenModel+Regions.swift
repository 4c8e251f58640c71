import TapedeckCore

// MARK: - Regions on the timeline: selection, moves, trims, splits, fades, gain, stretch,
// clipboard, layers and take lanes. Every edit is one undoable step the engine follows.

extension ScreenModel {
    /// How far a nudge moves a region.
    static let nudgeSeconds = 0.010
    /// A region-gain key press, in dB.
    static let regionGainStepDecibels = 1.0

    /// The region edits act on: the selected one, else the top one under the playhead on the
    /// selected track. Nil (after saying why) when there is none.
    func targetRegion() -> RegionRef? {
        guard let t = requireNonBus("regions") else { return nil }
        if let r = selectedRegion, session.tracks[t].regions.indices.contains(r) { return RegionRef(track: t, region: r) }
        guard let r = session.tracks[t].topRegionIndex(at: playheadFrame) else {
            say("no region under the playhead on \(session.tracks[t].name) (\(keyName(.regionNext)) and \(keyName(.regionPrevious)) step to one)", error: true)
            return nil
        }
        return RegionRef(track: t, region: r)
    }

    /// Applies a region edit as one undoable step; `change` returns the region to select
    /// afterwards (nil: none). Returns whether it was made; a refusal goes to the message line.
    @discardableResult
    func regionEdit(_ name: String, _ change: (inout Session) throws(RegionEditError) -> Int?) -> Bool {
        var select: Int?
        do {
            try document.edit(name) { (s: inout Session) throws(RegionEditError) in select = try change(&s) }
        } catch {
            say(error.description, error: true)
            return false
        }
        selectedRegion = select
        link.update(session: session)
        return true
    }

    /// `region 2 of Drums (0:01.000-0:03.000)` for messages.
    func describe(_ ref: RegionRef) -> String {
        guard let r = try? session.region(ref) else { return "the region" }
        return "\(session.tracks[ref.track].name) region \(r.id.map { "#\($0) " } ?? "")\(clock(r.timelineStartFrame))-\(clock(r.timelineEndFrame))"
    }

    func selectRegionAtPlayhead() {
        guard let t = requireNonBus("regions") else { return }
        guard let r = session.tracks[t].topRegionIndex(at: playheadFrame) else {
            selectedRegion = nil
            say("no region under the playhead on \(session.tracks[t].name)", error: true)
            return
        }
        select(RegionRef(track: t, region: r))
    }

    private func select(_ ref: RegionRef) {
        selectedRegion = ref.region
        guard let r = try? session.region(ref) else { return }
        var details = "gain \(Fader.text(r.gainDecibels)) dB"
        if r.fadeInFrames > 0 || r.fadeOutFrames > 0 { details += ", fades \(clock(r.fadeInFrames))/\(clock(r.fadeOutFrames))" }
        if r.rate != 1 { details += ", rate \(Region.rateText(r.rate))" }
        if let g = r.takeGroup, let n = r.takeNumber { details += ", take \(g).\(n)" }
        say("selected \(describe(ref)), \(details)")
    }

    /// Selects the next (or previous) region along the selected track and puts the playhead
    /// at its start.
    func stepRegion(forward: Bool) {
        guard let t = requireNonBus("regions") else { return }
        let track = session.tracks[t]
        let order = track.regions.indices.filter { track.isActive(track.regions[$0]) }
            .sorted { (track.regions[$0].timelineStartFrame, $0) < (track.regions[$1].timelineStartFrame, $1) }
        guard !order.isEmpty else { say("\(track.name) has no regions", error: true); return }
        let next: Int?
        if let current = selectedRegion, let at = order.firstIndex(of: current) {
            next = forward ? (at + 1 < order.count ? order[at + 1] : nil) : (at > 0 ? order[at - 1] : nil)
        } else {
            next = forward ? order.first { track.regions[$0].timelineStartFrame > playheadFrame }
                           : order.last { track.regions[$0].timelineStartFrame < playheadFrame }
        }
        guard let r = next else { say("no \(forward ? "later" : "earlier") region on \(track.name)"); return }
        locate(track.regions[r].timelineStartFrame)
        select(RegionRef(track: t, region: r))
    }

    /// Moves the region to the next grid line (snap), or by a timeline column with snap off.
    func moveRegion(steps: Int) {
        guard let ref = targetRegion(), let r = try? session.region(ref) else { return }
        let to = stepFrame(from: r.timelineStartFrame, steps: steps)
        let carry = automationShown.contains(ref.track)
        if regionEdit("move region", { (s: inout Session) throws(RegionEditError) in
            try s.moveRegion(ref, toStartFrame: to, carryingAutomation: carry)
            return ref.region
        }) {
            say("moved \(describe(ref))")
        }
    }

    /// Moves the region by ``nudgeSeconds``.
    func nudgeRegion(forward: Bool) {
        guard let ref = targetRegion(), let r = try? session.region(ref) else { return }
        let step = Int64((ScreenModel.nudgeSeconds * Double(session.sampleRate)).rounded())
        let to = r.timelineStartFrame + (forward ? step : -step)
        let carry = automationShown.contains(ref.track)
        if regionEdit("nudge region", { (s: inout Session) throws(RegionEditError) in
            try s.moveRegion(ref, toStartFrame: to, carryingAutomation: carry)
            return ref.region
        }) {
            say("nudged \(describe(ref))")
        }
    }

    /// Trims the region's start or end to the playhead.
    func trimRegion(start: Bool) {
        guard let ref = targetRegion(), let r = try? session.region(ref) else { return }
        let at = playheadFrame
        let fileFrames = peaks.peaks(forRegionFile: r.file)?.sourceFrameCount
        let done = regionEdit(start ? "trim start" : "trim end") { (s: inout Session) throws(RegionEditError) in
            if start { try s.trimRegionStart(ref, toFrame: at) } else { try s.trimRegionEnd(ref, toFrame: at, sourceFrameCount: fileFrames) }
            return ref.region
        }
        if done { say("trimmed \(describe(ref))") }
    }

    /// Splits the region at the playhead; a take splits its whole stack (comping).
    func splitRegion() {
        guard let ref = targetRegion() else { return }
        let at = playheadFrame
        let isTake = (try? session.region(ref))?.takeGroup != nil
        // A split the user made at the playhead, with no region selected, selects nothing: the
        // next key acts on whatever part the playhead is in, not on a half picked for them.
        let hadSelection = selectedRegion != nil
        if regionEdit(isTake ? "split takes" : "split region", { (s: inout Session) throws(RegionEditError) in try s.splitRegion(ref, atFrame: at) }) {
            if !hadSelection { selectedRegion = nil }
            say(isTake ? "split the takes at \(clock(at)): \(keyName(.take)) now picks the take of each part"
                       : "split at \(clock(at))")
        }
    }

    /// Fade-in from the region's start up to the playhead, or fade-out from the playhead to
    /// its end (at the very edge: no fade).
    func setFade(fadeIn: Bool) {
        guard let ref = targetRegion(), let r = try? session.region(ref) else { return }
        let length = fadeIn ? playheadFrame - r.timelineStartFrame : r.timelineEndFrame - playheadFrame
        let done = regionEdit(fadeIn ? "fade in" : "fade out") { (s: inout Session) throws(RegionEditError) in
            try s.setRegionFades(ref, fadeInFrames: fadeIn ? length : nil, fadeOutFrames: fadeIn ? nil : length)
            return ref.region
        }
        if done { say("\(fadeIn ? "fade-in" : "fade-out") \(clock(length)) on \(describe(ref))") }
    }

    func stepRegionGain(up: Bool) {
        guard let ref = targetRegion(), let r = try? session.region(ref) else { return }
        let step = ScreenModel.regionGainStepDecibels
        let next = Fader.isSilent(r.gainDecibels) ? (up ? Fader.floorDecibels : r.gainDecibels)
            : min(24, r.gainDecibels + (up ? step : -step))
        if regionEdit("region gain", { (s: inout Session) throws(RegionEditError) in try s.setRegionGain(ref, decibels: next); return ref.region }) {
            say("region gain \(Fader.text(next)) dB")
        }
    }

    /// Asks for a length or a factor to stretch the region to (pitch kept).
    func openStretch() {
        guard let ref = targetRegion(), let r = try? session.region(ref) else { return }
        overlay = .text(TextInput(purpose: .stretch(ref), prompt: "Stretch \(describe(ref)) to a length (0:08.5, 4.1.1) or by a factor (2x, 50%):",
                                  text: clock(r.lengthFrames)))
    }

    /// Stretches `ref` as `text` says; nil when done, else why not.
    func applyStretch(_ text: String, to ref: RegionRef) -> String? {
        let t = text.trimmingWhitespace().lowercased()
        var factor: Double?
        if t.hasSuffix("x"), let f = Double(t.dropLast()) { factor = f }
        if t.hasSuffix("%"), let p = Double(t.dropLast()) { factor = p / 100 }
        do {
            if let factor {
                try document.edit("stretch region") { (s: inout Session) throws(RegionEditError) in try s.stretchRegion(ref, byFactor: factor) }
            } else {
                let length = try TimeText.frames(from: text, tempoMap: session.tempoMap)
                try document.edit("stretch region") { (s: inout Session) throws(RegionEditError) in try s.stretchRegion(ref, toLengthFrames: length) }
            }
        } catch let error as TimeText.ParseError {
            return "\(error.description), or a factor like 2x or 50%"
        } catch {
            return "\(error)"
        }
        selectedRegion = ref.region
        link.update(session: session)
        let r = try? session.region(ref)
        say("stretched \(describe(ref)) to rate \(r.map { Region.rateText($0.rate) } ?? "?") (rendered with R3 when played)")
        return nil
    }

    func deleteRegion() {
        guard let ref = targetRegion() else { return }
        let what = describe(ref)
        if regionEdit("delete region", { (s: inout Session) throws(RegionEditError) in try s.deleteRegion(ref); return nil }) {
            say("deleted \(what) (\(keyName(.undo)) brings it back)")
        }
    }

    func duplicateRegion() {
        guard let ref = targetRegion() else { return }
        if regionEdit("duplicate region", { (s: inout Session) throws(RegionEditError) in try s.duplicateRegion(ref) }) {
            say("duplicated: \(describe(RegionRef(track: ref.track, region: selectedRegion ?? 0)))")
        }
    }

    func copyRegion() {
        guard let ref = targetRegion(), let r = try? session.region(ref) else { return }
        clipboard = r
        say("copied \(describe(ref)) (\(keyName(.paste)) pastes it at the playhead)")
    }

    /// Pastes the copied region at the playhead on the selected track, over what is there.
    func pasteRegion() {
        guard let r = clipboard else { say("nothing copied (\(keyName(.copy)) copies the selected region)", error: true); return }
        guard let t = requireNonBus("regions") else { return }
        let at = playheadFrame
        if regionEdit("paste region", { (s: inout Session) throws(RegionEditError) in try s.placeRegion(r, track: t, atFrame: at) }) {
            say("pasted at \(clock(at)) on \(session.tracks[t].name), over what was there")
        }
    }

    func raiseRegion() {
        guard let ref = targetRegion() else { return }
        if regionEdit("raise region", { (s: inout Session) throws(RegionEditError) in try s.raiseRegion(ref) }) {
            say("raised \(describe(RegionRef(track: ref.track, region: selectedRegion ?? 0))) to the top layer")
        }
    }

    /// Shows or folds the selected track's take lanes.
    func toggleLanes() {
        guard let t = requireNonBus("regions or takes") else { return }
        guard !session.tracks[t].takeGroups.isEmpty else {
            say("\(session.tracks[t].name) has no takes (loop recording stacks them)", error: true)
            return
        }
        if expandedTracks.contains(t) { expandedTracks.remove(t) } else { expandedTracks.insert(t) }
        say(expandedTracks.contains(t) ? "take lanes of \(session.tracks[t].name): ▶ marks the take that plays (\(keyName(.take)) picks the next, \(keyName(.split)) comps)"
                                       : "take lanes folded")
    }
}
