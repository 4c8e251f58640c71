/* The fused mix pass's inner loop (StripMixSink.span) in AVX2, chosen at run time.
 *
 * Swift compiles for x86-64's baseline (SSE2: four lanes, two-operand instructions), and a
 * Swift program cannot choose a wider instruction set per function. At 32x the mix reads
 * 8192 frames of every track a period and this loop was limited by its arithmetic, not by
 * memory; eight lanes in one instruction halve it. The arithmetic is that of the Swift loop,
 * operation for operation (multiplies and adds kept apart: no FMA contraction), so the bus
 * and the meter get the same bits whichever runs. */
#ifndef TAPEDECK_CMIXKERNELS_H
#define TAPEDECK_CMIXKERNELS_H

#include <stddef.h>

/* A gain over a span: start + ((float)frame + lead + lane) * step while gliding, else start. */
typedef struct {
    float start;
    float step;
    float lead;
    int glides;
} td_mix_glide;

/* The eight-lane running peaks and sums of squares of the two channels (as SIMD8<Float>). */
typedef struct {
    float peak0[8];
    float peak1[8];
    float squares0[8];
    float squares1[8];
} td_mix_levels;

/* 1 when this CPU runs AVX2 (asked once). */
int td_mix_has_avx2(void);

/* Mixes `count` frames (a multiple of 8) read from `source` (interleaved, 1 or 2 channels)
 * onto `left`/`right` from frame `offset` on: fader, meter, pan, as StripMixSink.span's
 * eight-frame steps do. Only when td_mix_has_avx2() said so. Audio thread: no allocation. */
void td_mix_span_avx2(const float *source, int stereo, float *left, float *right, long offset, long count,
                      td_mix_glide fader, td_mix_glide pan_left, td_mix_glide pan_right,
                      int left_on, int right_on, int scales, long prefetch_bytes, td_mix_levels *levels);

/* The compressor's kernel (this header is the module's umbrella). */
#include "CCompKernel.h"

#endif
