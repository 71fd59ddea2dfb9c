#ifndef BEACONBRIDGE_CMOSQUITTO_SHIM_H
#define BEACONBRIDGE_CMOSQUITTO_SHIM_H
#include <mosquitto.h>
#include <mqtt_protocol.h>
#include <string.h>
#include <sys/socket.h>

/// Bytes the kernel has received on TCP socket `fd` since it connected, or -1 when unknown. It is
/// `tcpi_bytes_received` of Linux's `struct tcp_info` (TCP_INFO, Linux 4.1 and later): the u64 at offset 128
/// of a struct that only ever grows at its end. Read into a plain buffer, because glibc's `struct tcp_info`
/// stops before that field and <linux/tcp.h> clashes with it across modules. 6 is IPPROTO_TCP, 11 TCP_INFO.
/// The MQTT client bounds incoming packets with it: libmosquitto has no limit of its own for what a broker sends.
static inline long long beaconbridge_tcp_bytes_received(int fd) {
    unsigned char info[256];
    socklen_t length = sizeof(info);
    unsigned long long received = 0;
    if (fd < 0 || getsockopt(fd, 6, 11, info, &length) != 0 || length < 136) return -1;
    memcpy(&received, info + 128, sizeof(received));
    return (long long)received;
}

/// setsockopt(fd, IPPROTO_TCP, TCP_CORK, on): while corked, the kernel holds partial segments back, so packets
/// written one by one leave together when the cork is taken out (which sends at once). 0, or -1 (errno).
static inline int beaconbridge_tcp_cork(int fd, int on) {
    return setsockopt(fd, 6, 3, &on, sizeof(on));
}
#endif
