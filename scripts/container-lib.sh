# shellcheck shell=bash
# Shared by scripts/container-image.sh and scripts/container-stage.sh; sourced, not run.

# container_engine_conf DIR: makes podman and buildah work on a host where their defaults fail, through a
# containers.conf of their own (DIR/containers.conf, named by CONTAINERS_CONF, which both read; the host's
# configuration is not changed). Prints what it changed, one line each, nothing when the defaults do. Two cases,
# both of the machines `make test` runs on (a VM whose init mounts cgroups itself):
#   - cgroups in hybrid mode with a controller in the v2 hierarchy (there: hugetlb in /sys/fs/cgroup/unified):
#     crun 1.8.1, Debian 12's default runtime, refuses to create a container ("cgroups in hybrid mode not
#     supported, drop all controllers from cgroupv2"); runc takes it, so the runtime is runc (installed when missing).
#   - root without CAP_SYS_RESOURCE: podman gives a container nofile 1048576 and nproc 4194304 by default, which
#     cannot be raised to ("error setting rlimit ... operation not permitted"); the container gets the host's hard
#     limits instead (nproc at most kernel.pid_max: podman's own conmon has that).
container_engine_conf() {
    local dir=$1 conf="" nofile nproc pid_max cap_eff
    if grep -q ' /sys/fs/cgroup/unified cgroup2 ' /proc/mounts && [ -n "$(cat /sys/fs/cgroup/unified/cgroup.controllers)" ]; then
        if ! command -v runc > /dev/null; then
            { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 \
                --no-install-recommends runc > /dev/null; } || return 1
        fi
        conf="[engine]
runtime = \"runc\""
        echo "runtime runc: cgroups in hybrid mode with $(cat /sys/fs/cgroup/unified/cgroup.controllers) in the v2 hierarchy, which crun refuses"
    fi
    cap_eff=$(awk '/^CapEff:/ { print $2 }' /proc/self/status)
    if [ $(((16#$cap_eff >> 24) & 1)) = 0 ]; then
        nofile=$(ulimit -Hn)
        nproc=$(ulimit -Hu)
        pid_max=$(cat /proc/sys/kernel/pid_max)
        [ "$nproc" = unlimited ] || [ "$nproc" -gt "$pid_max" ] && nproc=$pid_max
        conf="[containers]
default_ulimits = [\"nofile=$nofile:$nofile\", \"nproc=$nproc:$nproc\"]
${conf}"
        echo "ulimits nofile $nofile, nproc $nproc: no CAP_SYS_RESOURCE to raise them to podman's defaults"
    fi
    if [ -n "$conf" ]; then
        echo "$conf" > "$dir/containers.conf"
        export CONTAINERS_CONF="$dir/containers.conf"
    fi
    return 0
}
