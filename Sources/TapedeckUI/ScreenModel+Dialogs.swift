import Foundation
import Synchronization
import TapedeckCore
import TapedeckIO
import TapedeckDSP
import TapedeckTransport

/// Keys inside dialogs and the chain panel. These keys are fixed (not in the keys file):
/// dialogs use y/n, Enter, Esc and the arrows the way every dialog does.
extension ScreenModel {
    func handleOverlay(_ key: Key) {
        guard let current = overlay else { return }
        switch current {
        case .help(let scroll):
            // Arrows and page keys scroll a list taller than the screen; any other key closes it.
            switch key {
            case .named(.down): overlay = .help(scroll: min(helpMaxScroll, scroll + 1))
            case .named(.up): overlay = .help(scroll: max(0, scroll - 1))
            case .named(.pgdn), .named(.space): overlay = .help(scroll: min(helpMaxScroll, scroll + max(1, helpPageRows - 1)))
            case .named(.pgup): overlay = .help(scroll: max(0, scroll - max(1, helpPageRows - 1)))
            default: overlay = nil
            }
        case .confirm(let question):
            answer(question, key: key)
        case .text(var input):
            switch key {
            case .named(.esc): overlay = nil
            case .named(.enter): submit(input)
            case .named(.backspace):
                if !input.text.isEmpty { input.text.removeLast() }
                input.problem = nil
                input.offered = false
                overlay = .text(input)
            case .char(let c):
                // An offered value goes at the first character typed ("Bus 1", then "Verb").
                if input.offered { input.text = "" }
                input.text.append(c); input.problem = nil; input.offered = false; overlay = .text(input)
            case .named(.space):
                if input.offered { input.text = "" }
                input.text.append(" "); input.offered = false; overlay = .text(input)
            // As in a shell: ctrl-u clears the line, ctrl-w the last word.
            case .ctrl("u"): input.text = ""; input.problem = nil; input.offered = false; overlay = .text(input)
            case .ctrl("w"):
                while input.text.last == " " { input.text.removeLast() }
                while let last = input.text.last, last != " " { _ = last; input.text.removeLast() }
                input.problem = nil
                input.offered = false
                overlay = .text(input)
            default: break
            }
        case .devices(let list, let selected):
            switch key {
            case .named(.up): overlay = .devices(list, selected: max(0, selected - 1))
            case .named(.down): overlay = .devices(list, selected: max(0, min(list.count - 1, selected + 1)))
            case .named(.enter):
                overlay = nil
                guard list.indices.contains(selected) else { return }
                if let problem = link.selectDevice(list[selected]) { say(problem, error: true) } else {
                    // What the new device is (its outputs, above all) is known from now on, not
                    // from the next tick: a key pressed at once sees it.
                    snapshot = link.snapshot()
                    followMIDI()
                    say("device: \(list[selected])")
                }
            case .named(.esc), .char("q"): overlay = nil
            default: break
            }
        case .importBrowser(var browser):
            // Typing narrows the list; Esc closes.
            switch key {
            case .named(.up): browser.selected = max(0, browser.selected - 1)
            case .named(.down): browser.selected = max(0, min(browser.entries.count - 1, browser.selected + 1))
            case .named(.enter): openEntry(browser); return
            case .named(.esc): overlay = nil; return
            case .named(.backspace): if !browser.filter.isEmpty { browser.filter.removeLast(); browser.selected = 0 }
            case .char(let c): browser.filter.append(c); browser.selected = 0
            case .named(.space): browser.filter.append(" "); browser.selected = 0
            default: return
            }
            overlay = .importBrowser(browser)
        case .choice(var choice):
            switch key {
            case .named(.up): choice.selected = max(0, choice.selected - 1)
            case .named(.down): choice.selected = max(0, min(choice.items.count - 1, choice.selected + 1))
            case .named(.enter): choose(choice, item: choice.selected); return
            case .named(.esc): overlay = nil; return
            case .char(let c):
                // A bus's width answers to its first letter (s, m), as a y/n question does.
                if case .busWidth = choice.purpose, let i = choice.items.firstIndex(where: { $0.first == Character(c.lowercased()) }) {
                    choose(choice, item: i)
                }
                return
            default: return
            }
            overlay = .choice(choice)
        case .export(let job, _):
            if case .running = job.status {
                guard key == .named(.esc) else { return }
                say("the export continues in the background")
            }
            overlay = nil
        }
    }

