// vhci-beacon: a minimal LE-only Bluetooth controller on /dev/vhci for the e2e guest (docs/e2e.md, scenario
// `teach`). BlueZ's btvirt reports RSSI 127 ("not available"), so nothing that decides by level (a region
// teach, region levels) can be shown through the kernel with it. This controller answers the Linux kernel's
// init sequence (net/bluetooth/hci_sync.c: hci_init1..4 and the LE stages) as an LE-only controller and, while
// the host scans (LE Set Scan Enable, or LE Set Extended Scan Enable with -x), sends LE Advertising Reports
// (LE Extended Advertising Reports) of one advertiser with the RSSI it is told, so the reports travel the real
// path: vhci -> the kernel's HCI core -> a raw HCI socket.
//
// Usage: vhci-beacon [-c CONTROL] [-a ADDR] [-d HEX] [-r RATE] [-i RSSI] [-t SECONDS] [-x] [-v]
//   -c CONTROL  control input, one command a line (default stdin; a FIFO is opened read-write so writers
//               may come and go):  rssi N (-127..20) | jitter N (0..10 dB, uniform +-N) | stop | go | quit
//   -a ADDR     the advertiser's public address (default 00:AA:BE:AC:00:01)
//   -d HEX      its advertising data, at most 31 bytes (default the e2e iBeacon: E2C56DB5-... major 1 minor 2)
//   -r RATE     reports a second while scanning, 1..50 (default 10)
//   -i RSSI     the first RSSI (default -60)
//   -t SECONDS  lifetime, 1..3600 (default 600): then it exits 0 (the controller disappears with it)
//   -x          offer extended scanning (commands and the LE Extended Advertising feature)
//   -v          log every command on stderr
// Prints `vhci-beacon: hciN` on stdout once the kernel registered the controller.
// Exit: 0 lifetime over or `quit`, 64 usage, 69 /dev/vhci unavailable, 74 I/O error on /dev/vhci.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { PKT_COMMAND = 0x01, PKT_EVENT = 0x04, PKT_VENDOR = 0xff };
enum { EVT_COMMAND_COMPLETE = 0x0e, EVT_LE_META = 0x3e };
enum { STATUS_OK = 0x00, STATUS_UNKNOWN_COMMAND = 0x01 };

static struct {
    uint8_t address[6];        // advertiser, little-endian as on the air
    uint8_t data[31];
    size_t data_len;
    int rate, lifetime, verbose, extended_offered;
    int rssi, jitter, running;  // from the control input
    int scanning;               // 0 off, 1 legacy, 2 extended: what the host enabled
} beacon = {
    .address = {0x01, 0x00, 0xac, 0xbe, 0xaa, 0x00},
    .rate = 10, .lifetime = 600, .rssi = -60, .running = 1,
};
static int vhci = -1;
static unsigned long reports_sent;

static void say(const char *format, ...) {
    va_list args;
    va_start(args, format);
    fputs("vhci-beacon: ", stderr);
    vfprintf(stderr, format, args);
    fputc('\n', stderr);
    va_end(args);
}

