#ifndef TAPEDECK_CALSA_SHIM_H
#define TAPEDECK_CALSA_SHIM_H
#include <alsa/asoundlib.h>
#endif
