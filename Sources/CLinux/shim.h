#ifndef BEACONBRIDGE_CLINUX_SHIM_H
#define BEACONBRIDGE_CLINUX_SHIM_H
// glibc calls that Swift's Glibc module does not show: pipe2 and accept4 are declared only under _GNU_SOURCE,
// posix_spawn_file_actions_addclosefrom_np (glibc 2.34; Debian 12 has 2.36) is not imported either. Declared
// here as glibc declares them, each behind a prefixed static inline wrapper; nothing else belongs here.
#include <fcntl.h>
#include <spawn.h>
#include <sys/socket.h>
#include <unistd.h>

#ifndef __USE_GNU
extern int pipe2(int fds[2], int flags);
extern int accept4(int fd, struct sockaddr *address, socklen_t *length, int flags);
#endif
extern int posix_spawn_file_actions_addclosefrom_np(posix_spawn_file_actions_t *actions, int from);

/// pipe2(fds, flags): a pipe whose ends get `flags` (O_CLOEXEC, O_NONBLOCK) atomically, with no window in
/// which a child spawned by another thread inherits them.
static inline int bb_pipe2(int fds[2], int flags) { return pipe2(fds, flags); }

/// accept4(fd, address, length, flags): an accepted socket with SOCK_CLOEXEC / SOCK_NONBLOCK set atomically.
static inline int bb_accept4(int fd, struct sockaddr *address, socklen_t *length, int flags) {
    return accept4(fd, address, length, flags);
}

/// posix_spawn_file_actions_addclosefrom_np(actions, from): the child closes every descriptor >= `from`
/// after the earlier file actions ran.
static inline int bb_spawn_addclosefrom(posix_spawn_file_actions_t *actions, int from) {
    return posix_spawn_file_actions_addclosefrom_np(actions, from);
}

#endif
