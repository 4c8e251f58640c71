import TapedeckDSP

/// The Turtle (TTL) that describes the published plugins, written from the node
/// descriptors: the same names, ranges, defaults, units and choices as `tapedeck nodes`.
public enum TurtleWriter {
    /// `manifest.ttl`: every plugin, its binary and where its description is.
    public static func manifest(binary: String, description: String = "tapedeck.ttl") -> String {
        var text = prefixes
        for plugin in PublishedPlugin.all {
            text += "\n<\(plugin.uri)>\n    a lv2:Plugin ;\n    lv2:binary <\(binary)> ;\n    rdfs:seeAlso <\(description)> .\n"
        }
        return text
    }

    /// `tapedeck.ttl`: each plugin's name, class, version and ports.
    public static func description() -> String {
        var text = prefixes
        text += "\n<urn:tapedeck:team>\n    a foaf:Person ;\n    foaf:name \"Tapedeck\" .\n"
        for plugin in PublishedPlugin.all { text += "\n" + describe(plugin) }
        return text
    }

    private static let prefixes = """
    @prefix doap: <http://usefulinc.com/ns/doap#> .
    @prefix foaf: <http://xmlns.com/foaf/0.1/> .
    @prefix lv2: <http://lv2plug.in/ns/lv2core#> .
    @prefix rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#> .
    @prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
    @prefix units: <http://lv2plug.in/ns/extensions/units#> .

    """

    private static func describe(_ plugin: PublishedPlugin) -> String {
        let d = plugin.descriptor
        let version = d.version.split(separator: ".").compactMap { Int($0) }
        var ports: [String] = []
        for (i, p) in d.parameters.enumerated() { ports.append(controlPort(p, index: i)) }
        let names = plugin.channelCount == 1 ? [("in", "out", "")] : [("in_l", "out_l", " left"), ("in_r", "out_r", " right")]
        for (c, name) in names.enumerated() {
            ports.append(audioPort(index: plugin.audioInputPort(c), symbol: name.0, name: "Input\(name.2)", input: true))
        }
        for (c, name) in names.enumerated() {
            ports.append(audioPort(index: plugin.audioOutputPort(c), symbol: name.1, name: "Output\(name.2)", input: false))
        }
        if plugin.reportsLatency {
            ports.append("""
                [
                    a lv2:OutputPort, lv2:ControlPort ;
                    lv2:index \(plugin.latencyPort) ;
                    lv2:symbol "latency" ;
                    lv2:name "Latency" ;
                    lv2:portProperty lv2:reportsLatency, lv2:integer ;
                    units:unit units:frame
                ]
            """)
        }
        return """
        <\(plugin.uri)>
            a lv2:Plugin\(pluginClass(d).map { ", lv2:\($0)" } ?? "") ;
            doap:name "\(escape("Tapedeck \(d.displayName) (\(plugin.channelCount == 1 ? "mono" : "stereo"))"))" ;
            rdfs:comment "\(escape(d.summary))" ;
            doap:maintainer <urn:tapedeck:team> ;
            lv2:minorVersion \(version.count > 1 ? version[1] : 0) ;
            lv2:microVersion \(version.count > 2 ? version[2] : 0) ;
            lv2:optionalFeature lv2:hardRTCapable ;
            lv2:port
        \(ports.joined(separator: " ,\n")) .

        """
    }

    private static func controlPort(_ p: ParameterDefinition, index: Int) -> String {
        var lines = [
            "a lv2:InputPort, lv2:ControlPort",
            "lv2:index \(index)",
            "lv2:symbol \"\(p.id)\"",
            "lv2:name \"\(escape(p.name))\"",
            "lv2:default \(number(p.defaultValue))",
            "lv2:minimum \(number(p.minimum))",
            "lv2:maximum \(number(p.maximum))",
        ]
        if p.unit == .choice {
            lines.append("lv2:portProperty lv2:integer, lv2:enumeration")
            let points = p.choices.enumerated().map { "[ rdfs:label \"\(escape($0.element))\" ; rdf:value \($0.offset) ]" }
            lines.append("lv2:scalePoint " + points.joined(separator: ", "))
        } else if let unit = unit(p.unit) {
            lines.append("units:unit \(unit)")
        }
        return "        [\n" + lines.map { "            " + $0 }.joined(separator: " ;\n") + "\n        ]"
    }

    private static func audioPort(index: Int, symbol: String, name: String, input: Bool) -> String {
        """
                [
                    a lv2:\(input ? "InputPort" : "OutputPort"), lv2:AudioPort ;
                    lv2:index \(index) ;
                    lv2:symbol "\(symbol)" ;
                    lv2:name "\(name)"
                ]
        """
    }

    /// The LV2 unit of a parameter unit; a custom one for ratios; none for plain numbers.
    private static func unit(_ unit: ParameterUnit) -> String? {
        switch unit {
        case .decibels: return "units:db"
        case .hertz: return "units:hz"
        case .milliseconds: return "units:ms"
        case .seconds: return "units:s"
        case .semitones: return "units:semitone12TET"
        case .midiNote: return "units:midiNote"
        case .percent: return "units:pc"
        case .frames: return "units:frame"
        case .beatsPerMinute: return "units:bpm"
        case .cents: return "units:cent"
        case .ratio: return "[ a units:Unit ; rdfs:label \"ratio\" ; units:symbol \":1\" ; units:render \"%f:1\" ]"
        case .fraction, .pan, .q, .choice, .plain: return nil
        }
    }

    /// The LV2 plugin class of a node, from its first tag that names one.
    private static func pluginClass(_ d: NodeDescriptor) -> String? {
        let classes = ["Filter": "FilterPlugin", "EQ": "EQPlugin", "Dynamics": "DynamicsPlugin", "Delay": "DelayPlugin",
                       "Reverb": "ReverbPlugin", "Modulation": "ModulatorPlugin", "Distortion": "DistortionPlugin",
                       "Utility": "UtilityPlugin"]
        return d.tags.lazy.compactMap { classes[$0] }.first
    }

    /// A Turtle number: integers plainly, others as decimals or doubles.
    private static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : "\(value)"
    }

    private static func escape(_ text: String) -> String {
        text.replacingAll("\\", with: "\\\\").replacingAll("\"", with: "\\\"")
    }
}

extension String {
    fileprivate func replacingAll(_ target: Character, with replacement: String) -> String {
        var out = ""
        for ch in self { if ch == target { out += replacement } else { out.append(ch) } }
        return out
    }
}
