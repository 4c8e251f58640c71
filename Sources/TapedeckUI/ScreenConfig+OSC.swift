import TapedeckCore

extension ScreenConfig {
    /// Config keys other than `theme` that have their own readers.
    static let otherKeys: Set<String> = ["osc", "osc-address", "mirror", "split", "timestamp", "threads"]

    /// `KEY = VALUE` from the config file (the last such line), the text as written: the
    /// command checks it as it checks its option (`mirror = DIR` as `--mirror DIR`).
    public func configuredValue(_ key: String) -> String? {
        guard let lines = SettingsText.read(configPath) else { return nil }
        var value: String?
        for decoded in lines {
            guard let raw = decoded else { continue }
            let line = (raw.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? "").trimmingWhitespace()
            let parts = line.split(separator: "=", maxSplits: 1).map { String($0).trimmingWhitespace() }
            if parts.count == 2, parts[0] == key { value = parts[1] }
        }
        return value
    }

    /// `osc = PORT` and `osc-address = ADDR` from the config file (the text as written: the
    /// command checks it as it checks `--osc`), and problems with those lines.
    public func configuredOSC() -> (port: String?, address: String?) {
        (configuredValue("osc"), configuredValue("osc-address"))
    }
}
