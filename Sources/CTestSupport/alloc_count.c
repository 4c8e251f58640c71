#define _GNU_SOURCE
#include "CTestSupport.h"
#include <stddef.h>
#include <errno.h>

/* glibc exports its real allocator under these names, so the wrappers below can forward
   without dlsym (which itself may allocate). */
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void *__libc_valloc(size_t);

static __thread int counting;
static __thread int64_t count;

void td_alloc_count_begin(void) { count = 0; counting = 1; }
int64_t td_alloc_count_end(void) { counting = 0; return count; }

#include <execinfo.h>
#include <stdlib.h>
#include <unistd.h>

/* Debug aid: with TD_ALLOC_TRACE=N in the environment, the first N counted mallocs print a
   raw backtrace to stderr (resolve with addr2line), to find what a failing test caught. */
static __thread int tracing;
static void trace(void) {
    if (tracing) return;
    const char *limit = getenv("TD_ALLOC_TRACE");
    if (!limit || count > atoi(limit)) return;
    tracing = 1;
    void *frames[32];
    int n = backtrace(frames, 32);
    backtrace_symbols_fd(frames, n, 2);
    write(2, "----\n", 5);
    tracing = 0;
}

void *malloc(size_t n) { if (counting) { count++; trace(); } return __libc_malloc(n); }
void *calloc(size_t a, size_t b) { if (counting) { count++; trace(); } return __libc_calloc(a, b); }
void *realloc(void *p, size_t n) { if (counting) { count++; trace(); } return __libc_realloc(p, n); }
int posix_memalign(void **out, size_t align, size_t n) {
    if (counting) { count++; trace(); }
    void *p = __libc_memalign(align, n);
    if (!p) return ENOMEM;
    *out = p;
    return 0;
}
void *aligned_alloc(size_t align, size_t n) { if (counting) { count++; trace(); } return __libc_memalign(align, n); }
/* The older aligned entry points, so nothing that reaches the heap slips past the count. */
void *memalign(size_t align, size_t n) { if (counting) { count++; trace(); } return __libc_memalign(align, n); }
void *valloc(size_t n) { if (counting) { count++; trace(); } return __libc_valloc(n); }

#include <malloc.h>
void td_malloc_trim(void) { malloc_trim(0); }
