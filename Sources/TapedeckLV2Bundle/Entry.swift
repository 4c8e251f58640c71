import CLV2
import TapedeckLV2Export
#if canImport(Glibc)
import Glibc
#endif

/// The LV2 entry point of tapedeck.lv2: hosts call `lv2_descriptor(0)`, `(1)`, … until it
/// returns NULL, one descriptor per ``PublishedPlugin``.

/// The descriptors, built once (URIs as C strings that live as long as the library). Written
/// by the lazy initialiser only and read-only after it, hence safe to share.
nonisolated(unsafe) private let descriptors: UnsafeMutablePointer<LV2_Descriptor> = {
    let all = PublishedPlugin.all
    let table = UnsafeMutablePointer<LV2_Descriptor>.allocate(capacity: all.count)
    for (i, plugin) in all.enumerated() {
        (table + i).initialize(to: LV2_Descriptor(
            URI: UnsafePointer(strdup(plugin.uri)),
            instantiate: { descriptor, sampleRate, _, _ in
                guard let descriptor, sampleRate > 0, sampleRate.isFinite else { return nil }
                let index = descriptors.distance(to: UnsafeMutablePointer(mutating: descriptor))
                guard PublishedPlugin.all.indices.contains(index) else { return nil }
                let adapter = PluginAdapter(plugin: PublishedPlugin.all[index], sampleRate: sampleRate)
                return Unmanaged.passRetained(adapter).toOpaque()
            },
            connect_port: { handle, port, location in
                adapter(handle)?.connect(port: Int(port), to: location)
            },
            activate: { handle in adapter(handle)?.activate() },
            run: { handle, frames in adapter(handle)?.run(frameCount: Int(frames)) },
            deactivate: { _ in },
            cleanup: { handle in
                guard let handle else { return }
                Unmanaged<PluginAdapter>.fromOpaque(handle).release()
            },
            extension_data: { _ in nil }))
    }
    return table
}()

private func adapter(_ handle: LV2_Handle?) -> PluginAdapter? {
    handle.map { Unmanaged<PluginAdapter>.fromOpaque($0).takeUnretainedValue() }
}

/// LV2's discovery function: the descriptor of plugin `index`, or NULL past the last.
@_cdecl("lv2_descriptor")
public func lv2Descriptor(_ index: UInt32) -> UnsafePointer<LV2_Descriptor>? {
    guard Int(index) < PublishedPlugin.all.count else { return nil }
    return UnsafePointer(descriptors + Int(index))
}
