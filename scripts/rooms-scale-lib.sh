# Shared by scripts/rooms-scale.sh and scripts/rooms-scale-instructions.sh (sourced, not run).

# scale_broker CONF [EXTRA_LINE...]: a mosquitto on a free loopback port, its configuration written to CONF (plus
# the extra lines), started in the background; sets PORT and BROKER (its pid) and waits until it accepts.
scale_broker() {
    local conf=$1
    shift
    PORT=""
    for _ in $(seq 50); do
        local candidate=$((20000 + RANDOM % 40000))
        (exec 3<>"/dev/tcp/127.0.0.1/$candidate") 2>/dev/null || { PORT=$candidate; break; }
    done
    [ -n "$PORT" ] || { echo "rooms-scale: no free loopback port" >&2; return 1; }
    { printf 'user %s\nlistener %s 127.0.0.1\nallow_anonymous true\npersistence false\n' "$(id -un)" "$PORT"
      for line in "$@"; do printf '%s\n' "$line"; done; } >"$conf"
    mosquitto -c "$conf" >"$conf.log" 2>&1 &
    BROKER=$!
    for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && return 0; sleep 0.1; done
    echo "rooms-scale: mosquitto did not start on port $PORT" >&2
    return 1
}

# scale_ids SCENARIO / scale_rooms SCENARIO: the scenario's gateway ids, and its `rooms.gateways` flow mapping.
scale_ids() { python3 -c 'import json,sys; print(" ".join(g["id"] for g in json.load(open(sys.argv[1]))["gateways"]))' "$1"; }
scale_rooms() {
    python3 -c 'import json,sys; print(", ".join("%s: r%s" % (g["id"], g["id"][3:]) for g in json.load(open(sys.argv[1]))["gateways"]))' "$1"
}
