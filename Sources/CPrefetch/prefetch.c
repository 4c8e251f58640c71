#include "CPrefetch.h"

/* Everything is in the header (static inline); SwiftPM wants one source file per C target. */
void td_prefetch_unused(void);
void td_prefetch_unused(void) {}
