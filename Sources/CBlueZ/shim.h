#ifndef BEACONBRIDGE_CBLUEZ_SHIM_H
#define BEACONBRIDGE_CBLUEZ_SHIM_H
// libbluetooth (BlueZ) headers. Helpers here are only for what Swift cannot import (macros, inline bit ops).
#include <sys/socket.h>
#include <sys/ioctl.h>
#include <bluetooth/bluetooth.h>
#include <bluetooth/hci.h>
#include <bluetooth/hci_lib.h>
#endif