static void usage(const char *message) {
    say("%s", message);
    fprintf(stderr, "usage: vhci-beacon [-c CONTROL] [-a ADDR] [-d HEX] [-r RATE] [-i RSSI] [-t SECONDS] [-x] [-v]\n");
    exit(64);
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

// Parses a whole decimal integer in [low, high]; returns 0 when it is not one.
static int parse_int(const char *text, long low, long high, int *out) {
    char *end;
    errno = 0;
    long value = strtol(text, &end, 10);
    if (errno || end == text || *end || value < low || value > high) return 0;
    *out = (int)value;
    return 1;
}

static int parse_address(const char *text, uint8_t out[6]) {
    unsigned b[6];
    char tail;
    if (sscanf(text, "%2x:%2x:%2x:%2x:%2x:%2x%c", &b[5], &b[4], &b[3], &b[2], &b[1], &b[0], &tail) != 6) return 0;
    for (int i = 0; i < 6; i++) out[i] = (uint8_t)b[i];
    return 1;
}

static int parse_hex(const char *text, uint8_t *out, size_t capacity, size_t *length) {
    size_t n = strlen(text);
    if (n == 0 || n % 2 || n / 2 > capacity) return 0;
    for (size_t i = 0; i < n / 2; i++) {
        unsigned byte;
        if (sscanf(text + 2 * i, "%2x", &byte) != 1) return 0;
        out[i] = (uint8_t)byte;
    }
    *length = n / 2;
    return 1;
}

// Writes one packet to /dev/vhci. A host that is down refuses events (ENXIO): then it is not scanning either.
static int send_packet(const uint8_t *packet, size_t length) {
    ssize_t written;
    do { written = write(vhci, packet, length); } while (written < 0 && errno == EINTR);
    if (written == (ssize_t)length) return 1;
    if (written < 0 && errno == ENXIO) {
        if (beacon.scanning) say("the host is down: scanning off");
        beacon.scanning = 0;
        return 0;
    }
    say("write to /dev/vhci failed: %s", written < 0 ? strerror(errno) : "short write");
    exit(74);
}

static void command_complete(uint16_t opcode, const uint8_t *parameters, size_t length) {
    uint8_t packet[3 + 3 + 255];
    packet[0] = PKT_EVENT;
    packet[1] = EVT_COMMAND_COMPLETE;
    packet[2] = (uint8_t)(3 + length);
    packet[3] = 1;  // Num_HCI_Command_Packets: the host may send the next one
    packet[4] = opcode & 0xff;
    packet[5] = opcode >> 8;
    memcpy(packet + 6, parameters, length);
    send_packet(packet, 6 + length);
}

static void complete_status(uint16_t opcode, uint8_t status) { command_complete(opcode, &status, 1); }

// Read Local Supported Commands: octet and bit of each command this controller answers (Core 5.3, Vol 4,
// Part E, 6.27). The kernel sends an optional init command only when its bit is set.
static void supported_commands(uint8_t commands[64]) {
    static const uint8_t bits[][2] = {
        {5, 6}, {5, 7},                  // Set Event Mask, Reset
        {14, 3}, {14, 5}, {15, 1},       // Read Local Version, Read Local Supported Features, Read BD_ADDR
        {25, 0}, {25, 1}, {25, 2},       // LE Set Event Mask, LE Read Buffer Size, LE Read Local Features
        {25, 4}, {25, 5}, {25, 6}, {25, 7},  // LE Set Random Address, Adv Parameters, Adv TX Power, Adv Data
        {26, 0}, {26, 1}, {26, 2}, {26, 3},  // LE Set Scan Response Data, Adv Enable, Scan Parameters, Scan Enable
        {26, 6}, {26, 7},                // LE Read / Clear Accept List
        {28, 3},                         // LE Read Supported States
    };
    memset(commands, 0, 64);
    for (size_t i = 0; i < sizeof bits / sizeof bits[0]; i++) commands[bits[i][0]] |= (uint8_t)(1u << bits[i][1]);
    if (beacon.extended_offered) {
        commands[36] |= 0x40;            // LE Read Number of Supported Advertising Sets
        commands[37] |= 0x20 | 0x40;     // LE Set Extended Scan Parameters, LE Set Extended Scan Enable
    }
}

static void handle_command(uint16_t opcode, const uint8_t *parameters, size_t length) {
    uint8_t reply[1 + 64];
    memset(reply, 0, sizeof reply);  // reply[0]: status success
    if (beacon.verbose) say("command 0x%04x (%zu bytes)", opcode, length);
    switch (opcode) {
    case 0x0c03:  // Reset
        beacon.scanning = 0;
        complete_status(opcode, STATUS_OK);
        return;
    case 0x0c01: case 0x2001:  // Set Event Mask, LE Set Event Mask
    case 0x2005: case 0x2006: case 0x2008: case 0x2009: case 0x200a:  // advertising: accepted, not performed
    case 0x2010:  // LE Clear Accept List
        complete_status(opcode, STATUS_OK);
        return;
    case 0x1001:  // Read Local Version: HCI 5.0, revision, LMP 5.0, company 0x05F1 (Linux Foundation)
        reply[1] = 0x09; reply[2] = 0x01; reply[4] = 0x09; reply[5] = 0xf1; reply[6] = 0x05; reply[7] = 0x01;
        command_complete(opcode, reply, 9);
        return;
    case 0x1002:  // Read Local Supported Commands
        supported_commands(reply + 1);
        command_complete(opcode, reply, 65);
        return;
    case 0x1003:  // Read Local Supported Features: octet 4 bit 5 BR/EDR Not Supported, bit 6 LE Supported
        reply[1 + 4] = 0x20 | 0x40;
        command_complete(opcode, reply, 9);
        return;
    case 0x1009:  // Read BD_ADDR: the controller's own (not the advertiser's)
        memcpy(reply + 1, (const uint8_t[]){0x01, 0x00, 0xb0, 0xb0, 0xaa, 0x00}, 6);
        command_complete(opcode, reply, 7);
        return;
    case 0x2002:  // LE Read Buffer Size: 251-byte LE ACL packets, 8 of them
        reply[1] = 251; reply[3] = 8;
        command_complete(opcode, reply, 4);
        return;
    case 0x2003:  // LE Read Local Supported Features: bit 12 LE Extended Advertising when offered
        if (beacon.extended_offered) reply[1 + 1] = 0x10;
        command_complete(opcode, reply, 9);
        return;
    case 0x2007:  // LE Read Advertising Channel TX Power: 0 dBm
        command_complete(opcode, reply, 2);
        return;
    case 0x200b:  // LE Set Scan Parameters: not while scanning (Command Disallowed)
    case 0x2041:  // LE Set Extended Scan Parameters
        complete_status(opcode, beacon.scanning ? 0x0c : STATUS_OK);
        return;
    case 0x200c:  // LE Set Scan Enable: LE_Scan_Enable, Filter_Duplicates
    case 0x2042:  // LE Set Extended Scan Enable: Enable, Filter_Duplicates, Duration, Period
        if (length < (opcode == 0x200c ? 2u : 6u) || parameters[0] > 1) {
            complete_status(opcode, 0x12);  // Invalid HCI Command Parameters
            return;
        }
        if (opcode == 0x2042 && !beacon.extended_offered) break;
        {
            int before = beacon.scanning;
            beacon.scanning = parameters[0] ? (opcode == 0x200c ? 1 : 2) : 0;
            if (before != beacon.scanning)
                say("scanning %s", beacon.scanning == 0 ? "off" : beacon.scanning == 1 ? "on (legacy)" : "on (extended)");
        }
        complete_status(opcode, STATUS_OK);
        return;
    case 0x200f:  // LE Read Accept List Size
        reply[1] = 8;
        command_complete(opcode, reply, 2);
        return;
    case 0x201c:  // LE Read Supported States
        memset(reply + 1, 0xff, 5);
        reply[6] = 0x03;
        command_complete(opcode, reply, 9);
        return;
    case 0x203b:  // LE Read Number of Supported Advertising Sets
        if (!beacon.extended_offered) break;
        reply[1] = 1;
        command_complete(opcode, reply, 2);
        return;
    }
    say("unknown command 0x%04x: Unknown HCI Command", opcode);
    complete_status(opcode, STATUS_UNKNOWN_COMMAND);
}

static int current_rssi(void) {
    int rssi = beacon.rssi;
    if (beacon.jitter) rssi += rand() % (2 * beacon.jitter + 1) - beacon.jitter;
    return rssi < -127 ? -127 : rssi > 20 ? 20 : rssi;
}

// One LE Advertising Report (subevent 0x02) or LE Extended Advertising Report (0x0D) of the advertiser.
static void send_report(void) {
    uint8_t packet[3 + 2 + 24 + 31];
    size_t n = 0;
    int8_t rssi = (int8_t)current_rssi();
    packet[n++] = PKT_EVENT;
    packet[n++] = EVT_LE_META;
    packet[n++] = 0;  // length, set below
    if (beacon.scanning == 1) {
        packet[n++] = 0x02;
        packet[n++] = 1;     // Num_Reports
        packet[n++] = 0x03;  // ADV_NONCONN_IND
        packet[n++] = 0x00;  // public address
        memcpy(packet + n, beacon.address, 6); n += 6;
        packet[n++] = (uint8_t)beacon.data_len;
        memcpy(packet + n, beacon.data, beacon.data_len); n += beacon.data_len;
        packet[n++] = (uint8_t)rssi;
    } else {
        packet[n++] = 0x0d;
        packet[n++] = 1;     // Num_Reports
        packet[n++] = 0x10;  // Event_Type: legacy PDU, ADV_NONCONN_IND, complete
        packet[n++] = 0x00;
        packet[n++] = 0x00;  // public address
        memcpy(packet + n, beacon.address, 6); n += 6;
        packet[n++] = 0x01;  // Primary_PHY LE 1M
        packet[n++] = 0x00;  // Secondary_PHY none
        packet[n++] = 0xff;  // Advertising_SID none
        packet[n++] = 0x7f;  // TX_Power not available
        packet[n++] = (uint8_t)rssi;
        packet[n++] = 0x00;
        packet[n++] = 0x00;  // Periodic_Advertising_Interval none
        packet[n++] = 0x00;  // Direct_Address_Type
        memset(packet + n, 0, 6); n += 6;
        packet[n++] = (uint8_t)beacon.data_len;
        memcpy(packet + n, beacon.data, beacon.data_len); n += beacon.data_len;
    }
    packet[2] = (uint8_t)(n - 3);
    if (send_packet(packet, n)) reports_sent++;
}

// One control line; returns 0 for `quit`.
static int control(char *line) {
    int value;
    line[strcspn(line, "\r\n")] = 0;
    if (strncmp(line, "rssi ", 5) == 0 && parse_int(line + 5, -127, 20, &value)) {
        beacon.rssi = value;
    } else if (strncmp(line, "jitter ", 7) == 0 && parse_int(line + 7, 0, 10, &value)) {
        beacon.jitter = value;
    } else if (strcmp(line, "stop") == 0) {
        beacon.running = 0;
    } else if (strcmp(line, "go") == 0) {
        beacon.running = 1;
    } else if (strcmp(line, "quit") == 0) {
        return 0;
    } else if (*line) {
        say("ignored control line `%.40s` (rssi -127..20 | jitter 0..10 | stop | go | quit)", line);
        return 1;
    } else {
        return 1;
    }
    say("%s: rssi %d jitter %d, %s, %lu reports sent", line, beacon.rssi, beacon.jitter,
        beacon.running ? "sending" : "stopped", reports_sent);
    return 1;
}

int main(int argc, char **argv) {
    const char *control_path = NULL;
    int option;
    static const char ibeacon[] = "0201061aff4c000215e2c56db5dffb48d2b060d0f5a71096e000010002c5";
    parse_hex(ibeacon, beacon.data, sizeof beacon.data, &beacon.data_len);
    while ((option = getopt(argc, argv, "c:a:d:r:i:t:xv")) != -1) {
        switch (option) {
        case 'c': control_path = optarg; break;
        case 'a': if (!parse_address(optarg, beacon.address)) usage("-a needs an address like 00:AA:BE:AC:00:01"); break;
        case 'd': if (!parse_hex(optarg, beacon.data, sizeof beacon.data, &beacon.data_len)) usage("-d needs 1-31 bytes of hex"); break;
        case 'r': if (!parse_int(optarg, 1, 50, &beacon.rate)) usage("-r needs 1-50 reports a second"); break;
        case 'i': if (!parse_int(optarg, -127, 20, &beacon.rssi)) usage("-i needs an RSSI of -127..20 dBm"); break;
        case 't': if (!parse_int(optarg, 1, 3600, &beacon.lifetime)) usage("-t needs 1-3600 seconds"); break;
        case 'x': beacon.extended_offered = 1; break;
        case 'v': beacon.verbose = 1; break;
        default: usage("unknown option");
        }
    }
    if (optind != argc) usage("no arguments besides the options");
    int input = STDIN_FILENO;
    if (control_path && (input = open(control_path, O_RDWR | O_NONBLOCK | O_CLOEXEC)) < 0) {
        say("cannot open the control input %s: %s", control_path, strerror(errno));
        return 64;
    }
    if ((vhci = open("/dev/vhci", O_RDWR | O_CLOEXEC)) < 0) {
        say("cannot open /dev/vhci: %s (is hci_vhci loaded, are we root?)", strerror(errno));
        return 69;
    }
    // Vendor packet 0xff: create a controller; 0x00 = primary, configured, not raw.
    if (write(vhci, (const uint8_t[]){PKT_VENDOR, 0x00}, 2) != 2) {
        say("creating the controller on /dev/vhci failed: %s", strerror(errno));
        return 74;
    }
    srand(1);
    const double start = now(), interval = 1.0 / beacon.rate;
    double next_report = start;
    char line[128];
    size_t line_len = 0;
    for (;;) {
        double t = now();
        if (t - start >= beacon.lifetime) {
            say("lifetime of %d s over, %lu reports sent: exiting", beacon.lifetime, reports_sent);
            return 0;
        }
        if (beacon.scanning && beacon.running && t >= next_report) {
            send_report();
            next_report += interval;
            if (next_report < t) next_report = t + interval;  // fell behind (a slow guest): no burst
            continue;
        }
        double wait = beacon.scanning && beacon.running ? next_report - t : 1.0;
        struct pollfd fds[2] = {{.fd = vhci, .events = POLLIN}, {.fd = input, .events = POLLIN}};
        int ready = poll(fds, input >= 0 ? 2 : 1, (int)(wait * 1000) + 1);
        if (ready < 0) {
            if (errno == EINTR) continue;
            say("poll failed: %s", strerror(errno));
            return 74;
        }
        if (fds[0].revents & (POLLERR | POLLHUP | POLLNVAL)) {
            say("/dev/vhci closed");
            return 74;
        }
        if (fds[0].revents & POLLIN) {
            uint8_t packet[2048];
            ssize_t n = read(vhci, packet, sizeof packet);
            if (n < 0 && errno != EINTR && errno != EAGAIN) {
                say("read from /dev/vhci failed: %s", strerror(errno));
                return 74;
            }
            if (n >= 4 && packet[0] == PKT_VENDOR) {
                printf("vhci-beacon: hci%u\n", packet[2] | packet[3] << 8);
                fflush(stdout);
            } else if (n >= 4 && packet[0] == PKT_COMMAND && (size_t)n >= 4u + packet[3]) {
                handle_command((uint16_t)(packet[1] | packet[2] << 8), packet + 4, packet[3]);
            } else if (n > 0 && packet[0] == PKT_COMMAND) {
                say("malformed command packet of %zd bytes ignored", n);
            }  // ACL, SCO and ISO data: nothing to do, there are no connections
        }
        if (input >= 0 && (fds[1].revents & (POLLIN | POLLHUP))) {
            ssize_t n = read(input, line + line_len, sizeof line - 1 - line_len);
            if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
                if (n < 0) say("control input: %s: ignoring it from now on", strerror(errno));
                input = -1;  // end of stdin: keep serving until the lifetime is over
                continue;
            }
            if (n < 0) continue;
            line_len += (size_t)n;
            line[line_len] = 0;
            char *newline;
            while ((newline = strchr(line, '\n')) != NULL) {
                *newline = 0;
                if (!control(line)) {
                    say("quit, %lu reports sent", reports_sent);
                    return 0;
                }
                line_len -= (size_t)(newline + 1 - line);
                memmove(line, newline + 1, line_len + 1);
            }
            if (line_len == sizeof line - 1) {
                say("control line longer than %zu bytes dropped", sizeof line - 2);
                line_len = 0;
            }
        }
    }
}
