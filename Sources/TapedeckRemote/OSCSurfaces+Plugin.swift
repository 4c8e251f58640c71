import TapedeckCore
import TapedeckDSP

// MARK: - The plugin page: the selected strip's playback chain, node by node, as Ardour's
// `/select/plugin…` addresses page through a strip's plugins (`osc.cc`: `sel_plugin`,
// `sel_plug_page`, `sel_plugin_activate`, `select_plugin_parameter`). A change is a chain
// value change, as the chain panel makes one: one undo step, written to the running node.

extension OSCSurfaces {
    /// `/select/plugin`, `/select/plug_page`, `/select/plugin/activate`,
    /// `/strip/plugin/(de)activate`, `/select/plugin/parameter`; the refusal, or nil.
    func pluginCommand(_ command: OSCCommand, _ host: OSCHost, _ sender: OSCPeer, _ view: OSCView, continuing: Bool, now: Double) -> String? {
        let surface = feedback.surface(of: sender)
        if case .pluginActive(.id(let id), let plugin?, let on) = command {
            let address = on ? "/strip/plugin/activate" : "/strip/plugin/deactivate"
            guard let t = feedback.track(id, for: sender, in: view.session) else { return "\(address): no strip \(id) in the surface's bank" }
            return bypass(t, node: plugin, on: on, address, host, sender, view)
        }
        let address: String
        switch command {
        case .selectPlugin: address = "/select/plugin"
        case .pluginPage: address = "/select/plug_page"
        case .pluginActive: address = "/select/plugin/activate"
        default: address = "/select/plugin/parameter"
        }
        guard let t = surface.selected, view.session.tracks.indices.contains(t) else {
            return "\(address): no strip selected (select one with /strip/select SSID 1)"
        }
        let track = view.session.tracks[t]
        let chain = view.playbackChain(t) ?? Chain()
        guard !chain.entries.isEmpty else { return "\(address): \(track.name) has no nodes in its playback chain" }
        let node = min(max(1, surface.plugin), chain.entries.count)
        switch command {
        case .selectPlugin(let delta):
            // As Ardour's `_sel_plugin`: kept within the chain, the page back at the first.
            feedback.change(sender, now: now) { $0.plugin = min(max(1, node + delta), chain.entries.count); $0.pluginPage = 1 }
            return nil
        case .pluginPage(let delta):
            // As Ardour's `sel_plug_page`: by the page size, never past the last parameter
            // (with page size 0 every parameter is on the one page).
            let size = surface.settings.pluginPageSize
            let count = chain.parameters(of: node - 1, registry: .standard).count
            let page = min(max(1, surface.pluginPage), max(1, count))
            let next = delta > 0 ? (page + size > count ? page : page + size) : max(1, page - size)
            feedback.change(sender, now: now) { $0.pluginPage = next }
            return nil
        case .pluginActive(_, _, let on):
            return bypass(t, node: node, on: on, address, host, sender, view)
        case .pluginParameter(let plugin, let parameter, let position):
            var node = node
            if let plugin {
                guard chain.entries.indices.contains(plugin - 1) else {
                    return "\(address): \(track.name)'s chain has \(chain.entries.count) nodes, no node \(plugin)"
                }
                // Ardour selects that plugin, its page back at the first.
                node = plugin
                feedback.change(sender, now: now) { $0.plugin = plugin; $0.pluginPage = 1 }
            }
            let size = surface.settings.pluginPageSize
            if size > 0 && parameter > size { return "\(address): the surface's plugin page has \(size) parameters, no \(parameter)" }
            let page = plugin == nil ? surface.pluginPage : 1
            let parameters = chain.parameters(of: node - 1, registry: .standard)
            let index = page - 1 + parameter - 1
            guard parameters.indices.contains(index) else {
                return "\(address): \(chain.entries[node - 1].node) on \(track.name) has \(parameters.count) parameters, no parameter \(index + 1)"
            }
            let state = parameters[index]
            let current: Double = if case .number(let v) = state.value { v } else { state.definition.defaultValue }
            let value = OSCParameterLaw.value(state.definition, position: position, current: current)
            let change = ChainValueChange(place: .playback(strip: t), node: node - 1,
                                          value: .parameter(state.definition.id, .number(state.definition.clamped(value))))
            return host.perform(.chain(change), from: .osc(sender.description), continuing: continuing).map { "\(address): \($0)" }
        default:
            return nil
        }
    }

    /// Node `node` (1-based) of track `t`'s playback chain in (`on`) or bypassed.
    private func bypass(_ t: Int, node: Int, on: Bool, _ address: String, _ host: OSCHost, _ sender: OSCPeer, _ view: OSCView) -> String? {
        let track = view.session.tracks[t]
        let chain = view.playbackChain(t) ?? Chain()
        guard chain.entries.indices.contains(node - 1) else {
            return "\(address): \(track.name)'s playback chain has \(chain.entries.count) nodes, no node \(node)"
        }
        guard chain.entries[node - 1].bypassed == on else { return nil } // so already
        let change = ChainValueChange(place: .playback(strip: t), node: node - 1, value: .bypass(!on))
        return host.perform(.chain(change), from: .osc(sender.description), continuing: false).map { "\(address): \($0)" }
    }
}
