#ifndef TAPEDECK_CJACKPROBE_H
#define TAPEDECK_CJACKPROBE_H
#include <stdint.h>
/* JACK clients for the tests and `bench jack` (the app itself never opens one): a generator
   and a recorder that know JACK's transport frame of every sample they play or hear, so
   Tapedeck's audio can be checked against JACK's clock to the frame. */
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
/* The JACK frame time (jack_last_frame_time + offset) of each kept sample. */
const int64_t *td_jack_probe_clock(td_jack_probe *probe);
/* The JACK frame time of the cycle running now (jack_frame_time). */
int64_t td_jack_probe_now(td_jack_probe *probe);
/* The cycles the outputs played (up to 65536): each one's frame time and the transport frame
   its tone was read for (-1: the transport stood). */
int64_t td_jack_probe_played_count(td_jack_probe *probe);
const int64_t *td_jack_probe_played_clock(td_jack_probe *probe);
const int64_t *td_jack_probe_played_frame(td_jack_probe *probe);
/* Every client also has a MIDI output `midi_out` and a MIDI input `midi_in`.
   Sends a three-byte (or two-byte, `size`) message on midi_out at JACK frame time `frame`
   (in the cycle holding it; at the cycle's first frame when already past). Messages are sent
   in the order they are scheduled; at most 4096. Returns 0, or -1 when full. */
int td_jack_probe_send(td_jack_probe *probe, int64_t frame, uint8_t status, uint8_t data1, uint8_t data2, int size);
/* Messages heard on midi_in so far (at most 4096), and each one's JACK frame time and bytes
   (status << 16 | data1 << 8 | data2). */
int64_t td_jack_probe_midi_count(td_jack_probe *probe);
const int64_t *td_jack_probe_midi_frames(td_jack_probe *probe);
const uint32_t *td_jack_probe_midi_messages(td_jack_probe *probe);
/* Deactivates and closes the client, frees everything. */
void td_jack_probe_close(td_jack_probe *probe);

/* A loopback cable: whatever reaches NAME:in_K comes back out of NAME:out_K `delay_frames`
   later (counted in the frames it processes). It stands for a sound card with a cable from
   its output to its input, as JACK's latency API describes one: its ports are terminal, and
   it reports on its inputs' playback side the latency it knows — the graph's own period (a
   loop through another client always costs one cycle, whichever runs first, as a card's
   buffering costs periods) and, when `reports`, `delay_frames` too (a driver that knows its
   converters); without, it keeps them to itself, as the converters, cables and USB delays no
   driver reports, which only `calibrate` can measure. With `sine_hz` > 0 it is a source
   instead: out_K plays a cosine of `sine_hz` at 0.25 by JACK's frame time, so the phase of
   every sample a recorder keeps tells the device time it belongs to. NULL when it cannot open. */
typedef struct td_jack_loop td_jack_loop;
td_jack_loop *td_jack_loop_open(const char *name, int channels, long delay_frames, int reports, double sine_hz);
/* After a buffer-size change, asks JACK to recompute the latencies it reports (call it now
   and then from an ordinary thread; it does nothing otherwise). */
void td_jack_loop_service(td_jack_loop *loop);
/* How many xruns the server has told this client of (any client's, as JACK tells them all). */
int td_jack_loop_xruns(td_jack_loop *loop);
/* JACK's frame time when xrun `index` (0-based) was told: at or after the cycle that was late
   (the server notifies after it finds one). 0, or -1 when no longer kept (the last 1024 are). */
int td_jack_loop_xrun_frame(td_jack_loop *loop, int index, uint32_t *frame);
/* The frames of JACK's frame time in cycles the server did not run it for, since it opened:
   a sine played nothing there; a cable neither heard nor played them (what was in its line
   then comes out that much later by frame time). */
long td_jack_loop_skipped_frames(td_jack_loop *loop);
/* How many spans of frame time it was not run for so far, and span `index`'s frames
   [from, to) of JACK's frame time (0, or -1 when no longer kept: the last 1024 are). */
long td_jack_loop_skipped_spans(td_jack_loop *loop);
int td_jack_loop_skipped_span(td_jack_loop *loop, long index, uint32_t *from, uint32_t *to);
/* The frame time of the last cycle it ran (jack_last_frame_time) and CLOCK_MONOTONIC's
   microseconds when that cycle ran it: 0, or -1 before its first cycle. */
int td_jack_loop_clock(td_jack_loop *loop, uint32_t *frame, uint64_t *microseconds);
void td_jack_loop_close(td_jack_loop *loop);
/* Makes it a slow-sync client that never says it is ready: JACK's transport, asked to roll,
   stays "starting" until the server's sync timeout (10 s on jackd2 1.9.21, 5 s on
   PipeWire). 0 when set. */
int td_jack_loop_never_ready(td_jack_loop *loop);
#endif
