# BeaconBridge end-to-end harness: host-side functions (sourced by scripts/e2e.sh).
# Everything it builds is cached under $E2E_CACHE; nothing outside the repository is written except apt installs.

E2E_PACKAGES="qemu-system-x86 busybox-static bluez bluez-test-tools mosquitto mosquitto-clients socat cpio xz-utils kmod gcc libc6-dev"
E2E_MODULES="bluetooth hci_vhci af_alg algif_hash algif_skcipher ecb cmac e1000"

e2e_log() { printf '[e2e %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
e2e_die() { e2e_log "ERROR: $*"; exit 1; }
e2e_now() { date +%s.%N; }
e2e_elapsed() { awk -v a="$1" -v b="$(e2e_now)" 'BEGIN { printf "%.1f", b - a }'; }

# Prints a reason and returns 1 when this machine cannot run QEMU at all (the only reason to skip).
e2e_can_run_qemu() {
    if [ "$(uname -m)" != x86_64 ]; then echo "host is $(uname -m), the harness boots an x86_64 guest"; return 1; fi
    if command -v qemu-system-x86_64 >/dev/null 2>&1; then return 0; fi
    if [ "$(id -u)" != 0 ] && ! command -v sudo >/dev/null 2>&1; then
        echo "qemu-system-x86_64 is not installed and neither root nor sudo is available to install it"; return 1
    fi
    if ! command -v apt-get >/dev/null 2>&1; then echo "qemu-system-x86_64 missing and no apt-get"; return 1; fi
    return 0
}

# Installs the Debian packages the harness needs (idempotent).
e2e_install_deps() {
    local missing="" p
    for p in $E2E_PACKAGES; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
    done
    [ -z "$missing" ] && return 0
    e2e_log "installing:$missing"
    local sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
    $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq -o DPkg::Lock::Timeout=600 --no-install-recommends $missing >/dev/null \
        || return 1
}

# Fetches Debian's linux-image-amd64 of suite $E2E_KERNEL_SUITE (and the versioned image it depends on) into the
# cache, extracts vmlinuz, an uncompressed vmlinux (for PVH boot, ~6 s faster under TCG) and the modules the
# guest needs. The suite is the host's own (`host`, Debian 12: 6.1) or another Debian suite (`trixie`: 6.12),
# read through a private apt list directory in the cache: the host's apt sources are not touched.
# Sets E2E_KERNEL (file to boot), E2E_KVER and E2E_KROOT (the extracted package, modules under lib/modules).
e2e_fetch_kernel() {
    local suite="${E2E_KERNEL_SUITE:-host}"
    local dir="$E2E_CACHE/kernel"
    [ "$suite" = host ] || dir="$E2E_CACHE/kernel-$suite"
    mkdir -p "$dir"; chmod 0777 "$dir" 2>/dev/null || true
    if [ ! -f "$dir/ready" ]; then
        local apt=(apt-get)
        if [ "$suite" != host ]; then
            e2e_log "reading Debian $suite's package list (private to $dir/apt)"
            mkdir -p "$dir/apt/lists/partial" "$dir/apt/cache/archives/partial"
            echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian $suite main" \
                > "$dir/apt/sources.list"
            apt=(apt-get -o "Dir::Etc::SourceList=$dir/apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
                -o "Dir::State::Lists=$dir/apt/lists" -o "Dir::Cache=$dir/apt/cache" -o Debug::NoLocking=1)
            "${apt[@]}" update -q >/dev/null 2>&1 || return 1
        fi
        e2e_log "downloading linux-image-amd64 ($suite) from the Debian archive"
        ( cd "$dir" && rm -f ./*.deb && "${apt[@]}" download -q linux-image-amd64 >/dev/null 2>&1 ) || return 1
        local meta dep
        meta=$(ls "$dir"/linux-image-amd64_*.deb | head -1)
        dep=$(dpkg-deb -f "$meta" Depends | tr ',' '\n' | sed -n 's/^ *\(linux-image-[0-9][^ ]*\).*/\1/p' | head -1)
        [ -n "$dep" ] || { e2e_log "cannot find the versioned kernel package in $meta"; return 1; }
        ( cd "$dir" && "${apt[@]}" download -q "$dep" >/dev/null 2>&1 ) || return 1
        rm -rf "$dir/root" && mkdir -p "$dir/root"
        dpkg-deb -x "$(ls "$dir"/"$dep"_*.deb | head -1)" "$dir/root" || return 1
        # Debian 13 ships its modules under usr/lib (merged /usr): one path for depmod and the copies below.
        if [ ! -d "$dir/root/lib/modules" ] && [ -d "$dir/root/usr/lib/modules" ]; then ln -s usr/lib "$dir/root/lib"; fi
        E2E_KVER=$(ls "$dir/root/lib/modules" | head -1)
        depmod -b "$dir/root" "$E2E_KVER" || return 1
        cp "$dir/root/boot/vmlinuz-$E2E_KVER" "$dir/vmlinuz"
        # The bzImage carries an xz-compressed vmlinux (CONFIG_KERNEL_XZ); PVH boot needs the ELF.
        local offset
        offset=$(LC_ALL=C grep -obUaP '\xfd\x37\x7a\x58\x5a\x00' "$dir/vmlinuz" | head -1 | cut -d: -f1)
        # (xz stops after the first stream: feed it from a process substitution so tail's SIGPIPE is harmless.)
        if [ -n "$offset" ] && xz -dc --single-stream < <(tail -c +"$((offset + 1))" "$dir/vmlinuz") > "$dir/vmlinux" 2>/dev/null \
            && [ "$(head -c 4 "$dir/vmlinux" | od -An -c | tr -d ' ')" = "177ELF" ]; then
            :
        else
            rm -f "$dir/vmlinux"
        fi
        echo "$E2E_KVER" > "$dir/ready"
        rm -rf "$dir"/*.deb "$dir/apt"
    fi
    E2E_KVER=$(cat "$dir/ready")
    E2E_KERNEL="$dir/vmlinuz"
    if [ -f "$dir/vmlinux" ] && [ "${E2E_PVH:-1}" = 1 ]; then E2E_KERNEL="$dir/vmlinux"; fi
    E2E_KROOT="$dir/root"
}

# Modules in load order (dependencies first), paths relative to lib/modules/$KVER.
e2e_module_order() {
    local dep="$E2E_KROOT/lib/modules/$E2E_KVER/modules.dep" seen="" out=""
    _visit() {
        local rel="$1" line d
        case " $seen " in *" $rel "*) return ;; esac
        seen="$seen $rel"
        line=$(grep -m1 "^$rel:" "$dep" | cut -d: -f2)
        for d in $line; do _visit "$d"; done
        out="$out $rel"
    }
    local m rel
    for m in $E2E_MODULES; do
        rel=$(grep -m1 -E "/$m\.ko(\.[a-z]+)?:" "$dep" | cut -d: -f1)
        if [ -z "$rel" ] && grep -qE "/$m\.ko$" "$E2E_KROOT/lib/modules/$E2E_KVER/modules.builtin" 2>/dev/null; then
            continue  # built into this kernel (ecb in Debian 13's 6.12)
        fi
        [ -n "$rel" ] || { e2e_log "module $m not found in $E2E_KVER"; return 1; }
        _visit "$rel"
    done
    echo $out
}

# Copies an executable and its ldd closure into the root $1, keeping library paths.
e2e_copy_with_libs() {
    local root="$1" bin="$2" dest="${3:-$2}" lib
    mkdir -p "$root$(dirname "$dest")"
    cp -L "$bin" "$root$dest"
    for lib in $(ldd "$bin" | awk '/=>/ { print $3 } /^\t\// { print $1 }'); do
        [ -f "$lib" ] || continue
        [ -f "$root$lib" ] && continue
        mkdir -p "$root$(dirname "$lib")"
        cp -L "$lib" "$root$lib"
    done
}

# The base initramfs (busybox, modules, BlueZ tools, our vhci controller vhci-beacon, guest init): cached, rebuilt
# when an input changes. Sets E2E_BASE_CPIO.
e2e_build_base() {
    local here="$1"
    local key
    key=$( { echo "$E2E_KVER $E2E_MODULES"; md5sum /usr/bin/busybox /usr/bin/btvirt /usr/bin/hcitool /usr/bin/hciconfig /usr/bin/btmon \
        "$here/guest-init.sh" "$here/guest-lib.sh" "$here/host-lib.sh" "$here/vhci-beacon.c"; } | md5sum | cut -c1-16)
    E2E_BASE_CPIO="$E2E_CACHE/base-$key.cpio"
    [ -f "$E2E_BASE_CPIO" ] && return 0
    e2e_log "building the base initramfs"
    local root="$E2E_CACHE/base-root"
    rm -rf "$root" && mkdir -p "$root"/{bin,sbin,etc,proc,sys,dev,tmp,run,e2e,lib/modules}
    cp /usr/bin/busybox "$root/bin/busybox"
    local tool
    for tool in btvirt hcitool hciconfig btmon; do e2e_copy_with_libs "$root" "/usr/bin/$tool"; done
    # The LE controller with chosen RSSI (btvirt reports 127, "not available"); static, so it needs no libraries.
    gcc -static -O2 -Wall -Wextra -o "$root/usr/bin/vhci-beacon" "$here/vhci-beacon.c" \
        || { e2e_log "cannot compile $here/vhci-beacon.c (gcc and libc6-dev's static libc)"; return 1; }
    local order rel
    order=$(e2e_module_order) || return 1
    local name
    for rel in $order; do
        # busybox's insmod takes plain modules only: Debian 13's .ko.xz are unpacked here.
        name=$(basename "$rel" .xz)
        case "$rel" in
            *.xz) xz -dc "$E2E_KROOT/lib/modules/$E2E_KVER/$rel" > "$root/lib/modules/$name" || return 1 ;;
            *) cp "$E2E_KROOT/lib/modules/$E2E_KVER/$rel" "$root/lib/modules/$name" ;;
        esac
        echo "$name" >> "$root/lib/modules/load-order"
    done
    install -m 0755 "$here/guest-init.sh" "$root/init"
    install -m 0644 "$here/guest-lib.sh" "$root/e2e/guest-lib.sh"
    rm -f "$E2E_CACHE"/base-*.cpio
    ( cd "$root" && find . -print0 | cpio --null -o -H newc --quiet ) > "$E2E_BASE_CPIO.tmp" && mv "$E2E_BASE_CPIO.tmp" "$E2E_BASE_CPIO"
}

# Per-run overlay: the beaconbridge binary with its libraries (Swift runtime included) and the scenarios.
# Writes $2 (cpio). Appended to the base archive: the kernel unpacks concatenated archives in order.
e2e_build_overlay() {
    local bin="$1" out="$2" scenarios="$3" testpeer="${4:-}"
    local root="$E2E_RUN/overlay"
    rm -rf "$root" && mkdir -p "$root/usr/bin" "$root/e2e"
    e2e_copy_with_libs "$root" "$bin" /usr/bin/beaconbridge
    # The test GATT peripheral of the `gatt` scenario (test-only; never in the package).
    [ -z "$testpeer" ] || e2e_copy_with_libs "$root" "$testpeer" /usr/bin/beaconbridge-testpeer
    cp -r "$scenarios" "$root/e2e/scenarios"
    ( cd "$root" && find . -print0 | cpio --null -o -H newc --quiet ) > "$out"
}

# Chooses the accelerator: $E2E_ACCEL, else KVM when a probe boot under KVM reaches the guest's init (on some
# hosts /dev/kvm opens but the guest dies with "KVM internal error"), else TCG. The probe result is cached
# per host kernel. Sets E2E_ACCEL.
e2e_choose_accel() {
    local initrd="$1"
    [ -n "${E2E_ACCEL:-}" ] && return 0
    E2E_ACCEL=tcg
    [ -r /dev/kvm ] && [ -w /dev/kvm ] || return 0
    local probe="$E2E_CACHE/kvm-probe-$(uname -r)"
    if [ ! -f "$probe" ]; then
        e2e_log "probing KVM (one boot, at most 15 s; cached in $probe)"
        local saved_run="$E2E_RUN"; E2E_RUN="$E2E_RUN/kvm-probe"; mkdir -p "$E2E_RUN"
        E2E_ACCEL=kvm e2e_boot __probe "$initrd" 15 >/dev/null 2>&1
        if grep -q "E2E: init at uptime" "$E2E_RUN/console.log"; then echo kvm > "$probe"; else echo tcg > "$probe"; fi
        E2E_RUN="$saved_run"
    fi
    E2E_ACCEL=$(cat "$probe")
}

# Starts mosquitto on a loopback port ($1, or a free one) and a subscriber writing
# `<unix time> <topic> <payload>` lines to $E2E_RUN/mqtt.log (appending, so a restart keeps earlier lines).
# The subscriber has a persistent session (QoS 1), kept across a broker restart within a scenario.
# Sets E2E_BROKER_PORT, E2E_BROKER_PID, E2E_SUB_PID.
e2e_start_broker() {
    local port="${1:-}" tries=0 fixed="${1:-}"
    while :; do
        tries=$((tries + 1)); [ $tries -le 50 ] || { e2e_log "no free loopback port"; return 1; }
        [ -n "$fixed" ] || port=$((20000 + RANDOM % 30000))
        if [ -z "$fixed" ] && (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then continue; fi
        # Persistence keeps the test subscriber's session across a restart (broker-start on the same port), so
        # QoS 1 events the gateway sends before the subscriber is back are queued for it, not lost to the test.
        # A new scenario (no fixed port) starts from an empty store.
        [ -n "$fixed" ] || rm -f "$E2E_RUN/mosquitto.db"
        # (Run as this user: mosquitto started by root would switch to `mosquitto`, which cannot write here.)
        printf 'user %s\nlistener %s 127.0.0.1\nallow_anonymous true\npersistence true\npersistence_location %s/\n' \
            "$(id -un)" "$port" "$E2E_RUN" > "$E2E_RUN/mosquitto.conf"
        mosquitto -c "$E2E_RUN/mosquitto.conf" >> "$E2E_RUN/mosquitto.log" 2>&1 &
        E2E_BROKER_PID=$!
        local i
        for i in $(seq 1 50); do
            (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
            kill -0 "$E2E_BROKER_PID" 2>/dev/null || break
            sleep 0.1
        done
        if kill -0 "$E2E_BROKER_PID" 2>/dev/null; then break; fi
        [ -z "$fixed" ] || sleep 0.5
    done
    E2E_BROKER_PORT=$port
    mosquitto_sub -h 127.0.0.1 -p "$port" -c -i e2e-test-subscriber -q 1 -F '%U %t %p' -t '#' >> "$E2E_RUN/mqtt.log" 2>&1 &
    E2E_SUB_PID=$!
    # Wait until the subscriber receives (ready before the guest publishes anything).
    local probe="ready-$port-$RANDOM"
    for i in $(seq 1 50); do
        mosquitto_pub -h 127.0.0.1 -p "$port" -t e2e/probe -m "$probe" 2>/dev/null
        sleep 0.1
        grep -q "$probe" "$E2E_RUN/mqtt.log" 2>/dev/null && return 0
    done
    e2e_log "the test subscriber did not receive its probe message"
    return 1
}

e2e_stop_broker() {
    [ -n "${E2E_SUB_PID:-}" ] && kill "$E2E_SUB_PID" 2>/dev/null
    [ -n "${E2E_BROKER_PID:-}" ] && kill "$E2E_BROKER_PID" 2>/dev/null
    [ -n "${E2E_SUB_PID:-}${E2E_BROKER_PID:-}" ] && wait ${E2E_SUB_PID:-} ${E2E_BROKER_PID:-} 2>/dev/null
    E2E_SUB_PID=""; E2E_BROKER_PID=""
}

# Console directives a guest script can print to act on the host (handled while the guest runs):
#   E2E-HOST: broker-stop     stops the test broker (and its subscriber)
#   E2E-HOST: broker-start    starts it again on the same port
#   E2E-HOST: esphome-client ADDRESS   runs the scenario's client.py (aioesphomeapi) in the background against the
#                             forwarded ESPHome API port (e2e_esphome_forward) with the peripheral's ADDRESS
e2e_handle_directives() {
    local console="$1" line count=0
    while IFS= read -r line; do
        count=$((count + 1))
        [ "$count" -le "$E2E_DIRECTIVES_HANDLED" ] && continue
        E2E_DIRECTIVES_HANDLED=$count
        case "$line" in
            "E2E-HOST: broker-stop") e2e_log "guest asked: stop the broker"; e2e_stop_broker ;;
            "E2E-HOST: broker-start") e2e_log "guest asked: start the broker"; e2e_start_broker "$E2E_BROKER_PORT" ;;
            "E2E-HOST: esphome-client "*)
                e2e_log "guest asked: run the ESPHome client against 127.0.0.1:${E2E_ESPHOME_PORT:-?}"
                e2e_esphome_client "${line#E2E-HOST: esphome-client }" "$E2E_RUN/$scenario/esphome-client.log" & ;;
            *) e2e_log "unknown guest directive: $line" ;;
        esac
    done < <(tr -d '\r' < "$console" | grep '^E2E-HOST: ')
}

# Boots the guest for one scenario; console to $E2E_RUN/console.log. Returns the guest's E2E-EXIT status
# (or 124 on timeout, 125 when the guest printed none).
e2e_boot() {
    local scenario="$1" initrd="$2" timeout="${3:-120}"
    local accel="${E2E_ACCEL:-tcg}" console="$E2E_RUN/console.log"
    local accel_args=() a
    for a in ${accel//:/ }; do accel_args+=(-accel "$a"); done
    : > "$console"
    local net="user,id=n0,restrict=on"
    [ -n "${E2E_BROKER_PORT:-}" ] && net="$net,guestfwd=tcp:10.0.2.100:1883-cmd:socat - TCP:127.0.0.1:$E2E_BROKER_PORT"
    e2e_esphome_forward "$scenario"
    net="$net$E2E_ESPHOME_NET"
    qemu-system-x86_64 "${accel_args[@]}" -machine pc -cpu "${E2E_CPU:-max}" -m "${E2E_MEM:-1024}" -smp 1 \
        -nodefaults -display none -no-reboot -monitor none -serial "file:$console" \
        -kernel "$E2E_KERNEL" -initrd "$initrd" \
        -append "console=ttyS0 loglevel=4 panic=-1 rdinit=/init e2e.scenario=$scenario e2e.broker_port=${E2E_BROKER_PORT:-0}" \
        -netdev "$net" -device e1000,netdev=n0,romfile= \
        > "$E2E_RUN/qemu.log" 2>&1 &
    E2E_QEMU_PID=$!
    local start; start=$(e2e_now)
    local waited=0
    E2E_DIRECTIVES_HANDLED=0
    while kill -0 "$E2E_QEMU_PID" 2>/dev/null; do
        sleep 0.2
        if grep -q '^E2E-HOST: ' "$console" 2>/dev/null; then e2e_handle_directives "$console"; fi
        waited=$(awk -v s="$start" -v n="$(e2e_now)" 'BEGIN { print int(n - s) }')
        if [ "$waited" -ge "$timeout" ]; then
            [ "$scenario" = __probe ] || e2e_log "guest timed out after ${timeout}s: stopping qemu (pid $E2E_QEMU_PID)"
            kill "$E2E_QEMU_PID" 2>/dev/null; wait "$E2E_QEMU_PID" 2>/dev/null
            return 124
        fi
    done
    wait "$E2E_QEMU_PID" 2>/dev/null
    local status
    status=$(tr -d '\r' < "$console" | sed -n 's/^E2E-EXIT=\([0-9]*\).*/\1/p' | tail -1)
    [ -n "$status" ] || return 125
    return "$status"
}

# ---- The ESPHome proxy's active connections (scenario esphome-gatt) ----
# For a scenario with an `esphome.forward` file: a free loopback port forwarded to the guest's ESPHome API
# (6053) through QEMU user-net (hostfwd; restrict=on still isolates the guest, the forward is explicit). Sets
# E2E_ESPHOME_PORT and E2E_ESPHOME_NET (the netdev option to append; empty for other scenarios).
e2e_esphome_forward() {
    local scenario="$1" tries=0 port
    E2E_ESPHOME_PORT=""; E2E_ESPHOME_NET=""
    [ -f "$SCENARIOS_DIR/$scenario/esphome.forward" ] || return 0
    while :; do
        tries=$((tries + 1)); [ $tries -le 50 ] || { e2e_log "no free loopback port for the ESPHome forward"; return 1; }
        port=$((20000 + RANDOM % 30000))
        (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null || break
    done
    E2E_ESPHOME_PORT=$port
    E2E_ESPHOME_NET=",hostfwd=tcp:127.0.0.1:$port-:6053"
}

# Runs the scenario's client.py with the pinned aioesphomeapi (scripts/reference-venv.sh) against the forwarded
# port, for the peripheral $1; its output and a last line `EXIT <status>` go to $2 (check.sh reads them).
# Bounded by 200 s.
e2e_esphome_client() {
    local peer="$1" out="$2" python
    python=$("$REPO/scripts/reference-venv.sh" "$REPO/Tests/ESPHome/esphome.txt" | tail -n 1)
    if [ ! -x "$python" ]; then
        { echo "no aioesphomeapi environment: $python"; echo "EXIT 2"; } > "$out"
        return
    fi
    timeout 200 "$python" "$SCENARIOS_DIR/$scenario/client.py" 127.0.0.1 "$E2E_ESPHOME_PORT" "$peer" > "$out" 2>&1
    echo "EXIT $?" >> "$out"
}