    private func answer(_ question: Confirmation, key: Key) {
        let yes = key == .char("y") || key == .char("Y")
        let no = key == .char("n") || key == .char("N") || key == .named(.esc)
        switch question {
        case .quitUnsaved:
            if yes { overlay = nil; quit() }
            else if key == .char("s") { overlay = nil; if save() { quit() } }
            else if no { overlay = nil; say("not quitting") }
        case .deleteTrack(let index):
            if yes { overlay = nil; deleteTrack(index) } else if no { overlay = nil }
        case .deleteBus(let index):
            if yes { overlay = nil; deleteBus(index) } else if no { overlay = nil }
        case .removeNode(let track, let node):
            if yes {
                overlay = nil
                guard var chain = try? parsedChain(track), chain.entries.indices.contains(node) else { return }
                chain.remove(at: node)
                applyChain(chain, track: track, kind: .removeNode)
                chainNode = max(0, min(chainNode, chain.entries.count - 1))
            } else if no { overlay = nil }
        }
    }

    private func submit(_ input: TextInput) {
        var input = input
        func refuse(_ problem: String) {
            input.problem = problem
            overlay = .text(input)
        }
        switch input.purpose {
        case .chain(let track):
            // The one chain parser: what is stored is canonical and what the engine reads.
            var chain: Chain
            do { chain = try Chain(parsing: input.text) } catch { refuse(error.message); return }
            // A sample named outside the session is copied into its samples/ folder.
            if let folder, folder.exists {
                do { chain = try ChainFiles.adopt(chain, into: folder, workingFolder: FileManager.default.currentDirectoryPath) } catch {
                    refuse(error.description)
                    return
                }
            }
            overlay = nil
            // Said, so the line does not keep the message of whatever came before.
            if let place = applyChain(chain, track: track) {
                say("\(place): \(chain.entries.isEmpty ? "none (the sound passes as it is)" : chain.text)")
            }
        case .renameTrack(let t):
            if let problem = trackNameProblem(input.text, index: t) { refuse(problem); return }
            overlay = nil
            let name = input.text.trimmingWhitespace()
            let what = session.tracks[t].isBus ? "bus" : "track"
            // Sends and outputs name buses: a renamed bus takes them along.
            guard routingEdit(.rename(strip: t, to: name)) else { return }
            say("\(what) \(t + 1) is now \(name)")
        case .renameMarker(let i):
            let name = input.text
            do { try owner.change { try $0.apply(MarkerChange.rename(index: i, to: name)) } } catch {
                refuse("\(error)")
                return
            }
            overlay = nil
            say("marker renamed \(session.markers[i].name)")
        case .input(let t):
            let channels: [Int]
            do { channels = try InputChannels.parse(input.text) } catch { refuse(error.reason); return }
            if let why = trackChange(.input(strip: t, channels: channels)) { refuse(why); return }
            overlay = nil
            say("\(session.tracks[t].name) records from \(InputChannels.text(channels))")
        case .stretch(let ref):
            if let problem = applyStretch(input.text, to: ref) { refuse(problem); return }
            overlay = nil
        case .quantize(let ref):
            if let problem = applyQuantize(input.text, to: ref) { refuse(problem); return }
            overlay = nil
        case .tempo(let bar):
            if let problem = applyTempo(input.text, bar: bar) { refuse(problem); return }
            overlay = nil
        case .newBus:
            if let problem = trackNameProblem(input.text, index: -1, forBus: true) { refuse(problem); return }
            openBusWidth(name: input.text.trimmingWhitespace())
        case .sendLevel(let strip, let send):
            if let problem = applySendLevel(input.text, strip: strip, send: send) { refuse(problem); return }
            overlay = nil
        case .output(let strip):
            // Closed first: a refused routing says why on the message line.
            overlay = nil
            if let problem = applyTypedOutput(input.text, strip: strip) { refuse(problem); return }
        case .automationLane(let t):
            if let problem = addAutomationLane(input.text, track: t) { refuse(problem); return }
            overlay = nil
        case .saveAs:
            let target = SessionFolder(path: input.text.trimmingWhitespace())
            if target.exists {
                input.problem = "\(target.path): a session already exists there"
                overlay = .text(input)
                return
            }
            owner.saveAs(target)
            peaks = PeakCache(folder: target)
            midiNotes = MIDINoteCache(folder: target)
            overlay = nil
            save()
        case .exportPath:
            guard let folder, let hook = hooks.export else { overlay = nil; return }
            // The file, then any of `export`'s options, read by export's own parser.
            guard let words = CommandWords.split(input.text), let path = words.first else {
                refuse("type the file to write (exports/mix.wav), then any of export's options; a quote is left open")
                return
            }
            if let problem = hooks.exportProblem?(words, folder.path) {
                refuse(problem.hasPrefix("export: ") ? String(problem.dropFirst(8)) : problem)
                return
            }
            let absolute = path.hasPrefix("/") ? path : folder.path + "/" + path
            lastExport = input.text
            overlay = .export(ExportJob(session: session, folderPath: folder.path, words: words, hook: hook), outputPath: absolute)
        }
    }

