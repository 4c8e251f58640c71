#ifndef TAPEDECK_CNCURSES_SHIM_H
#define TAPEDECK_CNCURSES_SHIM_H
/* Wide-character ncurses: these must be defined before the header, and SwiftPM would drop
   them if they came from pkg-config. */
#define NCURSES_WIDECHAR 1
#define _XOPEN_SOURCE_EXTENDED 1
#include <locale.h>
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
#endif
