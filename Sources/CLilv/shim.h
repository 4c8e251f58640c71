#ifndef TAPEDECK_CLILV_SHIM_H
#define TAPEDECK_CLILV_SHIM_H
// lilv: discovers installed LV2 plugins, reads their Turtle descriptions, instantiates them,
// and saves and restores their state.
#include <lilv/lilv.h>
#endif
