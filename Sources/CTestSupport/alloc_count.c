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

void *malloc(size_t n) { if (counting) count++; return __libc_malloc(n); }
void *calloc(size_t a, size_t b) { if (counting) count++; return __libc_calloc(a, b); }
void *realloc(void *p, size_t n) { if (counting) count++; return __libc_realloc(p, n); }
int posix_memalign(void **out, size_t align, size_t n) {
    if (counting) count++;
    void *p = __libc_memalign(align, n);
    if (!p) return ENOMEM;
    *out = p;
    return 0;
}
void *aligned_alloc(size_t align, size_t n) { if (counting) count++; return __libc_memalign(align, n); }
/* The older aligned entry points, so nothing that reaches the heap slips past the count. */
void *memalign(size_t align, size_t n) { if (counting) count++; return __libc_memalign(align, n); }
void *valloc(size_t n) { if (counting) count++; return __libc_valloc(n); }
