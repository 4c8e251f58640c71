/* Loads libfluidsynth on first use: see CFluidSynth.h for why. */
#include "CFluidSynth.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* name, return type, parameters, arguments: one line per function forwarded. */
#define TD_FLUID_FUNCTIONS(X) \
    X(new_fluid_settings, fluid_settings_t *, (void), ()) \
    X(delete_fluid_settings, void, (fluid_settings_t *s), (s)) \
    X(fluid_settings_setnum, int, (fluid_settings_t *s, const char *n, double v), (s, n, v)) \
    X(fluid_settings_setint, int, (fluid_settings_t *s, const char *n, int v), (s, n, v)) \
    X(new_fluid_synth, fluid_synth_t *, (fluid_settings_t *s), (s)) \
    X(delete_fluid_synth, void, (fluid_synth_t *f), (f)) \
    X(fluid_synth_sfload, int, (fluid_synth_t *f, const char *p, int r), (f, p, r)) \
    X(fluid_synth_set_gain, void, (fluid_synth_t *f, float g), (f, g)) \
    X(fluid_synth_program_change, int, (fluid_synth_t *f, int c, int p), (f, c, p)) \
    X(fluid_synth_write_float, int, (fluid_synth_t *f, int n, void *l, int lo, int li, void *r, int ro, int ri), \
      (f, n, l, lo, li, r, ro, ri)) \
    X(fluid_synth_noteon, int, (fluid_synth_t *f, int c, int k, int v), (f, c, k, v)) \
    X(fluid_synth_noteoff, int, (fluid_synth_t *f, int c, int k), (f, c, k)) \
    X(fluid_synth_key_pressure, int, (fluid_synth_t *f, int c, int k, int v), (f, c, k, v)) \
    X(fluid_synth_cc, int, (fluid_synth_t *f, int c, int n, int v), (f, c, n, v)) \
    X(fluid_synth_channel_pressure, int, (fluid_synth_t *f, int c, int v), (f, c, v)) \
    X(fluid_synth_pitch_bend, int, (fluid_synth_t *f, int c, int v), (f, c, v)) \
    X(fluid_synth_all_sounds_off, int, (fluid_synth_t *f, int c), (f, c)) \
    X(fluid_synth_system_reset, int, (fluid_synth_t *f), (f)) \
    X(fluid_set_log_function, fluid_log_function_t, (int l, fluid_log_function_t fn, void *d), (l, fn, d))

#define TD_POINTER(name, ret, params, args) static ret (*p_##name) params;
TD_FLUID_FUNCTIONS(TD_POINTER)

/* Plain forwarding: after a successful load every pointer is set (and never changes). */
#define TD_FORWARD(name, ret, params, args) ret td_##name params { return p_##name args; }
TD_FLUID_FUNCTIONS(TD_FORWARD)

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int loaded;
static char problem[512];

static void load(void) {
    const char *chosen = getenv("TAPEDECK_FLUIDSYNTH_LIBRARY");
    /* Debian 12's soname first, then whatever the development link names. */
    const char *names[] = { chosen && *chosen ? chosen : "libfluidsynth.so.3", "libfluidsynth.so" };
    int count = chosen && *chosen ? 1 : 2;
    void *handle = NULL;
    const char *file = names[0];
    for (int i = 0; i < count && !handle; i++) {
        file = names[i];
        handle = dlopen(file, RTLD_NOW | RTLD_LOCAL);
        if (!handle) snprintf(problem, sizeof problem, "%s", dlerror());
    }
    if (!handle) return;
#define TD_RESOLVE(name, ret, params, args) \
    *(void **)(&p_##name) = dlsym(handle, #name); \
    if (!p_##name) { snprintf(problem, sizeof problem, "%s lacks %s", file, #name); return; }
    TD_FLUID_FUNCTIONS(TD_RESOLVE)
    loaded = 1;
    problem[0] = 0;
}

int tapedeck_fluid_load(char *why, size_t capacity) {
    pthread_once(&once, load);
    if (!loaded && why && capacity > 0) snprintf(why, capacity, "%s", problem);
    return loaded;
}
