/* The compressor's gain computer and detector (CompressorNode's passes 1-3) in C.
 *
 * Why: Swift compiles SIMD8<Float> for baseline x86-64 and turned much of the compressor's
 * eight-lane bit arithmetic (the sign-bit picks, the detector's comparisons) into lane-by-lane
 * scalar code; the node was 28 % of a 256-track period in perf. The same operations in the
 * same order here, in C vector types, compile to whole-register instructions (two SSE halves,
 * or one AVX2 register when the CPU has it, chosen at run time as td_mix_has_avx2 says). No
 * multiply-add is fused (-ffp-contract=off), so each value is the Swift code's, bit for bit,
 * on either path. */
#ifndef TAPEDECK_CCOMPKERNEL_H
#define TAPEDECK_CCOMPKERNEL_H

/* Eight frames of the one-pole smoother y <- c*y + (1 - c)*x at once (DetectorStep):
 * powers[j] = c^(j+1); columns[m][j] = (1 - c)*c^(j-m) for j >= m, else 0. */
typedef struct {
    float c;
    float rest;
    float powers[8];
    float columns[8][8];
} td_detector_step;

/* Fills `step` for `coefficient`, as DetectorStep(coefficient:) did. Audio thread: arithmetic. */
void td_detector_step_init(td_detector_step *step, float coefficient);

/* The static curve's reduction from the loudest of `channels` inputs, smoothed by the
 * detector from state `y`, as a linear gain per frame into `gains` (n frames). Returns the
 * detector's state after the last frame. Audio thread: no allocation. */
float td_comp_gains(const float *const *inputs, int channels, long n, float *gains, float y,
                    float threshold, float knee, float slope, float knee_scale,
                    const td_detector_step *attack, const td_detector_step *release);

#endif
