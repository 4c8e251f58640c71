#ifndef TAPEDECK_CNCURSES_SHIM_H
#define TAPEDECK_CNCURSES_SHIM_H
/* Wide-character ncurses: these must be defined before the header, and SwiftPM would drop
   them if they came from pkg-config. */
#define NCURSES_WIDECHAR 1
#define _XOPEN_SOURCE_EXTENDED 1
#include <locale.h>
#include <langinfo.h>
#include <string.h>
#include <stdio.h>
#include <ncursesw/curses.h>

/* Globals and function-like macros do not reach Swift 6; these wrappers do. */
static inline WINDOW *td_stdscr(void) { return stdscr; }
static inline int td_lines(void) { return LINES; }
static inline int td_cols(void) { return COLS; }
static inline int td_colors(void) { return COLORS; }
static inline int td_color_pairs(void) { return COLOR_PAIRS; }
static inline attr_t td_a_bold(void) { return A_BOLD; }
static inline attr_t td_a_reverse(void) { return A_REVERSE; }
static inline attr_t td_a_dim(void) { return A_DIM; }
static inline attr_t td_a_underline(void) { return A_UNDERLINE; }
static inline attr_t td_a_normal(void) { return A_NORMAL; }
static inline attr_t td_color_pair(int n) { return COLOR_PAIR(n); }
static inline int td_key_f(int n) { return KEY_F(n); }
static inline int td_getmaxy(WINDOW *w) { return getmaxy(w); }
static inline int td_getmaxx(WINDOW *w) { return getmaxx(w); }

/* Whether the current locale encodes text as UTF-8 (call after setlocale). */
static inline int td_locale_is_utf8(void) {
    const char *cs = nl_langinfo(CODESET);
    return cs != NULL && (strcmp(cs, "UTF-8") == 0 || strcmp(cs, "utf8") == 0);
}
/* One cell: setcchar + mvwadd_wch, so Swift need not build cchar_t by hand. */
static inline int td_put_cell(WINDOW *w, int y, int x, wchar_t ch, attr_t attrs, short pair) {
    cchar_t c;
    wchar_t text[2] = { ch, 0 };
    if (setcchar(&c, text, attrs, pair, NULL) != OK) return ERR;
    return mvwadd_wch(w, y, x, &c);
}
/* Reads one cell back (tests): its first character, attributes and colour pair. */
static inline int td_read_cell(WINDOW *w, int y, int x, wchar_t *ch, attr_t *attrs, short *pair) {
    cchar_t c;
    wchar_t text[CCHARW_MAX + 1];
    if (mvwin_wch(w, y, x, &c) != OK) return ERR;
    if (getcchar(&c, text, attrs, pair, NULL) == ERR) return ERR;
    *ch = text[0];
    return OK;
}
static inline int td_key_resize(void) { return KEY_RESIZE; }
static inline attr_t td_a_color(void) { return A_COLOR; }
#endif
