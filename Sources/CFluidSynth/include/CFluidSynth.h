/* FluidSynth, loaded when the first `gm` instrument is prepared rather than linked into the
 * executable: libfluidsynth pulls in some forty libraries (SDL2, PulseAudio, X11, Wayland,
 * GLib…) whose loading and relocation took about 5 ms of every tapedeck start — a fifth of
 * a short command's time — for an instrument most sessions never use.
 *
 * Call tapedeck_fluid_load() first; the td_* functions forward to FluidSynth's functions of
 * the same name (without the prefix) and may only be called after it returned 1. */
#ifndef TAPEDECK_CFLUIDSYNTH_H
#define TAPEDECK_CFLUIDSYNTH_H

#include <stddef.h>
#include <fluidsynth.h>

/* Loads the library (once, any thread: later calls return the first answer). Returns 1 when
 * every function was found; otherwise 0, with the reason (dlerror's text) in `why`.
 * TAPEDECK_FLUIDSYNTH_LIBRARY names another library file to load instead. */
int tapedeck_fluid_load(char *why, size_t capacity);

fluid_settings_t *td_new_fluid_settings(void);
void td_delete_fluid_settings(fluid_settings_t *settings);
int td_fluid_settings_setnum(fluid_settings_t *settings, const char *name, double value);
int td_fluid_settings_setint(fluid_settings_t *settings, const char *name, int value);
fluid_synth_t *td_new_fluid_synth(fluid_settings_t *settings);
void td_delete_fluid_synth(fluid_synth_t *synth);
int td_fluid_synth_sfload(fluid_synth_t *synth, const char *filename, int reset_presets);
void td_fluid_synth_set_gain(fluid_synth_t *synth, float gain);
int td_fluid_synth_program_change(fluid_synth_t *synth, int chan, int program);
int td_fluid_synth_write_float(fluid_synth_t *synth, int len, void *lout, int loff, int lincr,
                               void *rout, int roff, int rincr);
int td_fluid_synth_noteon(fluid_synth_t *synth, int chan, int key, int vel);
int td_fluid_synth_noteoff(fluid_synth_t *synth, int chan, int key);
int td_fluid_synth_key_pressure(fluid_synth_t *synth, int chan, int key, int val);
int td_fluid_synth_cc(fluid_synth_t *synth, int chan, int ctrl, int val);
int td_fluid_synth_channel_pressure(fluid_synth_t *synth, int chan, int val);
int td_fluid_synth_pitch_bend(fluid_synth_t *synth, int chan, int val);
int td_fluid_synth_all_sounds_off(fluid_synth_t *synth, int chan);
int td_fluid_synth_system_reset(fluid_synth_t *synth);
fluid_log_function_t td_fluid_set_log_function(int level, fluid_log_function_t fun, void *data);

#endif
