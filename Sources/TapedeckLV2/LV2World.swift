import CLilv
import Foundation
import TapedeckCore

/// lilv's world: every installed plugin's description (from `LV2_PATH`, or lilv's default
/// `~/.lv2:/usr/local/lib/lv2:/usr/lib/lv2`), loaded on first use.
///
/// lilv is not thread-safe, so every use of the world — lookups, instantiation, presets,
/// state — goes through ``withWorld(_:)``. Running instances do not need it.
final class LV2World: @unchecked Sendable {
    /// The process's world, created the first time a plugin is looked up.
    static let shared = LV2World()

    private let lock = NSRecursiveLock()
    /// The lilv world; use only inside ``withWorld(_:)``.
    let world: OpaquePointer
    private var nodeCache: [String: OpaquePointer] = [:]
    private var infoCache: [String: LV2PluginInfo] = [:]
    private var pinnedLibraries: Set<String> = []
    /// Every installed plugin's URI, in lilv's order.
    let pluginURIs: [String]
    /// The same, for lookups.
    let installedURIs: Set<String>
    /// Plugin URIs by lowercased short name.
    let urisByShortName: [String: [String]]
    /// What lilv complained about while reading the installed bundles (a broken bundle in
    /// `~/.lv2`), as one line for the commands that list plugins, or nil. lilv 0.24 has no
    /// log hook of its own and prints to stderr, so the load runs with stderr in a file.
    let loadProblem: String?

    private init() {
        let made: OpaquePointer = lilv_world_new()
        world = made
        let said = LV2World.withStderrCaptured { lilv_world_load_all(made) }
        let firstLine = said.split(separator: "\n").first.map(String.init)
        loadProblem = firstLine.map { "LV2: some installed bundles could not be read (lilv said: \($0.terminalSafe))" }
        var uris: [String] = []
        let plugins = lilv_world_get_all_plugins(world)
        var i = lilv_plugins_begin(plugins)
        while !lilv_plugins_is_end(plugins, i) {
            if let plugin = lilv_plugins_get(plugins, i) {
                uris.append(String(cString: lilv_node_as_uri(lilv_plugin_get_uri(plugin))))
            }
            i = lilv_plugins_next(plugins, i)
        }
        pluginURIs = uris
        installedURIs = Set(uris)
        urisByShortName = Dictionary(grouping: uris, by: { LV2PluginInfo.shortName(of: $0) })
    }

    /// Runs `body` with file descriptor 2 sent to a temporary file; returns what was
    /// written there (at most 64 kB). Off the audio thread, at load only.
    static func withStderrCaptured(_ body: () -> Void) -> String {
        var template = Array("/tmp/tapedeck-lilv-XXXXXX".utf8CString)
        let file = mkstemp(&template)
        guard file >= 0 else { body(); return "" }
        unlink(String(cString: template))
        fflush(nil)
        let saved = dup(2)
        dup2(file, 2)
        body()
        fflush(nil)
        dup2(saved, 2)
        close(saved)
        var bytes = [UInt8](repeating: 0, count: 65536)
        let n = pread(file, &bytes, bytes.count, 0)
        close(file)
        return n > 0 ? String(decoding: bytes[0..<n], as: UTF8.self) : ""
    }

    /// Runs `body` with the world locked. Off the audio thread.
    func withWorld<T>(_ body: () throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }

    /// An interned node for one of the specification's URIs (never freed). Inside
    /// ``withWorld(_:)``.
    func uri(_ text: String) -> OpaquePointer {
        if let node = nodeCache[text] { return node }
        let node = lilv_new_uri(world, text)!
        nodeCache[text] = node
        return node
    }

    /// The plugin with `uri`, or nil (never asking lilv about a string that is no installed
    /// plugin's URI). Inside ``withWorld(_:)``.
    func plugin(_ uri: String) -> OpaquePointer? {
        guard installedURIs.contains(uri) else { return nil }
        return lilv_plugins_get_by_uri(lilv_world_get_all_plugins(world), self.uri(uri))
    }

    /// What Tapedeck knows of plugin `uri` (ports, parameters, kind), read once. Any thread
    /// but the audio thread.
    func info(_ uri: String) -> LV2PluginInfo? {
        withWorld {
            if let known = infoCache[uri] { return known }
            guard let plugin = plugin(uri) else { return nil }
            let info = LV2PluginInfo(plugin: plugin, world: self)
            infoCache[uri] = info
            return info
        }
    }

    /// Presets of plugin `uri`: URI and label, sorted by label. Any thread but the audio thread.
    func presets(of uri: String) -> [(uri: String, label: String)] {
        withWorld {
            guard let plugin = plugin(uri) else { return [] }
            var found: [(String, String)] = []
            let related = lilv_plugin_get_related(plugin, self.uri(LV2URI.presetClass))
            defer { lilv_nodes_free(related) }
            var i = lilv_nodes_begin(related)
            while !lilv_nodes_is_end(related, i) {
                if let preset = lilv_nodes_get(related, i) {
                    lilv_world_load_resource(world, preset)
                    let presetURI = String(cString: lilv_node_as_uri(preset))
                    var label = presetURI
                    if let labels = lilv_world_find_nodes(world, preset, self.uri(LV2URI.rdfsLabel), nil) {
                        if let first = lilv_nodes_get_first(labels) { label = String(cString: lilv_node_as_string(first)) }
                        lilv_nodes_free(labels)
                    }
                    found.append((presetURI, label))
                }
                i = lilv_nodes_next(related, i)
            }
            return found.sorted { $0.1.lowercased() < $1.1.lowercased() }.map { (uri: $0.0, label: $0.1) }
        }
    }

    /// Keeps `plugin`'s library loaded for the rest of the process (dlopen with
    /// RTLD_NODELETE), so lilv freeing the last instance never unmaps it. Why: a library with
    /// a language runtime inside (a plugin written in Swift — Tapedeck's own — or some C++)
    /// registers metadata the process keeps using; unmapping it crashes the host later.
    /// Returns why the library cannot be loaded, or nil when it can. Inside ``withWorld(_:)``.
    func pinLibrary(of plugin: OpaquePointer) -> String? {
        guard let library = lilv_plugin_get_library_uri(plugin),
              let path = lilv_file_uri_parse(lilv_node_as_uri(library), nil) else { return "it names no library" }
        defer { lilv_free(path) }
        let key = String(cString: path)
        guard !pinnedLibraries.contains(key) else { return nil }
        guard dlopen(path, RTLD_NOW | RTLD_NODELETE) != nil else {
            return dlerror().map { String(cString: $0) } ?? "cannot load \(key)"
        }
        pinnedLibraries.insert(key)
        return nil
    }

    /// Reads a node lilv handed over (and frees it): its text, or nil.
    static func take(_ node: OpaquePointer?) -> String? {
        guard let node else { return nil }
        defer { lilv_node_free(node) }
        return String(cString: lilv_node_as_string(node))
    }
}
