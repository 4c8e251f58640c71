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
static __thread int64_t locks;

void td_alloc_count_begin(void) { count = 0; locks = 0; counting = 1; }
int64_t td_alloc_count_end(void) { counting = 0; return count; }
int64_t td_lock_count_last(void) { return locks; }

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

/* Locks: a thread that counts allocations counts the mutexes and semaphores it waits on too
   (glibc exports the real entry points under these names). A futex the process graph waits
   on directly is not a lock here: it is the bounded wait for a period's workers. */
#include <pthread.h>
#include <semaphore.h>
/* Those names carry only an old symbol version (no default one a plain reference binds to). */
extern int td_real_mutex_lock(pthread_mutex_t *);
extern int td_real_rwlock_rdlock(pthread_rwlock_t *);
extern int td_real_rwlock_wrlock(pthread_rwlock_t *);
__asm__(".symver td_real_mutex_lock,__pthread_mutex_lock@GLIBC_2.2.5");
__asm__(".symver td_real_rwlock_rdlock,__pthread_rwlock_rdlock@GLIBC_2.2.5");
__asm__(".symver td_real_rwlock_wrlock,__pthread_rwlock_wrlock@GLIBC_2.2.5");
int pthread_mutex_lock(pthread_mutex_t *m) { if (counting) locks++; return td_real_mutex_lock(m); }
int pthread_rwlock_rdlock(pthread_rwlock_t *l) { if (counting) locks++; return td_real_rwlock_rdlock(l); }
int pthread_rwlock_wrlock(pthread_rwlock_t *l) { if (counting) locks++; return td_real_rwlock_wrlock(l); }
