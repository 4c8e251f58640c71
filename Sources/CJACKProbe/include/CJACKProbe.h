#ifndef TAPEDECK_CJACKPROBE_H
#define TAPEDECK_CJACKPROBE_H
#include <stdint.h>
/* Test-only JACK clients (never linked into the app): a generator and a recorder that know
   JACK's transport frame of every sample they play or hear, so tests can check Tapedeck's
   audio against JACK's clock to the frame. */
typedef struct td_jack_probe td_jack_probe;

/* Opens and activates a client `name` on the running server (JACK_DEFAULT_SERVER), with
   `outputs` ports out_1… and `inputs` ports in_1…. Returns NULL when no server answers.
   Outputs play a cosine of `tone_hz` at `tone_amp` from the sample the rolling transport
   reaches `onset_frame` on (silence before it, and while the transport stands).
   Inputs are kept from the moment the client runs, up to `capacity` frames: every sample with
   the transport frame it was heard at (-1 while the transport was not rolling). */
td_jack_probe *td_jack_probe_open(const char *name, int inputs, int outputs, double tone_hz, float tone_amp,
                                  int64_t onset_frame, int64_t capacity);
/* Frames kept so far. */
int64_t td_jack_probe_count(td_jack_probe *probe);
/* The samples input `input` (0-based) kept, `td_jack_probe_count` of them. */
const float *td_jack_probe_samples(td_jack_probe *probe, int input);
/* The transport frame of each kept sample (-1: the transport was not rolling). */
const int64_t *td_jack_probe_frames(td_jack_probe *probe);
/* The client's full port name `out_N`/`in_N` ("NAME:out_1"), for connecting. */
const char *td_jack_probe_client_name(td_jack_probe *probe);
/* Connects `source` to `destination` (full port names); 0 on success. */
int td_jack_probe_connect(td_jack_probe *probe, const char *source, const char *destination);
/* Deactivates and closes the client, frees everything. */
void td_jack_probe_close(td_jack_probe *probe);
#endif
