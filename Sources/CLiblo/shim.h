#ifndef TAPEDECK_CLIBLO_SHIM_H
#define TAPEDECK_CLIBLO_SHIM_H
#include <lo/lo.h>
#endif
