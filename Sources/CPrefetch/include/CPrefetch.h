#ifndef CPREFETCH_H
#define CPREFETCH_H

/* Software prefetch for the audio thread's streaming reads. Swift has no prefetch of its own;
   a static inline function is compiled into the Swift caller and inlined there, so this costs
   one instruction. The mix at 32x reads 8192 frames of every track's ring a period, memory
   written by the disk thread long before (the rings hold seconds): the hardware prefetchers
   stop at every 4 KiB page, and the loads waited on memory. */
static inline void td_prefetch(const void *address) { __builtin_prefetch(address, 0, 0); }

/* Into every level of the cache (not the non-temporal hint above): for data read a little
   later, after other work touched other lines (a strip's, fetched while the one before it
   renders). A null or unmapped address is harmless: a prefetch never faults. */
static inline void td_prefetch_keep(const void *address) { __builtin_prefetch(address, 0, 3); }

#endif
