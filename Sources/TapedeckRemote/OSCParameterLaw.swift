import Foundation
import TapedeckDSP

/// A plugin parameter's value as a surface's 0…1, both ways, as Ardour maps a plugin's
/// control (`ParameterDescriptor::to_interface` and `from_interface` in Ardour's
/// `parameter_descriptor.cc`): over the travel an LV2 port declares (``ParameterTravel``),
/// with its range steps. A built-in node's parameter is linear, a choice or whole number set
/// to the nearest (Ardour has no such nodes).
enum OSCParameterLaw {
    /// Whether Ardour treats it as a switch on the plugin page (`integer_step && upper == 1`):
    /// fed back as 0 or 1, and set by any non-zero value when off, any below 1 when on.
    static func isSwitch(_ d: ParameterDefinition) -> Bool { d.travel == .integer && d.maximum == 1 }

    /// `value`'s place along the travel, 0…1.
    static func position(_ d: ParameterDefinition, value: Double) -> Double {
        let lower = d.minimum, upper = d.maximum
        guard upper > lower, value.isFinite else { return 0 }
        let v = min(upper, max(lower, value))
        if isSwitch(d) { return v != 0 ? 1 : 0 }
        let p: Double
        switch d.travel {
        case .logarithmic:
            p = log(v / lower) / log(upper / lower)
            if d.rangeSteps > 1 { return clamp((p * Double(d.rangeSteps - 1)).rounded() / Double(d.rangeSteps - 1)) }
        case .toggle: p = (v - lower) / (upper - lower) >= 0.5 ? 1 : 0
        case .integer: p = (v + 0.5 - lower) / (1 + upper - lower)
        case .linear: p = (v - lower) / (upper - lower)
        }
        return clamp(p)
    }

    /// The value at `position` (0…1) along the travel, within the range; `current` is the value
    /// now (a switch flips from it, as Ardour's `select_plugin_parameter` does).
    static func value(_ d: ParameterDefinition, position: Double, current: Double) -> Double {
        let lower = d.minimum, upper = d.maximum
        let p = clamp(position)
        guard upper > lower else { return lower }
        if isSwitch(d) {
            if current != 0 && p < 1 { return 0 }
            if current == 0 && p != 0 { return 1 }
            return current
        }
        var v: Double
        switch d.travel {
        case .logarithmic:
            let q = d.rangeSteps > 1 ? (p * Double(d.rangeSteps - 1)).rounded() / Double(d.rangeSteps - 1) : p
            v = lower * pow(upper / lower, q)
        case .toggle: v = p >= 0.5 ? upper : lower
        case .integer: v = (lower + p * (1 + upper - lower)).rounded(.down)
        case .linear:
            if d.rangeSteps > 1 {
                v = (p * Double(d.rangeSteps - 1)).rounded() / Double(d.rangeSteps - 1) * (upper - lower) + lower
            } else {
                v = lower + p * (upper - lower)
            }
            // A built-in node's choice or whole number: the nearest.
            if d.unit == .choice || d.decimals == 0 { v = v.rounded() }
        }
        return min(upper, max(lower, v))
    }

    private static func clamp(_ p: Double) -> Double { p.isNaN ? 0 : min(1, max(0, p)) }
}
