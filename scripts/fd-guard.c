// A close(2) wrapper for the Swift suites (scripts/swift-tests.sh preloads it): records every close() that
// fails with EBADF in the test process or the gateway binary, with a backtrace, to FD_GUARD_DIR/PID.log.
// A descriptor closed twice is the bug it points at: all tests share one process, and between the two closes the
// number is often handed to another test's socket, which the second close then takes away (session 20: a test
// client closed at its end and at deinit broke MQTT subscriptions, HCI feeds and GATT links of other tests now
// and then). Other programs (bash closes descriptors it never opened) are left alone.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int (*real_close)(int);
static int watched = -1;
static char exe[4096];

static int is_watched(void) {
    if (watched < 0) {
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        exe[n > 0 ? n : 0] = 0;
        const char *base = strrchr(exe, '/');
        base = base ? base + 1 : exe;
        watched = strstr(base, ".xctest") != NULL || strcmp(base, "beaconbridge") == 0;
    }
    return watched;
}

int close(int fd) {
    if (!real_close) real_close = (int (*)(int))dlsym(RTLD_NEXT, "close");
    int rc = real_close(fd);
    if (rc == 0 || errno != EBADF || fd < 0) return rc;
    int saved = errno;
    const char *dir = getenv("FD_GUARD_DIR");
    if (dir && is_watched()) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%d.log", dir, (int)getpid());
        int out = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (out >= 0) {
            dprintf(out, "close(%d) failed with EBADF in %s\n", fd, exe);
            void *frames[48];
            backtrace_symbols_fd(frames, backtrace(frames, 48), out);
            dprintf(out, "--\n");
            real_close(out);
        }
    }
    errno = saved;
    return rc;
}
