#!/usr/bin/env bash
# `make test-changed` (docs/testing.md, "Before you push"): `make test`'s stages, first those the changed files can
# affect (with the stages whose products they need), stopping at the first failure, then the rest in `make test`'s
# order, so the full run still happens. Prints the base, the changed files, the order and why each stage is early.
# Usage: scripts/test-order.sh STAGE...      the stages of the full run in its order (the Makefile's TEST_STAGES)
# Environment:
#   BASE=REF         compare with REF. Default: on a branch other than main, its merge-base with main (the branch's
#                    own commits); on main, the merge-base with its upstream when HEAD is ahead of it (what a push
#                    would send), else HEAD~1 (the last commit). Changes not committed, staged or not, and untracked
#                    files (not ignored) count too.
#   DRY_RUN=1        print all that and run nothing
#   AFFECTED_ONLY=1  run only the stages placed first, not the rest (a quick loop; not a full run)
#   CHANGED_FILES=F  read the changed paths from file F, one a line, instead of asking git (the tests)
#   MAKE, TEST_FIRST_STEPS   make, and the targets it runs before the first stage (background work, deps)
#   TEST_ORDER_RUN=CMD       run a stage as `CMD NAME` instead of `$MAKE stage-NAME`, without the stage times'
#                            reset and summary (the tests)
set -uo pipefail
cd "$(dirname "$0")/.." || exit
me=test-changed

