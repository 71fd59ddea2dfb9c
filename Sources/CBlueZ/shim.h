#ifndef BEACONBRIDGE_CBLUEZ_SHIM_H
#define BEACONBRIDGE_CBLUEZ_SHIM_H
// libbluetooth (BlueZ) headers. Helpers here are only for what Swift cannot import (macros, inline bit ops).
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/ioctl.h>
#include <string.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <bluetooth/bluetooth.h>
#include <bluetooth/hci.h>
#include <bluetooth/hci_lib.h>
#include <bluetooth/l2cap.h>

/// ioctl(ctl, HCIDEVUP, dev_id): power the adapter on (needs CAP_NET_ADMIN).
static inline int bb_hci_dev_up(int ctl, int dev_id) { return ioctl(ctl, HCIDEVUP, dev_id); }

/// ioctl(ctl, HCIDEVDOWN, dev_id): power the adapter off (needs CAP_NET_ADMIN).
static inline int bb_hci_dev_down(int ctl, int dev_id) { return ioctl(ctl, HCIDEVDOWN, dev_id); }

/// ioctl(ctl, HCIGETDEVINFO, info) with info->dev_id set by the caller.
static inline int bb_hci_dev_info(int ctl, struct hci_dev_info *info) {
    return ioctl(ctl, HCIGETDEVINFO, (void *)info);
}

/// ioctl(ctl, HCIGETDEVLIST): writes up to `max` adapter ids to `ids`; returns their count or -1 (errno).
static inline int bb_hci_dev_ids(int ctl, uint16_t *ids, int max) {
    if (max <= 0 || max > HCI_MAX_DEV) { errno = EINVAL; return -1; }
    struct hci_dev_list_req *list = calloc(1, sizeof(*list) + (size_t)max * sizeof(struct hci_dev_req));
    if (!list) { errno = ENOMEM; return -1; }
    list->dev_num = (uint16_t)max;
    if (ioctl(ctl, HCIGETDEVLIST, (void *)list) < 0) { int saved = errno; free(list); errno = saved; return -1; }
    int count = list->dev_num;
    for (int i = 0; i < count; i++) ids[i] = list->dev_req[i].dev_id;
    free(list);
    return count;
}

/// One datagram of bb_recvmmsg: the layout of `struct mmsghdr`, which glibc declares only with _GNU_SOURCE.
struct bb_mmsghdr {
    struct msghdr msg_hdr;
    unsigned int msg_len;
};

/// recvmmsg(fd, messages, count, flags, NULL): up to `count` datagrams in one system call; returns how many
/// were received, or -1 (errno). Through syscall(2), since glibc declares recvmmsg only with _GNU_SOURCE.
static inline int bb_recvmmsg(int fd, struct bb_mmsghdr *messages, unsigned int count, int flags) {
    return (int)syscall(SYS_recvmmsg, fd, messages, count, flags, (void *)0);
}

/// SO_TIMESTAMP (also the SCM_TIMESTAMP control message type), whose value glibc picks by the size of time_t.
static inline int bb_so_timestamp(void) { return SO_TIMESTAMP; }

/// The receive time the kernel put into a received message's control data (a `struct timeval` in a control
/// message of `level` and `type`: SOL_HCI/HCI_CMSG_TSTAMP, SOL_SOCKET/SCM_TIMESTAMP), in seconds since the epoch;
/// 0 when there is none. Through the CMSG_* macros, which Swift cannot import.
static inline double bb_cmsg_timestamp(struct msghdr *msg, int level, int type) {
    for (struct cmsghdr *c = CMSG_FIRSTHDR(msg); c != NULL; c = CMSG_NXTHDR(msg, c)) {
        if (c->cmsg_level == level && c->cmsg_type == type && c->cmsg_len >= CMSG_LEN(sizeof(struct timeval))) {
            struct timeval tv;
            memcpy(&tv, CMSG_DATA(c), sizeof tv);
            return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
        }
    }
    return 0;
}

/// Bytes of control data for one message with one `struct timeval` (CMSG_SPACE).
static inline unsigned int bb_cmsg_timestamp_space(void) { return (unsigned int)CMSG_SPACE(sizeof(struct timeval)); }

/// True when the adapter's HCI_UP flag is set in hci_dev_info.flags.
static inline int bb_hci_dev_is_up(const struct hci_dev_info *info) { return hci_test_bit(HCI_UP, (void *)&info->flags) != 0; }
#endif
