/* See CCompKernel.h. Built with -ffp-contract=off (Package.swift). Each expression follows
 * CompressorNode.swift and FastMath8.swift operation for operation. */
#include "CCompKernel.h"

/* The eight-lane helpers are inlined; their AVX argument-passing ABI never shows. */
#pragma clang diagnostic ignored "-Wpsabi"
#include "CMixKernels.h"

#include <string.h>

typedef float v8f __attribute__((vector_size(32)));
typedef int v8i __attribute__((vector_size(32)));
typedef unsigned v8u __attribute__((vector_size(32)));

static const float decibels_per_octave = 6.0205999f;
static const float two_to_23 = 8388608.0f;

void td_detector_step_init(td_detector_step *step, float coefficient) {
    memset(step, 0, sizeof *step);
    step->c = coefficient;
    step->rest = 1 - coefficient;
    float k = 1;
    for (int j = 0; j < 8; j++) {
        k *= coefficient;
        step->powers[j] = k;
    }
    for (int m = 0; m < 8; m++) {
        float v = 1 - coefficient;
        for (int j = m; j < 8; j++) {
            step->columns[m][j] = v;
            v *= coefficient;
        }
    }
}

#define INLINE static inline __attribute__((always_inline))

INLINE v8f splat(float x) { return (v8f){x, x, x, x, x, x, x, x}; }
INLINE v8i splati(int x) { return (v8i){x, x, x, x, x, x, x, x}; }
INLINE v8f load8(const float *p) { v8f v; memcpy(&v, p, sizeof v); return v; }
INLINE void store8(float *p, v8f v) { memcpy(p, &v, sizeof v); }

/* b where sign's sign bit is set, a elsewhere (pick(_:_:whereNegative:)). */
INLINE v8f pick(v8f a, v8f b, v8f sign) {
    v8i mask = (v8i)sign >> 31;
    return (v8f)(((v8i)a & ~mask) | ((v8i)b & mask));
}

INLINE v8f magnitude8(v8f x) { return (v8f)((v8i)x & splati(0x7FFFFFFF)); }

INLINE v8f positive_part8(v8f x) {
    v8i bits = (v8i)x;
    return (v8f)(bits & ~(bits >> 31));
}

INLINE v8f fast_log2_8(v8f x) {
    v8i bits = (v8i)x;
    v8f exponent_field = (v8f)(((bits >> 23) & 0xFF) | 0x4B000000) - two_to_23;
    v8i mantissa = bits & 0x007FFFFF;
    /* Integer wrap-around as Swift's &- (done unsigned: defined in C). */
    v8i folded = (v8i)((v8u)splati(0x003504F3) - (v8u)mantissa) >> 31;
    v8f m = (v8f)((v8u)(mantissa | 0x3F800000) - (v8u)(folded & 0x00800000));
    v8f e = (exponent_field - 127) + (v8f)(folded & 0x3F800000);
    v8f s = (m - 1) / (m + 1), s2 = s * s;
    const float third = 1.0f / 3, seventh = 1.0f / 7;
    v8f series = s2 * seventh;
    series = s2 * (series + 0.2f);
    series = s2 * (series + third);
    v8f ln = 2 * s * (series + 1);
    const float scale = 1.44269504f;
    return e + ln * scale;
}

INLINE v8f fast_exp2_8(v8f x) {
    v8f low = splat(-126), high = splat(127);
    v8f clamped = pick(pick(x, low, x - low), high, high - x);
    const float magic = 12582912.0f;
    v8f rounded = (clamped + magic) - magic;
    v8f xi = pick(rounded, rounded - 1, clamped - rounded);
    v8f f = clamped - xi;
    const float c5 = 0.0013333f, c4 = 0.0096181f, c3 = 0.0555041f, c2 = 0.2402265f, c1 = 0.6931472f;
    v8f p = f * c5;
    p = f * (p + c4);
    p = f * (p + c3);
    p = f * (p + c2);
    p = f * (p + c1);
    p = p + 1;
    v8i field = (v8i)((xi + 127) + two_to_23) & 0x007FFFFF;
    return p * (v8f)(field << 23);
}

INLINE v8f reduction8(v8f peak, float t, float w, float slope, float knee_scale) {
    v8f x = decibels_per_octave * fast_log2_8(peak);
    v8f over = x - t;
    v8f width = splat(w);
    v8f in_knee = positive_part8(over + w / 2);
    v8f d = pick(in_knee, width, width - in_knee);
    return d * d * knee_scale + slope * positive_part8(over - w / 2);
}

