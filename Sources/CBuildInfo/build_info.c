#include "CBuildInfo.h"

/* The Makefile writes commit.h (git-ignored) before every build and touches this file when
   the commit changes; without it the commit is "unknown" and the build still works. */
#if __has_include("commit.h")
#include "commit.h"
#endif
#ifndef TAPEDECK_COMMIT
#define TAPEDECK_COMMIT "unknown"
#endif

const char *td_build_commit(void) { return TAPEDECK_COMMIT; }
