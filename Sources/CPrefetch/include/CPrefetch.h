#ifndef CPREFETCH_H
#define CPREFETCH_H

/* Software prefetch for the audio thread's streaming reads. Swift has no prefetch of its own;
   a static inline function is compiled into the Swift caller and inlined there, so this costs
   one instruction. The mix at 32x reads 8192 frames of every track's ring a period, memory
   written by the disk thread long before (the rings hold seconds): the hardware prefetchers
   stop at every 4 KiB page, and the loads waited on memory. */
static inline void td_prefetch(const void *address) { __builtin_prefetch(address, 0, 0); }

#endif