# Which paths affect which stages: a glob (`*` matches `/` too), then the stages to run first for a change that
# matches it. A path matching several lines gets all their stages; `-` marks a path that no stage depends on (docs,
# make demo's files), `all` every stage; a path matching no line counts as `all`. The stages a line names are those
# that exercise the path most directly, not every stage that could notice: the rest still run, after them. A stage
# this make test does not have (container before its branch is merged) is skipped with a note.
read -r -d '' PATH_MAP <<'EOF'
# The Swift package: every source goes into the debug build, the suites and the fuzz harnesses' modules.
*.swift                         lint
.swift-format                   lint
Package*.swift                  build swift-tests fuzz-typecheck release arm64
Sources/*                       build swift-tests fuzz-typecheck
Tests/*Tests/*                  build swift-tests
Tests/TestSupport/*             build swift-tests release
Tests/GATTTestPeer/*            build swift-tests e2e
Tests/Fuzz/*                    fuzz-typecheck
Tests/FuzzConfig/*              fuzz-typecheck
# Each target's stages beyond the suites (docs/architecture.md, "The core's targets").
Sources/BeaconFormats/*         reference home-assistant e2e
Sources/BeaconTracking/*        home-assistant e2e
Sources/BeaconRooms/*           home-assistant e2e
Sources/BeaconEvents/*          home-assistant home-assistant-trixie esphome
Sources/BeaconDelivery/*        home-assistant home-assistant-trixie
Sources/DeviceProtocols/*       esphome e2e
Sources/SecureDFU/*             e2e
Sources/BeaconSimulation/*      home-assistant
Sources/BeaconRuntime/*         e2e systemd
Sources/HCIScanner/*            e2e
Sources/GATTLink/*              e2e
Sources/CBlueZ/*                e2e
Sources/MQTTPublisher/*         home-assistant home-assistant-trixie esphome
Sources/CMosquitto/*            home-assistant home-assistant-trixie esphome
Sources/ESPHomeProxy/*          esphome e2e systemd
Sources/CCrypto/*               esphome
Sources/BeaconBridgeCLI/Daemon/*    home-assistant e2e web
Sources/BeaconBridgeCLI/Systemd/*   systemd
Sources/BeaconBridgeCLI/Status/*    web
Sources/StatusServer/*          web
Sources/beaconbridge-testpeer/*     e2e
Sources/beaconbridge-bench/*        release
# Test data and the stages' own checks.
Tests/Fixtures/*                swift-tests
Tests/Fixtures/android-horizon74-btsnoop.log    esphome arm64
Tests/Fixtures/config/wrong-values.yaml         arm64
Tests/Oracles/*                 swift-tests
Tests/Reference/*               reference
Tests/Reference/published-frames.json           arm64
Tests/HomeAssistant/*           home-assistant home-assistant-trixie
Tests/HomeAssistant/fixtures/*  swift-tests
Tests/ESPHome/*                 esphome e2e
Tests/E2E/*                     e2e
# The stages' scripts.
scripts/stage.sh                all
scripts/test-order*             lint
scripts/swift-tests.sh          swift-tests
scripts/suite-times.sh          swift-tests
scripts/fd-guard.c              swift-tests
scripts/fuzz*.sh                fuzz-typecheck
scripts/reference-check.sh      reference
scripts/reference-venv.sh       reference esphome e2e swift-tests
scripts/ha-stage.sh             home-assistant home-assistant-trixie
scripts/stage-lib.sh            home-assistant home-assistant-trixie
scripts/ha-stage-trixie.sh      home-assistant-trixie
scripts/python-root.sh          home-assistant-trixie
scripts/esphome-stage.sh        esphome
scripts/e2e.sh                  e2e systemd
scripts/e2e/*                   e2e systemd
scripts/systemd-stage*          systemd
scripts/arm64-stage.sh          arm64
scripts/arm64-smoke.sh          arm64
scripts/cross-build.sh          arm64
scripts/cross-roots.sh          arm64
scripts/deb-arm64.sh            arm64
scripts/container-*             container
scripts/demo-config.sh          container
scripts/web-stage.sh            web
scripts/web-driver.py           web
scripts/demo.sh                 -
scripts/demo-events.awk         -
scripts/arm64-figures.sh        -
scripts/stress-runs.sh          -
scripts/binary-pages.py         -
scripts/text-pages.py           -
scripts/link-order.sh           -
scripts/link-order.txt          release web e2e systemd container
scripts/link-order-check.sh     release
scripts/rooms-classifier-grid.py -
scripts/rooms-wrong-time.py -
scripts/rooms-scale*.sh -
scripts/rooms-scale-scenario.py -
# The package, the image and what they ship.
packaging/*                     systemd arm64 container
scripts/deb.sh                  systemd arm64 container
config/beaconbridge.service     systemd arm64
config/beaconbridge.yaml        swift-tests systemd arm64 container
config/scenarios/*              swift-tests
config/scenarios/demo.json      arm64 container
docker/*                        container
# The rest of the repository. The suites read the README (exit codes), two documents and the schemas.
Makefile                        all
README.md                       swift-tests
docs/*                          -
docs/configuration.md           swift-tests
docs/mqtt.md                    swift-tests
docs/schemas/*                  swift-tests
.gitignore                      -
.ci/*                           -
EOF

# Which stage needs which other's product (they run before it in every order): the debug build (the binary, the test
# bundle, the modules), the release binary, the background arm64 build.
read -r -d '' NEEDS <<'EOF'
swift-tests             build
fuzz-typecheck          build
reference               build
home-assistant          build
home-assistant-trixie   build
esphome                 build
e2e                     build
systemd-start           release
systemd                 release systemd-start
container               release
web                     release
arm64                   release arm64-start
EOF

[ $# -gt 0 ] || { echo "usage: scripts/test-order.sh STAGE... (make test-changed)" >&2; exit 64; }
stages=("$@")
declare -A position=() needs=() affected_by=() needed_by=() missing=()
for i in "${!stages[@]}"; do position[${stages[$i]}]=$i; done

while read -r stage wanted; do
    [[ -z $stage || $stage == \#* ]] && continue
    needs[$stage]=$wanted
done <<< "$NEEDS"
# The full order must itself respect the needs, or it could not be the fallback.
for stage in "${stages[@]}"; do
    for need in ${needs[$stage]:-}; do
        if [[ -v position[$need] ]] && (( position[$need] > position[$stage] )); then
            echo "$me: $stage needs $need, but the stage list runs $need after it (fix TEST_STAGES or the needs in $0)" >&2
            exit 70
        fi
    done
done

# The base and the changed files.
files() { if (( $1 == 1 )); then echo file; else echo files; fi; }
if [ -n "${CHANGED_FILES:-}" ]; then
    mapfile -t changed < <(grep -v '^$' "$CHANGED_FILES" | sort -u)
    echo "$me: ${#changed[@]} changed $(files ${#changed[@]}) from $CHANGED_FILES"
else
    git rev-parse --git-dir > /dev/null 2>&1 || { echo "$me: not a git work tree: run make test" >&2; exit 66; }
    branch=$(git symbolic-ref --short -q HEAD || true)
    main=""
    for ref in main origin/main; do git rev-parse --verify -q "$ref" > /dev/null && { main=$ref; break; }; done
    upstream=$(git rev-parse --abbrev-ref --symbolic-full-name '@{upstream}' 2> /dev/null || true)
    if [ -n "${BASE:-}" ]; then
        base=$BASE why="BASE"
    elif [ -n "$branch" ] && [ "$branch" != main ] && [ -n "$main" ]; then
        base=$(git merge-base HEAD "$main") why="the merge-base of $branch and $main"
    elif [ -n "$upstream" ] && [ "$(git rev-list --count "$upstream..HEAD")" -gt 0 ]; then
        base=$(git merge-base HEAD "$upstream") why="the merge-base with $upstream: what a push would send"
    elif git rev-parse --verify -q HEAD~1 > /dev/null; then
        base=HEAD~1 why="HEAD~1: the last commit"
    else
        base=$(git hash-object -t tree /dev/null) why="the empty tree: the first commit"
    fi
    git rev-parse --verify -q "$base^{tree}" > /dev/null || { echo "$me: BASE $base is not a commit here" >&2; exit 64; }
    described=$(git log -1 --format='%h %s' "$base" 2> /dev/null | cut -c1-80)
    echo "$me: base ${described:-$base} ($why)"
    mapfile -t changed < <({ git diff --name-only --no-renames "$base" --; git ls-files --others --exclude-standard; } | sort -u)
    echo "$me: ${#changed[@]} changed $(files ${#changed[@]}) (the commits since the base, changes not committed, untracked files):"
fi
shown=0
for file in "${changed[@]}"; do
    if (( shown == 30 )); then echo "  ... and $(( ${#changed[@]} - 30 )) more"; break; fi
    echo "  $file"
    shown=$((shown + 1))
done

files_text() {  # the first two of a list of paths, and how many more
    local -a list
    read -r -a list <<< "$1"
    local text=${list[0]}
    (( ${#list[@]} > 1 )) && text+=", ${list[1]}"
    (( ${#list[@]} > 2 )) && text+=" and $(( ${#list[@]} - 2 )) more"
    echo "$text"
}

# The stages each changed file puts first.
add() {  # add STAGE FILE
    if [[ -v position[$1] ]]; then
        affected_by[$1]+="${affected_by[$1]:+ }$2"
    else
        missing[$1]+="${missing[$1]:+ }$2"
    fi
}
patterns=() wanted=()
while read -r pattern stage_words; do
    [[ -z $pattern || $pattern == \#* ]] && continue
    patterns+=("$pattern")
    wanted+=("$stage_words")
done <<< "$PATH_MAP"
everything=()
for file in "${changed[@]}"; do
    known=0
    for i in "${!patterns[@]}"; do
        # shellcheck disable=SC2053 # the pattern is a glob on purpose
        [[ $file == ${patterns[$i]} ]] || continue
        known=1
        case ${wanted[$i]} in
        -) ;;
        all) everything+=("$file") ;;
        *) for stage in ${wanted[$i]}; do add "$stage" "$file"; done ;;
        esac
    done
    if (( !known )); then
        echo "$me: $file matches no line of the path map in $0: every stage counts as affected"
        everything+=("$file")
    fi
done
for file in "${everything[@]}"; do
    for stage in "${stages[@]}"; do add "$stage" "$file"; done
done
for stage in $(printf '%s\n' "${!missing[@]}" | sort); do
    echo "$me: note: $stage, for $(files_text "${missing[$stage]}"), is not a stage of this make test: skipped"
done

# The affected stages and, before them, what they need (transitively).
declare -A first=()
select_stage() {  # select_stage STAGE [NEEDED_BY]
    local need
    [ -n "${2:-}" ] && needed_by[$1]+="${needed_by[$1]:+, }$2"
    [[ -v first[$1] ]] && return
    first[$1]=1
    for need in ${needs[$1]:-}; do
        if [[ -v position[$need] ]]; then select_stage "$need" "$1"; else echo "$me: note: $1 needs $need, which is not a stage here"; fi
    done
}
for stage in "${stages[@]}"; do [[ -v affected_by[$stage] ]] && select_stage "$stage"; done
early=() rest=()
for stage in "${stages[@]}"; do
    if [[ -v first[$stage] ]]; then early+=("$stage"); else rest+=("$stage"); fi
done

if (( ${#early[@]} == 0 )); then
    echo "$me: no stage depends on these files: make test's order"
elif (( ${#rest[@]} == 0 )); then
    echo "$me: every stage can be affected ($(files_text "${everything[*]}")): make test's order"
else
    echo "$me: first, the stages these files can affect and what those need:"
    for stage in "${early[@]}"; do
        why=""
        [[ -v affected_by[$stage] ]] && why="$(files_text "${affected_by[$stage]}")"
        [[ -v needed_by[$stage] ]] && why+="${why:+; }needed by ${needed_by[$stage]}"
        printf '  %-22s %s\n' "$stage" "$why"
    done
    echo "$me: then, after the | below, the rest in make test's order$([ "${AFFECTED_ONLY:-0}" = 1 ] && echo " (not run: AFFECTED_ONLY=1)")"
fi
order="${early[*]} | ${rest[*]}"
order=${order# }
echo "$me: order: ${order% }"
[ "${DRY_RUN:-0}" = 1 ] && exit 0

# The run.
started=$SECONDS
run_stage() {
    if [ -n "${TEST_ORDER_RUN:-}" ]; then $TEST_ORDER_RUN "$1"; else "${MAKE:-make}" --no-print-directory "stage-$1"; fi
}
summary() { [ -n "${TEST_ORDER_RUN:-}" ] || scripts/stage.sh --summary; }
if [ -z "${TEST_ORDER_RUN:-}" ]; then
    # shellcheck disable=SC2086 # a list of targets
    [ -z "${TEST_FIRST_STEPS:-}" ] || "${MAKE:-make}" --no-print-directory $TEST_FIRST_STEPS || exit
    scripts/stage.sh --reset
fi
plan=("${early[@]}" "${rest[@]}")
for i in "${!plan[@]}"; do
    if (( i == ${#early[@]} && i > 0 )); then
        if [ "${AFFECTED_ONLY:-0}" = 1 ]; then
            summary
            echo "$me: the ${#early[@]} stages placed first passed in $((SECONDS - started)) s; the rest not run (AFFECTED_ONLY=1): ${rest[*]}"
            exit 0
        fi
        echo "$me: the ${#early[@]} stages placed first passed in $((SECONDS - started)) s; now the rest: ${rest[*]}"
    fi
    run_stage "${plan[$i]}"
    status=$?
    if (( status != 0 )); then
        summary
        echo "$me: FAILED at stage ${plan[$i]} (exit $status) after $((SECONDS - started)) s; not run: ${plan[*]:i+1}"
        exit "$status"
    fi
done
summary
echo "$me: every stage passed in $((SECONDS - started)) s"
