#!/usr/bin/env bash
# The tests of scripts/test-order.sh (`make test-changed`): the orders it makes for given changes, its stop at the
# first failed stage (with a fake stage runner), and that its tables agree with make test's stages and cover every
# tracked file. Part of `make lint`; about two seconds.
# Usage: scripts/test-order-tests.sh STAGE...      make test's stages (the Makefile's TEST_STAGES)
set -uo pipefail
cd "$(dirname "$0")/.." || exit
[ $# -gt 0 ] || { echo "usage: scripts/test-order-tests.sh STAGE... (make lint)" >&2; exit 64; }
real_stages=("$@")
# make passes its command line's variables on to every stage: `make test-changed AFFECTED_ONLY=1` must not reach the
# runs below through make lint.
unset BASE DRY_RUN AFFECTED_ONLY CHANGED_FILES TEST_ORDER_RUN
# Stages the tables may name before their branch is merged (skipped with a note until then).
pending="container"
# A fixed list, so the expected orders below do not move when a stage is added (with container: as after its merge).
today=(lint build swift-tests fuzz-typecheck reference release arm64-start home-assistant home-assistant-trixie esphome e2e systemd arm64)
with_container=(lint build swift-tests fuzz-typecheck reference release arm64-start home-assistant home-assistant-trixie esphome e2e systemd container arm64)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: test-order: $*"; failures=$((failures + 1)); }

# plan FILES STAGE...: the order line test-order.sh prints for a change of FILES (space-separated).
plan() {
    local files=$1
    shift
    tr ' ' '\n' <<< "$files" > "$work/changed"
    CHANGED_FILES="$work/changed" DRY_RUN=1 scripts/test-order.sh "$@" > "$work/out" 2>&1
    sed -n 's/^test-changed: order: //p' "$work/out"
}
expect_order() {  # expect_order FILES EXPECTED [STAGE...]
    local files=$1 expected=$2 got
    shift 2
    (( $# > 0 )) || set -- "${today[@]}"
    got=$(plan "$files" "$@")
    [ "$got" = "$expected" ] || fail "for $files: expected '$expected', got '$got'"$'\n'"$(cat "$work/out")"
}

# Packaging only: the package's stages first, the release build before them, nothing of the debug build.
expect_order "packaging/deb/postinst" \
    "release arm64-start systemd arm64 | lint build swift-tests fuzz-typecheck reference home-assistant home-assistant-trixie esphome e2e"
grep -q "note: container, for packaging/deb/postinst, is not a stage" "$work/out" || fail "no note for the missing container stage"
expect_order "packaging/deb/postinst" \
    "release arm64-start systemd container arm64 | lint build swift-tests fuzz-typecheck reference home-assistant home-assistant-trixie esphome e2e" \
    "${with_container[@]}"
expect_order "docker/compose.yaml scripts/container-stage.sh" \
    "release container | lint build swift-tests fuzz-typecheck reference arm64-start home-assistant home-assistant-trixie esphome e2e systemd arm64" \
    "${with_container[@]}"
expect_order "docker/compose.yaml" "| ${today[*]}"
# Swift: lint, the build and the suites first, then the target's own stages.
expect_order "Sources/BeaconFormats/Formats/IBeacon.swift" \
    "lint build swift-tests fuzz-typecheck reference home-assistant e2e | release arm64-start home-assistant-trixie esphome systemd arm64"
expect_order "Sources/ESPHomeProxy/ESPHomeServer.swift" \
    "lint build swift-tests fuzz-typecheck release esphome e2e systemd | reference arm64-start home-assistant home-assistant-trixie arm64"
expect_order "Tests/Fuzz/FuzzEntry.swift" \
    "lint build fuzz-typecheck | swift-tests reference release arm64-start home-assistant home-assistant-trixie esphome e2e systemd arm64"
grep -q "fuzz-typecheck .*needed by" "$work/out" && fail "fuzz-typecheck listed as needed rather than affected"
grep -q "build .*needed by fuzz-typecheck" "$work/out" || fail "build not shown as needed by fuzz-typecheck"
# A stage's own script: the build it needs, then the stage.
expect_order "scripts/esphome-stage.sh" \
    "build esphome | lint swift-tests fuzz-typecheck reference release arm64-start home-assistant home-assistant-trixie e2e systemd arm64"
# The systemd stage's background start (beside e2e in the full order) comes with it, before it.
with_background_systemd=(lint build swift-tests fuzz-typecheck reference release arm64-start home-assistant home-assistant-trixie esphome systemd-start e2e systemd container arm64)
expect_order "config/beaconbridge.service" \
    "release arm64-start systemd-start systemd arm64 | lint build swift-tests fuzz-typecheck reference home-assistant home-assistant-trixie esphome e2e container" \
    "${with_background_systemd[@]}"
# Documents: no stage first; an unknown path and the Makefile: everything, in make test's order.
expect_order "docs/e2e.md" "| ${today[*]}"
expect_order "somewhere/new.txt" "${today[*]} |"
grep -q "somewhere/new.txt matches no line" "$work/out" || fail "no message for an unknown path"
expect_order "Makefile docs/e2e.md" "${today[*]} |"

# Needs that the full order breaks are refused.
tr ' ' '\n' <<< "docs/e2e.md" > "$work/changed"
CHANGED_FILES="$work/changed" DRY_RUN=1 scripts/test-order.sh build systemd release > "$work/out" 2>&1
[ $? = 70 ] || fail "a stage list with systemd before release was accepted"

# The run, with a fake stage runner: stops at the first failure, naming the stage, with the failure's status.
cat > "$work/runner" << EOF
#!/usr/bin/env bash
echo "\$1" >> "$work/ran"
[ "\$1" != "\${FAIL_AT:-}" ] || exit 3
EOF
chmod +x "$work/runner"
run() {  # run FILES [ENV...]: the stages run, space-separated, in $work/ran; the status in $status
    tr ' ' '\n' <<< "$1" > "$work/changed"
    shift
    : > "$work/ran"
    env "$@" CHANGED_FILES="$work/changed" TEST_ORDER_RUN="$work/runner" scripts/test-order.sh "${today[@]}" > "$work/out" 2>&1
    status=$?
    ran=$(paste -sd ' ' "$work/ran")
}
run "packaging/deb/postinst" FAIL_AT=systemd
[ "$status" = 3 ] || fail "a failed stage: exit $status, not the stage's 3"
[ "$ran" = "release arm64-start systemd" ] || fail "a failed stage: ran '$ran'"
grep -q "FAILED at stage systemd (exit 3) after [0-9]* s; not run: arm64 lint build swift-tests .* e2e$" "$work/out" \
    || fail "a failed stage: not named, or what did not run not listed"$'\n'"$(cat "$work/out")"
run "packaging/deb/postinst"
if [ "$status" != 0 ] || [ "$ran" != "release arm64-start systemd arm64 lint build swift-tests fuzz-typecheck reference home-assistant home-assistant-trixie esphome e2e" ]; then
    fail "a green run: exit $status, ran '$ran'"
fi
run "packaging/deb/postinst" AFFECTED_ONLY=1
if [ "$status" != 0 ] || [ "$ran" != "release arm64-start systemd arm64" ]; then fail "AFFECTED_ONLY=1: exit $status, ran '$ran'"; fi
run "docs/e2e.md" FAIL_AT=lint
if [ "$status" != 3 ] || [ "$ran" != lint ]; then fail "a failure at the first stage of make test's order: exit $status, ran '$ran'"; fi

# The tables against make test's stages: every stage they name exists (or is pending), and every tracked file is
# matched by a line of the path map.
table() { sed -n "/^read -r -d '' $1 <<'EOF'/,/^EOF/p" scripts/test-order.sh | grep -v -e '^read' -e '^EOF' -e '^#'; }
named=$( { table PATH_MAP | awk '{ for (i = 2; i <= NF; i++) print $i }'; table NEEDS | tr -s ' ' '\n'; } | sort -u)
for stage in $named; do
    case " ${real_stages[*]} $pending - all " in *" $stage "*) ;; *) fail "the tables name '$stage', which is not a stage of make test" ;; esac
done
tr ' ' '\n' <<< "docs/e2e.md" > "$work/changed"
CHANGED_FILES="$work/changed" DRY_RUN=1 scripts/test-order.sh "${real_stages[@]}" > "$work/out" 2>&1 \
    || fail "make test's stages refused:"$'\n'"$(cat "$work/out")"
if git ls-files > "$work/changed" 2> /dev/null && [ -s "$work/changed" ]; then
    CHANGED_FILES="$work/changed" DRY_RUN=1 scripts/test-order.sh "${real_stages[@]}" > "$work/out" 2>&1
    grep "matches no line" "$work/out" | sed 's/^/  /' | grep . && fail "tracked files that no line of the path map matches (above): add them to it"
fi

if (( failures > 0 )); then exit 1; fi
echo "test-order: the orders, the stop at the first failure and the tables are right"
