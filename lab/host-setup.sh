#!/usr/bin/env bash
# Prepare this machine to run the podman lab: apt packages, podman's settings for this host, the
# Docker-compatible socket molecule's docker driver talks to. Idempotent; prints one line per step.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

# mariadb-client-core: my_print_defaults, the client's own option-file parser, which the unit tests hold the
# rendered login files to.
APT_PACKAGES=(podman runc netavark aardvark-dns debootstrap uidmap slirp4netns fuse-overlayfs
              iptables nftables iproute2 shellcheck python3 python3-venv make rsync curl ca-certificates
              mariadb-client-core)

step "checking disk space"
avail_kb=$(df -Pk /var/lib | awk 'NR==2 {print $4}')
if (( avail_kb < 8 * 1024 * 1024 )); then
    die "only $((avail_kb / 1024)) MiB free under /var/lib; the lab image and containers need at least 8 GiB" \
        "free space (podman system prune -a, or remove old images), then run again"
fi

step "checking apt packages"
missing=()
for pkg in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if (( ${#missing[@]} )); then
    [[ $EUID -eq 0 ]] || die "missing packages: ${missing[*]}; run as root or: sudo apt-get install ${missing[*]}"
    info "installing: ${missing[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get update -q \
        || die "apt-get update failed; check the apt sources in /etc/apt and the network to the mirror"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" \
        || die "apt-get install of ${missing[*]} failed (see the apt output above)"
else
    info "all present"
fi
command -v podman >/dev/null || die "podman is not on PATH after install; check: apt-get install podman"

step "configuring podman for this host"
# crun refuses this host's hybrid cgroup v1/v2 layout, so use runc and cgroupfs; default ulimits must
# stay within the VM's hard limits or every container fails to start.
conf=/etc/containers/containers.conf
desired=$(cat <<CONF
# Managed by dbops.clusters lab/host-setup.sh
[containers]
default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]

[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"

[network]
network_backend = "netavark"
CONF
)
if [[ -f $conf ]] && ! grep -q 'Managed by dbops.clusters' "$conf"; then
    info "keeping your own $conf; make sure it sets: runtime runc, cgroup_manager cgroupfs, ulimits within limits"
elif [[ "$(cat "$conf" 2>/dev/null)" != "$desired" ]]; then
    printf '%s\n' "$desired" > "$conf"
    info "wrote $conf"
else
    info "already configured"
fi

step "starting podman's Docker-compatible API socket"
mkdir -p /run/podman
if ! curl -fsS --unix-socket /run/podman/podman.sock http://d/_ping >/dev/null 2>&1; then
    rm -f /run/podman/podman.sock
    setsid nohup podman system service --time=0 unix:///run/podman/podman.sock \
        </dev/null >/var/log/dbops-podman-service.log 2>&1 &
    for _ in $(seq 50); do
        curl -fsS --unix-socket /run/podman/podman.sock http://d/_ping >/dev/null 2>&1 && break
        sleep 0.2
    done
    curl -fsS --unix-socket /run/podman/podman.sock http://d/_ping >/dev/null 2>&1 \
        || die "podman API socket did not answer; see /var/log/dbops-podman-service.log"
    info "listening on /run/podman/podman.sock"
else
    info "already listening on /run/podman/podman.sock"
fi