    // MARK: - Import and export

    func openImport() {
        guard folder != nil else {
            say("save the session first (\(keyName(.save))): imports go into its folder", error: true)
            return
        }
        overlay = .importBrowser(browse(importFolder))
    }

    /// File name endings of the audio libsndfile reads, for the import browser.
    static let audioExtensions: Set<String> = ["wav", "wave", "bwf", "rf64", "w64", "aif", "aiff", "aifc", "flac",
                                                "ogg", "oga", "opus", "mp3", "caf", "au", "snd"]

    /// The entries of `path`: `../`, then folders, then audio files, each sorted; hidden ones
    /// and other files left out.
    func browse(_ path: String) -> Browser {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        var folders: [String] = [], files: [String] = []
        for n in names.sorted() where !n.hasPrefix(".") {
            var isDir: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: path + "/" + n, isDirectory: &isDir)
            if isDir.boolValue {
                folders.append(n + "/")
            } else if let dot = n.lastIndex(of: "."), ScreenModel.audioExtensions.contains(n[n.index(after: dot)...].lowercased()) {
                files.append(n)
            }
        }
        return Browser(folder: path, entries: ["../"] + folders + files)
    }

    private func openEntry(_ browser: Browser) {
        guard browser.entries.indices.contains(browser.selected) else { return }
        let entry = browser.entries[browser.selected]
        if entry.hasSuffix("/") {
            let base = URL(fileURLWithPath: browser.folder)
            let next = entry == "../" ? base.deletingLastPathComponent() : base.appendingPathComponent(String(entry.dropLast()))
            importFolder = next.standardizedFileURL.path
            overlay = .importBrowser(browse(importFolder))
            return
        }
        overlay = nil
        importFile(browser.folder + "/" + entry)
    }

    /// Imports `path` into the session's audio folder onto a new track named after the file,
    /// at the playhead (as `tapedeck import` makes a track per file); a file wider than stereo
    /// becomes a mono track per channel (``ImportedTracks/tracks(named:at:)``), one undo step.
    /// Refused, with nothing written, when the new tracks would pass the session's limit. The
    /// copying runs on a worker (ScreenModel+Jobs: a progress line, the cancel key); the
    /// tracks are placed when it is done, at the playhead as it was when asked.
    public func importFile(_ path: String) {
        guard let folder else { say("save the session first", error: true); return }
        let channels: Int
        do {
            // Counted before anything is copied: a 5.1 file is six new tracks.
            channels = try AudioFileReader(path: path, blockFrames: 16).channelCount
        } catch {
            say("cannot import: \(error.description)", error: true)
            return
        }
        let newTracks = channels > 2 ? channels : 1
        if session.tracks.count + newTracks > SessionLimits.maximumTracks {
            say("cannot import: \(newTracks) new track\(newTracks == 1 ? "" : "s") would make \(session.tracks.count + newTracks); a session holds at most \(SessionLimits.maximumTracks); nothing imported", error: true)
            return
        }
        let at = playheadFrame
        let rate = session.sampleRate
        let copied = Mutex<ImportedTracks?>(nil)
        startJob("importing \(URL(fileURLWithPath: path).lastPathComponent.terminalSafe)", work: { progress, cancelled in
            let imported = try AudioImporter.importTracks(source: path, destinationFolder: folder.audioFolder,
                                                          peaksFolder: folder.peaksFolder, sessionSampleRate: rate,
                                                          progress: progress, cancelled: cancelled)
            copied.withLock { $0 = imported }
        }) { [unowned self] status in
            let imported = copied.withLock { $0 }
            switch status {
            case .done, .running:
                guard let imported else { return }
                guard session.tracks.count + imported.files.count <= SessionLimits.maximumTracks else {
                    // Tracks were added while it copied.
                    imported.removeFiles(from: folder)
                    say("cannot import: the session would pass \(SessionLimits.maximumTracks) tracks; nothing imported", error: true)
                    return
                }
                place(imported, from: path, at: at)
            case .failed(let why):
                say("cannot import: \(why)", error: true)
            case .cancelled:
                imported?.removeFiles(from: folder)
                say("import cancelled; nothing imported")
            }
        }
    }

    /// Puts what an import copied onto new tracks at `at`, as one undo step.
    private func place(_ imported: ImportedTracks, from path: String, at: Int64) {
        let name = uniqueTrackName(for: path)
        let tracks = imported.tracks(named: name, at: at)
        let first = session.tracks.count
        edit("import \(imported.files.first?.fileName ?? name)") { $0.tracks.append(contentsOf: tracks) }
        selectTrack(first)
        let resampled = imported.wasResampled ? " (resampled)" : ""
        if imported.isSplit {
            say("imported \(URL(fileURLWithPath: path).lastPathComponent): \(imported.channelText), at \(clock(at))\(resampled)")
        } else {
            say("imported \(imported.files[0].fileName) onto a new track \(name) at \(clock(at))\(resampled)")
        }
    }

    /// The file's name without folder and extension, numbered when a track has it already.
    private func uniqueTrackName(for path: String) -> String {
        let base = URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
        let names = session.tracks.map(\.name)
        guard NameMatch.index(of: base, in: names) != nil else { return base }
        var n = 2
        while NameMatch.index(of: "\(base) \(n)", in: names) != nil { n += 1 }
        return "\(base) \(n)"
    }

    func openExport() {
        guard folder != nil else { say("save the session first (\(keyName(.save)))", error: true); return }
        guard hooks.export != nil else { say("export is not available here", error: true); return }
        guard session.endFrame > 0 else { say("nothing to export: the session has no audio", error: true); return }
        overlay = .text(TextInput(purpose: .exportPath,
                                  prompt: "Export to (.wav .flac .mp3 .opus .mid), with export's options:",
                                  text: lastExport,
                                  notes: ["paths from the session folder (\(folder?.path ?? "")) unless they start with /",
                                          "--tail SECONDS|auto  --normalize -16LUFS  --range 1:00-2:30  --bits 16",
                                          "--stems DIR  --chapters FILE  --fx CHAIN  --bitrate KBPS  --midi"]))
    }
}
