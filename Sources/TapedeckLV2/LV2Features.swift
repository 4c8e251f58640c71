import CLV2
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The features one plugin instance is given (`LV2_Feature*` arrays and the data they point
/// at), allocated before instantiation and freed after the instance. Every pointer a plugin
/// may keep stays valid for the instance's whole life.
final class LV2Features: @unchecked Sendable {
    /// The NULL-terminated array for `instantiate`.
    let instantiation: UnsafeMutablePointer<UnsafePointer<LV2_Feature>?>
    /// The NULL-terminated array for state save and restore: the same without the path
    /// features, which lilv supplies itself there (it maps paths into the state folder).
    let state: UnsafeMutablePointer<UnsafePointer<LV2_Feature>?>
    /// Where the plugin's log:log messages go.
    let logSink = UnsafeMutablePointer<TapedeckLogSink>.allocate(capacity: 1)

    private let features: UnsafeMutablePointer<LV2_Feature>
    private let featureCount: Int
    private let options: UnsafeMutablePointer<LV2_Options_Option>
    private let optionValues: UnsafeMutableRawPointer
    private let log = UnsafeMutablePointer<LV2_Log_Log>.allocate(capacity: 1)
    private let mapPath = UnsafeMutablePointer<LV2_State_Map_Path>.allocate(capacity: 1)
    private let freePath = UnsafeMutablePointer<LV2_State_Free_Path>.allocate(capacity: 1)

    /// Features for an instance at `sampleRate` run in blocks of 1…`maxFrames` frames, with
    /// atom buffers of `sequenceBytes`, scheduling work on `worker` when there is one.
    init(sampleRate: Double, maxFrames: Int, sequenceBytes: Int, worker: LV2Worker?) {
        let urids = HostURIDs.shared
        logSink.initialize(to: TapedeckLogSink())
        logSink.pointee.errorType = urids.logError
        logSink.pointee.warningType = urids.logWarning
        log.initialize(to: tapedeck_log_make(logSink))
        // Paths a plugin maps outside state save/restore are used as they are.
        mapPath.initialize(to: LV2_State_Map_Path(handle: nil, abstract_path: { _, path in path.flatMap { strdup($0) } },
                                                   absolute_path: { _, path in path.flatMap { strdup($0) } }))
        freePath.initialize(to: LV2_State_Free_Path(handle: nil, free_path: { _, path in free(path) }))

        // Option values: sample rate (float), then min, max, nominal block length and the
        // sequence size (int32), each in its own 8-byte slot.
        optionValues = .allocate(byteCount: 40, alignment: 8)
        optionValues.storeBytes(of: Float(sampleRate), as: Float.self)
        for (slot, value) in [1, maxFrames, maxFrames, sequenceBytes].enumerated() {
            optionValues.storeBytes(of: Int32(clamping: value), toByteOffset: 8 * (slot + 1), as: Int32.self)
        }
        let keys = [(urids.sampleRate, urids.atomFloat, 4), (urids.minBlockLength, urids.atomInt, 4),
                    (urids.maxBlockLength, urids.atomInt, 4), (urids.nominalBlockLength, urids.atomInt, 4),
                    (urids.sequenceSize, urids.atomInt, 4)]
        options = .allocate(capacity: keys.count + 1)
        for (i, (key, type, size)) in keys.enumerated() {
            (options + i).initialize(to: LV2_Options_Option(context: LV2_OPTIONS_INSTANCE, subject: 0, key: key,
                                                             size: UInt32(size), type: type, value: optionValues + 8 * i))
        }
        (options + keys.count).initialize(to: LV2_Options_Option(context: LV2_OPTIONS_INSTANCE, subject: 0, key: 0,
                                                                  size: 0, type: 0, value: nil))

        let uris = FeatureURIs.shared
        var list: [(UnsafePointer<CChar>, UnsafeMutableRawPointer?, Bool)] = [
            (uris.uridMap, UnsafeMutableRawPointer(URIDMap.shared.mapFeatureData), true),
            (uris.uridUnmap, UnsafeMutableRawPointer(URIDMap.shared.unmapFeatureData), true),
            (uris.options, UnsafeMutableRawPointer(options), true),
            (uris.boundedBlockLength, nil, true),
            (uris.log, UnsafeMutableRawPointer(log), true),
            (uris.mapPath, UnsafeMutableRawPointer(mapPath), false),
            (uris.freePath, UnsafeMutableRawPointer(freePath), false),
        ]
        if let worker { list.append((uris.workerSchedule, UnsafeMutableRawPointer(worker.scheduleFeatureData), true)) }
        featureCount = list.count
        features = .allocate(capacity: list.count)
        instantiation = .allocate(capacity: list.count + 1)
        state = .allocate(capacity: list.count + 1)
        var stateCount = 0
        for (i, (uri, data, forState)) in list.enumerated() {
            (features + i).initialize(to: LV2_Feature(URI: uri, data: data))
            (instantiation + i).initialize(to: UnsafePointer(features + i))
            if forState { (state + stateCount).initialize(to: UnsafePointer(features + i)); stateCount += 1 }
        }
        (instantiation + list.count).initialize(to: nil)
        (state + stateCount).initialize(to: nil)
    }

    deinit {
        features.deallocate()
        instantiation.deallocate()
        state.deallocate()
        options.deallocate()
        optionValues.deallocate()
        log.deallocate()
        logSink.deallocate()
        mapPath.deallocate()
        freePath.deallocate()
    }

    /// The last error or warning the plugin logged, if any. Off the audio thread.
    var lastLogMessage: String? {
        guard tapedeck_log_count(logSink) > 0 else { return nil }
        return withUnsafeBytes(of: logSink.pointee.lastMessage) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

/// Feature URIs as C strings that live as long as the process.
private struct FeatureURIs: @unchecked Sendable {
    let uridMap = FeatureURIs.c(LV2URI.uridMap)
    let uridUnmap = FeatureURIs.c(LV2URI.uridUnmap)
    let options = FeatureURIs.c(LV2URI.options)
    let boundedBlockLength = FeatureURIs.c(LV2URI.boundedBlockLength)
    let log = FeatureURIs.c(LV2URI.log)
    let mapPath = FeatureURIs.c(LV2URI.stateMapPath)
    let freePath = FeatureURIs.c(LV2URI.stateFreePath)
    let workerSchedule = FeatureURIs.c(LV2URI.workerSchedule)

    static let shared = FeatureURIs()
    private static func c(_ text: String) -> UnsafePointer<CChar> { UnsafePointer(strdup(text)!) }
}
