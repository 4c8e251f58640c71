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

    /// Applies a region edit as one undoable step (the change `tapedeck region` makes too) and
    /// selects where the region is afterwards. Returns whether it was made; a refusal goes to
    /// the message line.
    @discardableResult
    func regionEdit(_ change: RegionChange, _ ref: RegionRef) -> Bool {
        do {
            selectedRegion = try owner.change { try $0.apply(change, to: ref) }
        } catch {
            say("\(error)", error: true)
            return false
        }
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
        if regionEdit(.move(toFrame: to, carryingAutomation: carry), ref) {
            say("moved \(describe(ref))")
        }
    }

    /// Moves the region by ``nudgeSeconds``.
    func nudgeRegion(forward: Bool) {
        guard let ref = targetRegion(), let r = try? session.region(ref) else { return }
        let step = Int64((ScreenModel.nudgeSeconds * Double(session.sampleRate)).rounded())
        let to = r.timelineStartFrame + (forward ? step : -step)
        let carry = automationShown.contains(ref.track)
        if regionEdit(.move(toFrame: to, carryingAutomation: carry), ref) {
            say("nudged \(describe(ref))")
        }
    }

    /// Trims the region's start or end to the playhead.
    func trimRegion(start: Bool) {
        guard let ref = targetRegion(), let r = try? session.region(ref) else { return }
        let at = playheadFrame
        let fileFrames = peaks.peaks(forRegionFile: r.file)?.sourceFrameCount
        let change: RegionChange = start ? .trim(startFrame: at, endFrame: nil, sourceFrameCount: nil)
                                         : .trim(startFrame: nil, endFrame: at, sourceFrameCount: fileFrames)
        if regionEdit(change, ref) { say("trimmed \(describe(ref))") }
    }

    /// Splits the region at the playhead; a take splits its whole stack (comping).
    func splitRegion() {
        guard let ref = targetRegion() else { return }
        let at = playheadFrame
        let isTake = (try? session.region(ref))?.takeGroup != nil
        // A split the user made at the playhead, with no region selected, selects nothing: the
        // next key acts on whatever part the playhead is in, not on a half picked for them.
        let hadSelection = selectedRegion != nil
        if regionEdit(.split(atFrame: at), ref) {
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
        if regionEdit(.fades(inFrames: fadeIn ? length : nil, outFrames: fadeIn ? nil : length), ref) { say("\(fadeIn ? "fade-in" : "fade-out") \(clock(length)) on \(describe(ref))") }
    }

    func stepRegionGain(up: Bool) {
        guard let ref = targetRegion(), let r = try? session.region(ref) else { return }
        let step = ScreenModel.regionGainStepDecibels
        let next = Fader.isSilent(r.gainDecibels) ? (up ? Fader.floorDecibels : r.gainDecibels)
            : min(24, r.gainDecibels + (up ? step : -step))
        if regionEdit(.gain(decibels: next), ref) {
            say("region gain \(Fader.text(next)) dB")
        }
    }

    /// Asks for a length or a factor to stretch the region to (pitch kept).
    func openStretch() {
        guard let ref = targetRegion(), let r = try? session.region(ref) else { return }
        overlay = .text(TextInput(purpose: .stretch(ref), prompt: "Stretch \(describe(ref)) to a length (0:08.5, 4.1.1) or by a factor (2x, 50%):",
                                  text: clock(r.lengthFrames), offered: true))
    }

    /// Stretches `ref` as `text` says; nil when done, else why not.
    func applyStretch(_ text: String, to ref: RegionRef) -> String? {
        let t = text.trimmingWhitespace().lowercased()
        var factor: Double?
        if t.hasSuffix("x"), let f = Double(t.dropLast()) { factor = f }
        if t.hasSuffix("%"), let p = Double(t.dropLast()) { factor = p / 100 }
        do {
            let change: RegionChange = try factor.map { .stretch(byFactor: $0) }
                ?? .stretchTo(lengthFrames: TimeText.frames(from: text, tempoMap: session.tempoMap))
            try owner.change { try $0.apply(change, to: ref) }
        } catch let error as TimeText.ParseError {
            return "\(error.description), or a factor like 2x or 50%"
        } catch {
            return "\(error)"
        }
        selectedRegion = ref.region
        let r = try? session.region(ref)
        say("stretched \(describe(ref)) to rate \(r.map { Region.rateText($0.rate) } ?? "?") (rendered with R3 when played)")
        return nil
    }

    func deleteRegion() {
        guard let ref = targetRegion() else { return }
        let what = describe(ref)
        if regionEdit(.delete, ref) {
            say("deleted \(what) (\(keyName(.undo)) brings it back)")
        }
    }

    func duplicateRegion() {
        guard let ref = targetRegion() else { return }
        if regionEdit(.duplicate, ref) {
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
        // Not a change to a region that is there (a RegionChange) but a copy laid on a track.
        do {
            selectedRegion = try owner.change { (doc: inout SessionDocument) throws(RegionEditError) in
                try doc.editRegions("paste region") { (s: inout Session) throws(RegionEditError) in try s.placeRegion(r, track: t, atFrame: at) }
            }
        } catch {
            say(error.description, error: true)
            return
        }
        say("pasted at \(clock(at)) on \(session.tracks[t].name), over what was there")
    }

    func raiseRegion() {
        guard let ref = targetRegion() else { return }
        if regionEdit(.raise, ref) {
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
