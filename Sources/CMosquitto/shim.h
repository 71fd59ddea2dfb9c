#ifndef BEACONBRIDGE_CMOSQUITTO_SHIM_H
#define BEACONBRIDGE_CMOSQUITTO_SHIM_H
#include <mosquitto.h>
#include <mqtt_protocol.h>
#include <stddef.h>
#include <sys/socket.h>
#include <linux/tcp.h>

/// Bytes the kernel has received on TCP socket `fd` since it connected (TCP_INFO tcpi_bytes_received,
/// Linux 4.1 and later), or -1 when unknown. The MQTT client bounds incoming packets with it: libmosquitto
/// has no limit of its own for what a broker sends. 6 is IPPROTO_TCP (SOL_TCP).
static inline long long beaconbridge_tcp_bytes_received(int fd) {
    struct tcp_info info;
    socklen_t length = sizeof(info);
    if (fd < 0 || getsockopt(fd, 6, TCP_INFO, &info, &length) != 0) return -1;
    if (length < offsetof(struct tcp_info, tcpi_bytes_received) + sizeof(info.tcpi_bytes_received)) return -1;
    return (long long)info.tcpi_bytes_received;
}
#endif
