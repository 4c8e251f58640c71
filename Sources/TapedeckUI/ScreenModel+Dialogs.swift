import Foundation
import TapedeckCore
import TapedeckIO

/// Keys inside dialogs and the chain panel. These keys are fixed (not in the keys file):
/// dialogs use y/n, Enter, Esc and the arrows the way every dialog does.
extension ScreenModel {
    func handleOverlay(_ key: Key) {
        guard let current = overlay else { return }
        switch current {
        case .help:
            overlay = nil
        case .confirm(let question):
            answer(question, key: key)
        case .text(var input):
            switch key {
            case .named(.esc): overlay = nil
            case .named(.enter): submit(input)
            case .named(.backspace):
                if !input.text.isEmpty { input.text.removeLast() }
                input.problem = nil
                overlay = .text(input)
            case .char(let c): input.text.append(c); input.problem = nil; overlay = .text(input)
            case .named(.space): input.text.append(" "); overlay = .text(input)
            default: break
            }
        case .devices(let list, let selected):
            switch key {
            case .named(.up): overlay = .devices(list, selected: max(0, selected - 1))
            case .named(.down): overlay = .devices(list, selected: max(0, min(list.count - 1, selected + 1)))
            case .named(.enter):
                overlay = nil
                guard list.indices.contains(selected) else { return }
                if let problem = link.selectDevice(list[selected]) { say(problem, error: true) } else { say("device: \(list[selected])") }
            case .named(.esc), .char("q"): overlay = nil
            default: break
            }
        case .importBrowser(var browser):
            switch key {
            case .named(.up): browser.selected = max(0, browser.selected - 1); overlay = .importBrowser(browser)
            case .named(.down): browser.selected = max(0, min(browser.entries.count - 1, browser.selected + 1)); overlay = .importBrowser(browser)
            case .named(.enter): openEntry(browser)
            case .named(.esc), .char("q"): overlay = nil
            default: break
            }
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
        case .removeNode(let track, let node):
            if yes {
                overlay = nil
                var chain = ChainText(chainText(track))
                guard chain.nodes.indices.contains(node) else { return }
                chain.nodes.remove(at: node)
                applyChain(chain.text, track: track, name: "remove node")
                chainNode = max(0, min(chainNode, chain.nodes.count - 1))
            } else if no { overlay = nil }
        }
    }

    private func submit(_ input: TextInput) {
        var input = input
        switch input.purpose {
        case .chain(let track):
            let chain = ChainText(input.text)
            if let problem = hooks.validateChain(chain.text) {
                input.problem = problem
                overlay = .text(input)
                return
            }
            overlay = nil
            applyChain(chain.text, track: track, name: "edit chain")
        case .saveAs:
            let target = SessionFolder(path: input.text.trimmingWhitespace())
            if target.exists {
                input.problem = "\(target.path): a session already exists there"
                overlay = .text(input)
                return
            }
            folder = target
            peaks = PeakCache(folder: target)
            overlay = nil
            save()
        case .exportPath:
            guard let folder, let hook = hooks.export else { overlay = nil; return }
            let path = input.text.trimmingWhitespace()
            guard path.hasSuffix(".wav") || path.hasSuffix(".flac") else {
                input.problem = "the file name must end in .wav or .flac"
                overlay = .text(input)
                return
            }
            let absolute = path.hasPrefix("/") ? path : folder.path + "/" + path
            overlay = .export(ExportJob(session: session, folderPath: folder.path, outputPath: absolute, hook: hook), outputPath: absolute)
        }
    }

    // MARK: - Chain panel

    /// The chain text the panel edits for `track`.
    func chainText(_ track: Int) -> String {
        guard session.tracks.indices.contains(track) else { return "" }
        return chainIsInput ? session.tracks[track].inputChain : session.tracks[track].playbackChain
    }

    private func applyChain(_ text: String, track: Int, name: String) {
        guard session.tracks.indices.contains(track) else { return }
        let input = chainIsInput
        edit("\(name) on \(session.tracks[track].name)") {
            if input { $0.tracks[track].inputChain = text } else { $0.tracks[track].playbackChain = text }
        }
    }

    func openChainText() {
        guard session.tracks.indices.contains(selectedTrack) else {
            say("no track selected (\(keyName(.newTrack)) makes one)", error: true)
            return
        }
        let which = chainIsInput ? "input" : "playback"
        overlay = .text(TextInput(purpose: .chain(track: selectedTrack),
                                  prompt: "\(which) chain of \(session.tracks[selectedTrack].name), e.g. hpf:cutoff=80,comp:ratio=4",
                                  text: chainText(selectedTrack)))
    }

