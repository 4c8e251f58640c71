/// Structured edits of a ``Chain`` — what the screen's chain panel does — so every chain the
/// screen stores went through the one parser and prints in canonical form.
extension Chain {
    /// One parameter of an entry as the panel shows it: its definition and its value (the
    /// one set, or the default).
    public struct ParameterState: Equatable, Sendable {
        /// The parameter's definition.
        public var definition: ParameterDefinition
        /// Its value.
        public var value: ParameterValue
        /// Whether the chain sets it (false: the node's default).
        public var isSet: Bool

        /// The value with its unit (`80 Hz`, `1/8`, `saw`).
        public var displayText: String {
            switch value {
            case .note(let n): n.description
            case .number(let v): definition.displayText(v)
            }
        }
    }

    /// Every parameter of entry `index`, set or not, in the node's order.
    public func parameters(of index: Int, registry: NodeRegistry = .builtIn) -> [ParameterState] {
        // A provider's node (an LV2 plugin) too, when `registry` has its provider.
        guard entries.indices.contains(index), let descriptor = registry.descriptor(named: entries[index].node) else { return [] }
        return descriptor.parameters.map { d in
            if let s = entries[index].settings.first(where: { $0.parameter == d.id }) {
                return ParameterState(definition: d, value: s.value, isSet: true)
            }
            return ParameterState(definition: d, value: .number(d.defaultValue), isSet: false)
        }
    }

    /// Bypasses (or restores) entry `index`.
    public mutating func setBypassed(_ index: Int, _ bypassed: Bool) {
        guard entries.indices.contains(index) else { return }
        entries[index].bypassed = bypassed
    }

    /// Moves entry `index` by `offset` places; false when it cannot move.
    public mutating func move(_ index: Int, by offset: Int) -> Bool {
        let target = index + offset
        guard entries.indices.contains(index), entries.indices.contains(target) else { return false }
        entries.insert(entries.remove(at: index), at: target)
        return true
    }

    /// Removes entry `index`.
    public mutating func remove(at index: Int) {
        guard entries.indices.contains(index) else { return }
        entries.remove(at: index)
    }

    /// Steps parameter `parameter` of entry `index` by `steps` fine or coarse steps (a coarse
    /// step is ten fine ones), within its range; a choice moves to the next or previous
    /// choice. A fine step is a tenth of the value's leading power of ten (80 → 1, 5 → 0.1),
    /// and below 1 a hundredth of the range's (0 of −60…0 dB → 0.1, 0.3 of 0…1 → 0.01), so
    /// every magnitude moves at a sensible pace. False when the value cannot be stepped (a note value, or no such parameter).
    public mutating func step(entry index: Int, parameter: Int, steps: Int, coarse: Bool,
                              registry: NodeRegistry = .builtIn) -> Bool {
        let states = parameters(of: index, registry: registry)
        guard states.indices.contains(parameter), case .number(let value) = states[parameter].value else { return false }
        let d = states[parameter].definition
        let next: Double
        if d.unit == .choice {
            next = Double((Int(value) + steps % max(1, d.choices.count) + d.choices.count) % max(1, d.choices.count))
        } else {
            // Near zero the value says nothing of scale: the range does (-60…0 dB steps by 0.1).
            let fine = abs(value) >= 1 ? Chain.fineStep(for: value) : max(0.01, Chain.fineStep(for: d.maximum - d.minimum) / 10)
            let moved = value + Double(steps) * fine * (coarse ? 10 : 1)
            // Onto the fine grid, so a coarse step is exactly ten fine ones.
            // Micro-rounded so binary noise (80.10000000000001) never reaches the text.
            next = d.clamped(((moved / fine).rounded() * fine * 1e6).rounded() / 1e6)
        }
        place(Setting(parameter: d.id, value: .number(next)), entry: index, parameter: parameter, order: states.map(\.definition.id))
        return true
    }

    /// Sets parameter `id` of entry `index` to `value` (clamped into its range), keeping the
    /// settings in the node's order; false when the entry has no such parameter (a MIDI
    /// controller bound to it moved it).
    public mutating func set(entry index: Int, parameter id: String, to value: Double, registry: NodeRegistry = .standard) -> Bool {
        let states = parameters(of: index, registry: registry)
        guard let p = states.firstIndex(where: { $0.definition.id == id }) else { return false }
        place(Setting(parameter: id, value: .number(states[p].definition.clamped(value))), entry: index, parameter: p,
              order: states.map(\.definition.id))
        return true
    }

    /// Puts `setting` (of the node's `parameter`-th parameter) into entry `index`: in place
    /// of the one it replaces, or among the written ones in the node's `order`.
    private mutating func place(_ setting: Setting, entry index: Int, parameter: Int, order: [String]) {
        if let at = entries[index].settings.firstIndex(where: { $0.parameter == setting.parameter }) {
            entries[index].settings[at] = setting
        } else {
            let position = entries[index].settings.firstIndex { (order.firstIndex(of: $0.parameter) ?? 0) > parameter } ?? entries[index].settings.count
            entries[index].settings.insert(setting, at: position)
        }
    }

    /// Sets text setting `index` of entry `entry` (a file name) to `value`.
    public mutating func setText(entry: Int, index: Int, to value: String) {
        guard entries.indices.contains(entry), entries[entry].texts.indices.contains(index) else { return }
        entries[entry].texts[index].value = value
    }

    /// The fine step for a value (see ``step(entry:parameter:steps:coarse:registry:)``).
    static func fineStep(for value: Double) -> Double {
        var a = abs(value)
        guard a >= 1 else { return 0.01 }
        var step = 0.1
        while a >= 10 { a /= 10; step *= 10 }
        return step
    }
}
