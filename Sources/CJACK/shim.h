#ifndef TAPEDECK_CJACK_SHIM_H
#define TAPEDECK_CJACK_SHIM_H
#include <jack/jack.h>
#include <jack/midiport.h>

/* jack_client_open is variadic, which Swift cannot call. */
static inline jack_client_t *td_jack_client_open(const char *name, jack_options_t options, jack_status_t *status) {
    return jack_client_open(name, options, status);
}
#endif
