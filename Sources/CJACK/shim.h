#ifndef TAPEDECK_CJACK_SHIM_H
#define TAPEDECK_CJACK_SHIM_H
#include <jack/jack.h>
#include <jack/midiport.h>
#include <jack/transport.h>

/* jack_client_open is variadic (the server name), which Swift cannot call; the server is
   chosen by JACK_DEFAULT_SERVER instead. */
static inline jack_client_t *td_jack_client_open(const char *name, jack_options_t options, jack_status_t *status) {
    return jack_client_open(name, options, status);
}

/* The port type of audio ports (a string macro). */
static inline const char *td_jack_audio_type(void) { return JACK_DEFAULT_AUDIO_TYPE; }
/* The port type of MIDI ports. */
static inline const char *td_jack_midi_type(void) { return JACK_DEFAULT_MIDI_TYPE; }

/* libjack prints its own errors ("Cannot connect to server socket …") on stderr; Tapedeck
   says the same in one line of its own, so they are dropped. */
static void td_jack_quiet(const char *message) { (void)message; }
static inline void td_jack_silence(void) {
    jack_set_error_function(td_jack_quiet);
    jack_set_info_function(td_jack_quiet);
}
#endif
