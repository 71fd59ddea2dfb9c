#ifndef BEACONBRIDGE_CYAML_SHIM_H
#define BEACONBRIDGE_CYAML_SHIM_H
#include <yaml.h>
#endif
