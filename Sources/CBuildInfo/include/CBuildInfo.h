#ifndef TAPEDECK_CBUILDINFO_H
#define TAPEDECK_CBUILDINFO_H
/* The git commit this binary was built from, or "unknown" (a build from a tarball, or a
   plain `swift build` before `make` wrote the commit). */
const char *td_build_commit(void);
#endif