INLINE v8f apply8(const td_detector_step *s, v8f x, float y) {
    v8f out = load8(s->powers) * y;
    for (int m = 0; m < 8; m++) out += load8(s->columns[m]) * x[m];
    return out;
}

INLINE int holds8(v8f x, v8f out, float y, int rising) {
    v8f before = {y, out[0], out[1], out[2], out[3], out[4], out[5], out[6]};
    v8i above = x > before;
    int count = 0;
    for (int j = 0; j < 8; j++) count += above[j] != 0;
    return rising ? count == 8 : count == 0;
}

/* Both ways are worked out and one is picked: the same values as taking the branch, without
 * it. The branch follows the signal's wiggles (a busy signal turns it every frame or two), so
 * it was mispredicted often, and the coefficient's load waited on the comparison: 6.7 ns a
 * frame for the whole kernel on the benchmark's tones, 4.3 ns picking. */
INLINE float detect(const td_detector_step *attack, const td_detector_step *release, float x, float y) {
    float rising = attack->c * y + attack->rest * x;
    float falling = release->c * y + release->rest * x;
    return x > y ? rising : falling;
}

INLINE float comp_gains(const float *const *inputs, int channels, long n, float *g, float y,
                        float t, float w, float slope, float knee_scale,
                        const td_detector_step *attack, const td_detector_step *release) {
    /* Pass 1: the reduction the curve asks for, from the loudest channel (a short last
     * group read into zeroed lanes, as the Swift loop did). */
    for (long i = 0; i < n; i += 8) {
        long lanes = n - i < 8 ? n - i : 8;
        v8f peak = splat(0);
        for (int c = 0; c < channels; c++) {
            v8f v = splat(0);
            if (lanes == 8) v = load8(inputs[c] + i);
            else for (long k = 0; k < lanes; k++) v[k] = inputs[c][i + k];
            v8f m = magnitude8(v);
            peak = c == 0 ? m : pick(peak, m, peak - m);
        }
        v8f r = reduction8(peak, t, w, slope, knee_scale);
        if (lanes == 8) store8(g + i, r);
        else for (long k = 0; k < lanes; k++) g[i + k] = r[k];
    }
    /* Pass 2: the detector, eight frames a step while its branch holds. */
    long i = 0;
    for (; i + 8 <= n; i += 8) {
        v8f x = load8(g + i);
        int rising = x[0] > y;
        v8f out = apply8(rising ? attack : release, x, y);
        if (holds8(x, out, y, rising)) {
            store8(g + i, out);
            y = out[7];
        } else {
            for (long k = i; k < i + 8; k++) { y = detect(attack, release, g[k], y); g[k] = y; }
        }
    }
    for (; i < n; i++) { y = detect(attack, release, g[i], y); g[i] = y; }
    /* Pass 3: the reduction as a linear gain (the scalar tail's function is the lanes'). */
    for (i = 0; i < n; i += 8) {
        long lanes = n - i < 8 ? n - i : 8;
        v8f r = splat(0);
        if (lanes == 8) r = load8(g + i);
        else for (long k = 0; k < lanes; k++) r[k] = g[i + k];
        v8f gain = pick(fast_exp2_8(-r / decibels_per_octave), splat(1), r - 1e-6f);
        if (lanes == 8) store8(g + i, gain);
        else for (long k = 0; k < lanes; k++) g[i + k] = gain[k];
    }
    return y;
}

__attribute__((target("avx2")))
static float comp_gains_avx2(const float *const *inputs, int channels, long n, float *g, float y,
                             float t, float w, float slope, float knee_scale,
                             const td_detector_step *attack, const td_detector_step *release) {
    return comp_gains(inputs, channels, n, g, y, t, w, slope, knee_scale, attack, release);
}

static float comp_gains_sse(const float *const *inputs, int channels, long n, float *g, float y,
                            float t, float w, float slope, float knee_scale,
                            const td_detector_step *attack, const td_detector_step *release) {
    return comp_gains(inputs, channels, n, g, y, t, w, slope, knee_scale, attack, release);
}

float td_comp_gains(const float *const *inputs, int channels, long n, float *gains, float y,
                    float threshold, float knee, float slope, float knee_scale,
                    const td_detector_step *attack, const td_detector_step *release) {
    if (td_mix_has_avx2())
        return comp_gains_avx2(inputs, channels, n, gains, y, threshold, knee, slope, knee_scale, attack, release);
    return comp_gains_sse(inputs, channels, n, gains, y, threshold, knee, slope, knee_scale, attack, release);
}
