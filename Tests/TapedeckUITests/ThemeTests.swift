import Foundation
import XCTest
@testable import TapedeckUI

final class ThemeTests: XCTestCase {
    static let themesFolder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Themes").path

    func testColoursParseByNameIndexAndFallback() throws {
        let theme = try Theme.parse("name = t\nplaying = 40/green default bold\nclip = red 196 reverse", source: "t")
        XCTAssertEqual(theme.name, "t")
        let playing = theme.style(.playing)
        XCTAssertEqual(playing.foreground, ThemeColor(40, fallback8: 2))
        XCTAssertEqual(playing.background, .terminalDefault)
        XCTAssertTrue(playing.bold)
        XCTAssertEqual(theme.style(.clip).foreground.index256, 1)
        XCTAssertEqual(theme.style(.clip).background.index256, 196)
        XCTAssertEqual(theme.style(.clip).background.index8, 1, "bright red falls back to red on 8 colours")
        XCTAssertTrue(theme.style(.clip).reverse)
    }

    func testAMalformedLineIsNamedByNumber() {
        XCTAssertThrowsError(try Theme.parse("name = x\n\nplaying = green\n", source: "x.theme")) { error in
            XCTAssertEqual((error as? Theme.ParseError)?.line, 3)
            XCTAssertTrue("\(error)".hasPrefix("x.theme line 3:"), "\(error)")
        }
        XCTAssertThrowsError(try Theme.parse("frobnicate = red blue", source: "x")) { error in
            XCTAssertEqual((error as? Theme.ParseError)?.line, 1)
        }
        XCTAssertThrowsError(try Theme.parse("playing = 300 blue", source: "x"))
        XCTAssertThrowsError(try Theme.parse("playing = red blue blinking", source: "x"))
    }

    func testEveryShippedThemeParsesAndTheDefaultMatchesTheBuiltIn() throws {
        for name in ["default", "light", "high-contrast", "mono"] {
            let path = ThemeTests.themesFolder + "/\(name).theme"
            let text = try String(contentsOfFile: path, encoding: .utf8)
            let theme = try Theme.parse(text, source: path)
            XCTAssertEqual(theme.name, name)
            for role in Role.allCases { XCTAssertNotNil(theme.styles[role], "\(name) lacks \(role.rawValue)") }
        }
        let file = try String(contentsOfFile: ThemeTests.themesFolder + "/default.theme", encoding: .utf8)
        XCTAssertEqual(try Theme.parse(file, source: "default"), Theme.builtInDefault)
        XCTAssertEqual(Set(Theme.builtInDefault.styles.keys), Set(Role.allCases))
    }

    func testMonoUsesNoColours() throws {
        let text = try String(contentsOfFile: ThemeTests.themesFolder + "/mono.theme", encoding: .utf8)
        let mono = try Theme.parse(text, source: "mono")
        for role in Role.allCases {
            XCTAssertEqual(mono.style(role).foreground, .terminalDefault)
            XCTAssertEqual(mono.style(role).background, .terminalDefault)
        }
    }

    func testAMalformedThemeFileFallsBackToTheDefaultWithAMessageNamingTheLine() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("td-themes-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir.appendingPathComponent("tapedeck/themes"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        try "name = broken\nplaying = green\n".write(to: dir.appendingPathComponent("tapedeck/themes/broken.theme"), atomically: true, encoding: .utf8)
        let config = ScreenConfig(environment: ["XDG_CONFIG_HOME": dir.path], bundledThemes: [ThemeTests.themesFolder])
        let (theme, message) = config.loadTheme(named: "broken")
        XCTAssertEqual(theme, Theme.builtInDefault)
        XCTAssertTrue(message?.contains("broken.theme line 2") ?? false, message ?? "no message")

        let (light, none) = config.loadTheme(named: "light")
        XCTAssertEqual(light.name, "light")
        XCTAssertNil(none)
        let (_, missing) = config.loadTheme(named: "nope")
        XCTAssertTrue(missing?.contains("no theme 'nope'") ?? false)
    }

    func testConfigFileChoosesTheTheme() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("td-config-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir.appendingPathComponent("tapedeck"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        try "# mine\ntheme = light\nbogus\n".write(to: dir.appendingPathComponent("tapedeck/config"), atomically: true, encoding: .utf8)
        let config = ScreenConfig(environment: ["XDG_CONFIG_HOME": dir.path], bundledThemes: [])
        let (name, problems) = config.configuredTheme()
        XCTAssertEqual(name, "light")
        XCTAssertEqual(problems.count, 1)
        XCTAssertTrue(problems[0].contains("line 3"))
    }

    func testNearestBasicColour() {
        XCTAssertEqual(ThemeColor.nearest8(196), 1)   // red
        XCTAssertEqual(ThemeColor.nearest8(46), 2)    // green
        XCTAssertEqual(ThemeColor.nearest8(21), 4)    // blue
        XCTAssertEqual(ThemeColor.nearest8(231), 7)   // white
        XCTAssertEqual(ThemeColor.nearest8(16), 0)    // black
        XCTAssertEqual(ThemeColor.nearest8(9), 1)
    }

    func testAThemeSavedOnWindowsReadsTheSameAndEveryBadLineIsNamed() throws {
        let text = try String(contentsOfFile: ThemeTests.themesFolder + "/light.theme", encoding: .utf8)
        XCTAssertEqual(try Theme.parse(text.replacingOccurrences(of: "\n", with: "\r\n"), source: "light"), try Theme.parse(text, source: "light"))
        XCTAssertThrowsError(try Theme.parse("name = x\nplaying = green\nclip = red 300\nlabel = red blue\n", source: "x.theme")) { error in
            XCTAssertEqual("\(error)", "x.theme line 2: 'playing' needs a foreground and a background colour; line 3: '300' is not a colour")
        }
        let bad = Array("name = y\r\n".utf8) + [0xC3, 0x28, 0x0D, 0x0A] + Array("normal = red blue\r\n".utf8)
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("td-theme-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir.appendingPathComponent("tapedeck/themes"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        FileManager.default.createFile(atPath: dir.path + "/tapedeck/themes/y.theme", contents: Data(bad))
        let (_, message) = ScreenConfig(environment: ["XDG_CONFIG_HOME": dir.path], bundledThemes: []).loadTheme(named: "y")
        XCTAssertTrue(message?.contains("y.theme line 2: not valid UTF-8") ?? false, message ?? "no message")
    }
}
