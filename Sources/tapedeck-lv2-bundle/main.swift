import Foundation
import TapedeckLV2Export

/// `tapedeck-lv2-bundle LIBRARY BUNDLE`: makes the LV2 bundle `BUNDLE` (a folder, e.g.
/// tapedeck.lv2) from the built plugin library: copies the library in as `tapedeck.so` and
/// writes `manifest.ttl` and `tapedeck.ttl` from the node descriptors. `make lv2` runs it.

let arguments = CommandLine.arguments
guard arguments.count == 3 else {
    FileHandle.standardError.write("usage: tapedeck-lv2-bundle LIBRARY.so BUNDLE.lv2\n".data(using: .utf8)!)
    exit(64)
}
let library = arguments[1], bundle = arguments[2]
let binary = "tapedeck.so"
do {
    let files = FileManager.default
    try files.createDirectory(atPath: bundle, withIntermediateDirectories: true)
    if files.fileExists(atPath: "\(bundle)/\(binary)") { try files.removeItem(atPath: "\(bundle)/\(binary)") }
    try files.copyItem(atPath: library, toPath: "\(bundle)/\(binary)")
    try TurtleWriter.manifest(binary: binary).write(toFile: "\(bundle)/manifest.ttl", atomically: true, encoding: .utf8)
    try TurtleWriter.description().write(toFile: "\(bundle)/tapedeck.ttl", atomically: true, encoding: .utf8)
    print("\(bundle): \(PublishedPlugin.all.count) plugins")
} catch {
    FileHandle.standardError.write("tapedeck-lv2-bundle: \(error.localizedDescription)\n".data(using: .utf8)!)
    exit(1)
}
