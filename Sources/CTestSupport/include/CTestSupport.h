#ifndef TAPEDECK_CTESTSUPPORT_H
#define TAPEDECK_CTESTSUPPORT_H
#include <stdint.h>
/* Counts heap allocations made by the calling thread while counting is on, by wrapping
   malloc/calloc/realloc/posix_memalign/aligned_alloc/memalign/valloc through glibc's __libc_* entry points. Tests use it to
   prove that a node's process() never allocates. */
void td_alloc_count_begin(void);
/* Stops counting on this thread and returns how many allocations it saw. */
int64_t td_alloc_count_end(void);
/* The mutexes and read-write locks this thread took while it counted (pthread_mutex_lock,
   pthread_rwlock_rdlock/wrlock, wrapped like malloc), for the last counting span. */
int64_t td_lock_count_last(void);
/* Hands the heap memory malloc keeps for reuse back to the system (glibc's malloc_trim), so
   that resident memory shows what is live: for tests that look for leaks. */
void td_malloc_trim(void);
#endif