    /// Keys the chain panel takes before the key map. Returns whether the key was used.
    func handleChainKey(_ key: Key) -> Bool {
        let t = selectedTrack
        guard session.tracks.indices.contains(t) else { return false }
        var chain = ChainText(chainText(t))
        let count = chain.nodes.count
        switch key {
        case .named(.up): chainNode = max(0, chainNode - 1); chainParameter = 0
        case .named(.down): chainNode = min(max(0, count - 1), chainNode + 1); chainParameter = 0
        case .char(","), .char("."):
            guard chain.nodes.indices.contains(chainNode) else { return true }
            let n = chain.nodes[chainNode].parameters.count
            if n > 0 { chainParameter = (chainParameter + (key == .char(".") ? 1 : n - 1)) % n }
        case .named(.left), .named(.right), .named(.shiftLeft), .named(.shiftRight), .named(.pgup), .named(.pgdn):
            let up = key == .named(.right) || key == .named(.shiftRight) || key == .named(.pgup)
            let coarse = key != .named(.left) && key != .named(.right)
            guard chain.nudge(node: chainNode, parameter: chainParameter, steps: up ? 1 : -1, coarse: coarse) else {
                say("nothing to change here: choose a node with a numeric parameter (, and . pick the parameter)", error: true)
                return true
            }
            if let problem = hooks.validateChain(chain.text) { say(problem, error: true); return true }
            applyChain(chain.text, track: t, name: "change parameter")
        case .char("b"):
            guard chain.nodes.indices.contains(chainNode) else { return true }
            chain.nodes[chainNode].bypassed.toggle()
            // The session must only hold chains the engine can read; the host decides whether
            // its chain syntax knows the `!name` bypass mark.
            if let problem = hooks.validateChain(chain.text) { say("cannot bypass: \(problem)", error: true); return true }
            applyChain(chain.text, track: t, name: chain.nodes[chainNode].bypassed ? "bypass" : "un-bypass")
        case .char("K"), .char("J"):
            let offset = key == .char("K") ? -1 : 1
            if chain.move(chainNode, by: offset) {
                chainNode += offset
                applyChain(chain.text, track: t, name: "reorder chain")
            }
        case .char("x"), .named(.delete):
            if chain.nodes.indices.contains(chainNode) { overlay = .confirm(.removeNode(track: t, node: chainNode)) }
        case .named(.enter): openChainText()
        case .char("/"):
            chainIsInput.toggle()
            chainNode = 0
            chainParameter = 0
        default: return false
        }
        return true
    }

    // MARK: - Import and export

    func openImport() {
        guard folder != nil else {
            say("save the session first (\(keyName(.save))): imports go into its folder", error: true)
            return
        }
        overlay = .importBrowser(browse(importFolder))
    }

    /// The entries of `path`: `../`, then folders, then files, each sorted; hidden ones left out.
    func browse(_ path: String) -> Browser {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        var folders: [String] = [], files: [String] = []
        for n in names.sorted() where !n.hasPrefix(".") {
            var isDir: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: path + "/" + n, isDirectory: &isDir)
            if isDir.boolValue { folders.append(n + "/") } else { files.append(n) }
        }
        return Browser(folder: path, entries: ["../"] + folders + files, selected: 0)
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

    /// Imports `path` into the session's audio folder and places it at the playhead on the
    /// selected track (a new track when there is none).
    public func importFile(_ path: String) {
        guard let folder else { say("save the session first", error: true); return }
        do {
            let imported = try AudioImporter.importFile(source: path, destinationFolder: folder.audioFolder,
                                                        peaksFolder: folder.peaksFolder, sessionSampleRate: session.sampleRate)
            let region = Region(file: "audio/" + imported.fileName, timelineStartFrame: playheadFrame, lengthFrames: imported.frameCount)
            if !session.tracks.indices.contains(selectedTrack) {
                let channels = Array(1...max(1, imported.channelCount))
                edit("new track") { $0.tracks.append(Track(name: "Track 1", inputChannels: channels)) }
                selectTrack(0)
            }
            let t = selectedTrack
            edit("import \(imported.fileName)") { $0.tracks[t].regions.append(region) }
            say("imported \(imported.fileName) onto \(session.tracks[t].name)\(imported.wasResampled ? " (resampled)" : "")")
        } catch {
            say("cannot import: \(error.description)", error: true)
        }
    }

    func openExport() {
        guard folder != nil else { say("save the session first (\(keyName(.save)))", error: true); return }
        guard hooks.export != nil else { say("export is not available here", error: true); return }
        guard session.endFrame > 0 else { say("nothing to export: the session has no audio", error: true); return }
        overlay = .text(TextInput(purpose: .exportPath, prompt: "Export the mix to (.wav or .flac, relative to the session):",
                                  text: "exports/mix.wav"))
    }
}
