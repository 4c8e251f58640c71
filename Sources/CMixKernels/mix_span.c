/* See CMixKernels.h. Built with -ffp-contract=off (Package.swift): a fused multiply-add
 * would round once where the Swift loop rounds twice. */
#include "CMixKernels.h"

#include <immintrin.h>

int td_mix_has_avx2(void) {
    static int answer = -1;
    if (answer < 0) {
        __builtin_cpu_init();
        answer = __builtin_cpu_supports("avx2") ? 1 : 0;
    }
    return answer;
}

__attribute__((target("avx2")))
static inline __m256 gains(td_mix_glide g, long frame, __m256 lanes) {
    if (!g.glides) return _mm256_set1_ps(g.start);
    /* start + ((Float(f) + lead) + lane) * step, as the Swift SIMD8 expression. */
    __m256 at = _mm256_add_ps(_mm256_set1_ps((float)frame + g.lead), lanes);
    return _mm256_add_ps(_mm256_set1_ps(g.start), _mm256_mul_ps(at, _mm256_set1_ps(g.step)));
}

/* |v| where it is above the peak (a NaN compares false and is passed over). */
__attribute__((target("avx2")))
static inline __m256 raise(__m256 peak, __m256 v) {
    __m256 magnitude = _mm256_and_ps(v, _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF)));
    return _mm256_blendv_ps(peak, magnitude, _mm256_cmp_ps(magnitude, peak, _CMP_GT_OQ));
}

__attribute__((target("avx2")))
void td_mix_span_avx2(const float *source, int stereo, float *left, float *right, long offset, long count,
                      td_mix_glide fader, td_mix_glide pan_left, td_mix_glide pan_right,
                      int left_on, int right_on, int scales, long prefetch_bytes, td_mix_levels *levels) {
    const __m256 lanes = _mm256_setr_ps(0, 1, 2, 3, 4, 5, 6, 7);
    __m256 peak0 = _mm256_loadu_ps(levels->peak0), peak1 = _mm256_loadu_ps(levels->peak1);
    __m256 squares0 = _mm256_loadu_ps(levels->squares0), squares1 = _mm256_loadu_ps(levels->squares1);
    float *left_bus = left + offset, *right_bus = right + offset;
    const int channels = stereo ? 2 : 1;
    for (long j = 0; j + 8 <= count; j += 8) {
        long f = offset + j;
        __m256 l, r;
        __builtin_prefetch((const char *)source + j * 4 * channels + prefetch_bytes, 0, 0);
        if (stereo) {
            /* Frames j…j+7 interleaved: the even samples are the left channel, in order. */
            __m256 a = _mm256_loadu_ps(source + 2 * j), b = _mm256_loadu_ps(source + 2 * j + 8);
            __m256 even = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0));
            __m256 odd = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1));
            l = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(even), _MM_SHUFFLE(3, 1, 2, 0)));
            r = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(odd), _MM_SHUFFLE(3, 1, 2, 0)));
        } else {
            l = _mm256_loadu_ps(source + j);
            r = l;
        }
        if (scales) {
            __m256 g = gains(fader, f, lanes);
            l = _mm256_mul_ps(l, g);
            r = _mm256_mul_ps(r, g);
        }
        peak0 = raise(peak0, l);
        squares0 = _mm256_add_ps(squares0, _mm256_mul_ps(l, l));
        if (stereo) {
            peak1 = raise(peak1, r);
            squares1 = _mm256_add_ps(squares1, _mm256_mul_ps(r, r));
        }
        if (left_on) {
            __m256 sum = _mm256_add_ps(_mm256_loadu_ps(left_bus + j), _mm256_mul_ps(l, gains(pan_left, f, lanes)));
            _mm256_storeu_ps(left_bus + j, sum);
        }
        if (right_on) {
            __m256 sum = _mm256_add_ps(_mm256_loadu_ps(right_bus + j), _mm256_mul_ps(r, gains(pan_right, f, lanes)));
            _mm256_storeu_ps(right_bus + j, sum);
        }
    }
    _mm256_storeu_ps(levels->peak0, peak0);
    _mm256_storeu_ps(levels->peak1, peak1);
    _mm256_storeu_ps(levels->squares0, squares0);
    _mm256_storeu_ps(levels->squares1, squares1);
}
