import XCTest
import CNcurses
@testable import TapedeckUI

/// Draws through real ncurses into a terminal that writes to /dev/null, then reads the cells
/// back, so the curses layer (wide characters, colour pairs, attributes) is checked without tmux.
final class CursesTests: XCTestCase {
    func testCanvasCellsReachNcursesWithTheThemesStyle() throws {
        guard let curses = Curses(testHeight: 30, width: 100) else { throw XCTSkip("no terminfo for xterm-256color") }
        defer { curses.end() }
        curses.apply(theme: Theme.builtInDefault, allowColor: true)
        XCTAssertEqual(curses.size.height, 30)
        XCTAssertEqual(curses.size.width, 100)

        let link = FakeLink()
        link.canRecord = true
        let model = ScreenModelTests.makeModel(link: link)
        model.handle(.char("m"))
        model.handle(.char("r"))
        model.tick(nowSeconds: 0)
        let canvas = ScreenRenderer.render(model, height: 30, width: 100, glyphs: .unicode)
        curses.draw(canvas)

        var row0 = ""
        for x in 0..<40 { row0.append(curses.cell(0, x)?.character ?? "?") }
        XCTAssertTrue(row0.contains("● REC"), row0)
        let rec = try XCTUnwrap(curses.cell(0, 1))
        XCTAssertEqual(rec.pair, curses.style(of: .recording).pair)
        XCTAssertNotEqual(rec.pair, 0, "recording has its own colour pair")
        XCTAssertEqual(rec.attrs & td_a_bold(), td_a_bold())

        var track = ""
        for x in 0..<30 { track.append(curses.cell(4, x)?.character ?? "?") }
        XCTAssertTrue(track.contains("Drums"), track)
        XCTAssertTrue(track.contains("M"), track)

        // A redraw of the same frame sends nothing; a changed frame only changes its cells.
        model.handle(.char("r"))
        curses.draw(ScreenRenderer.render(model, height: 30, width: 100, glyphs: .unicode))
        var stopped = ""
        for x in 0..<12 { stopped.append(curses.cell(0, x)?.character ?? "?") }
        XCTAssertTrue(stopped.contains("STOPPED"), stopped)

        // Without colour (NO_COLOR) nothing gets a pair, and the recording state is reversed.
        curses.apply(theme: Theme.builtInDefault, allowColor: false)
        if !curses.usesColor {
            XCTAssertEqual(curses.style(of: .recording).pair, 0)
        }
    }
}
