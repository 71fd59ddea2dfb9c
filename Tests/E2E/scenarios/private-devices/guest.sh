# Scenario "private-devices" (issue 11): hci1 advertises as a phone from resolvable private addresses generated
# from the configured key (computed beforehand with the reference AES of Python's `cryptography`), changing its
# address with LE Set Random Address every ~5 s; hci2 advertises from an address of a key the gateway does not
# know. The gateway must follow hci1 as the one device irk:phone and never publish hci2.
MINE_1="bb 90 a4 2c 1b 4a"   # 4A:1B:2C:A4:90:BB
MINE_2="1f 55 03 4f 3e 5d"   # 5D:3E:4F:03:55:1F
MINE_3="22 4c 76 71 60 7f"   # 7F:60:71:76:4C:22
STRANGER="0b e2 7b aa 55 66" # 66:55:AA:7B:E2:0B (key 00112233445566778899aabbccddeeff)
# Flags and Apple manufacturer data as an iPhone sends (no beacon format): only its address identifies it.
PHONE_AD=0201060aff4c001005011c000000

# Legacy advertising from $1 with own address type random at address $2 (6 bytes, HCI order), data $3.
advertise_random() {
    local dev="$1" address="$2" data="$3" len pad
    len=$(( ${#data} / 2 ))
    pad=$(( 31 - len ))
    hcitool -i "$dev" cmd 0x08 0x000a 00 > /dev/null
    hcitool -i "$dev" cmd 0x08 0x0005 $address > /dev/null || fail "LE Set Random Address on $dev"
    hcitool -i "$dev" cmd 0x08 0x0006 a0 00 a0 00 03 01 00 00 00 00 00 00 00 07 00 > /dev/null
    hcitool -i "$dev" cmd 0x08 0x0008 $(printf '%02x' "$len") $(hex_bytes "$data") $(yes 00 | head -n "$pad") > /dev/null
    hcitool -i "$dev" cmd 0x08 0x000a 01 > /dev/null
}

# Re-enables advertising every ~0.5 s (btvirt reports only then) at address $2 for $3 seconds.
advertise_for() {
    local dev="$1" address="$2" seconds="$3" i
    for i in $(seq 1 $(( seconds * 2 ))); do advertise_random "$dev" "$address" "$PHONE_AD"; sleep 0.5; done
}

start_btvirt 3
hciconfig hci1 up || fail "hci1 up"
hciconfig hci2 up || fail "hci2 up"
start_daemon ./config.yaml
sleep 2
( while :; do advertise_random hci2 "$STRANGER" "$PHONE_AD"; sleep 0.5; done ) &
STRANGER_PID=$!
mark advertising-start
advertise_for hci1 "$MINE_1" 5
mark rotation-1
advertise_for hci1 "$MINE_2" 5
mark rotation-2
advertise_for hci1 "$MINE_3" 5
mark advertising-stop
stop_advertising hci1
kill "$STRANGER_PID" 2>/dev/null; wait "$STRANGER_PID" 2>/dev/null
stop_advertising hci2
sleep 2
stop_daemon
e2e "private-devices scenario done"
