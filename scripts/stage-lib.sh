# Shared by the Home Assistant stages (scripts/ha-stage.sh, scripts/ha-stage-trixie.sh); sourced, not run.

# stage_finish_work NAME WORK STATUS: at a stage's exit, keeps its work directory when it failed or when
# HA_STAGE_KEEP=1 (after a failure with the tail of every log in it, Home Assistant's own included), else removes it.
stage_finish_work() {
    local name=$1 work=$2 status=$3 f
    if [[ "${HA_STAGE_KEEP:-0}" == 1 || $status -ne 0 ]]; then
        echo "$name: files kept in $work"
        if [[ $status -ne 0 ]]; then
            for f in "$work"/*.log "$work"/ha/home-assistant.log; do
                [[ -f "$f" ]] && { echo "--- tail of $f"; tail -40 "$f"; }
            done
        fi
    else
        rm -rf "$work"
    fi
    return 0
}
