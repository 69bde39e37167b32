#!/usr/bin/env bash
# Build the lab base image locally (no registry is reachable): a debootstrapped Debian trixie rootfs with
# systemd as PID 1, python3 and the modules' drivers, Debian sid pinned low for MySQL only, the lab's DB packages
# pre-downloaded into the apt cache, a compile cache for Ansible's module payloads. Skipped when an image built from
# the same recipe already exists.
#
# Usage: lab/image/build.sh [--force]      Env: LAB_IMAGE (default localhost/dbops-lab:trixie),
#                                               LAB_MIRROR (default: the Debian mirror this host's apt uses)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"

image=${LAB_IMAGE:-localhost/dbops-lab:trixie}
recipe=$(cat "$here/build.sh" "$here"/packages-*.txt "$here"/*.py | sha256sum | cut -c1-16)

if [[ ${1:-} != --force ]] && podman image exists "$image" \
   && [[ $(podman image inspect "$image" --format '{{index .Labels "dbops.recipe"}}') == "$recipe" ]]; then
    step "lab image $image is up to date (recipe $recipe), not rebuilding"
    exit 0
fi

host_mirror() {
    # First Debian archive URI the host's apt uses; fall back to the canonical one.
    local uri
    uri=$(grep -hoE '^(URIs:|deb) +[^ ]+/debian/?( |$)' /etc/apt/sources.list.d/*.sources /etc/apt/sources.list \
          2>/dev/null | grep -v security | head -n1 | awk '{print $2}') || true
    echo "${uri:-http://deb.debian.org/debian}"
}
mirror=${LAB_MIRROR:-$(host_mirror)}
mirror=${mirror%/}

started=$SECONDS
rootfs=$(mktemp -d /var/tmp/dbops-rootfs.XXXXXX)
cleanup() {
    for m in dev/pts dev proc sys; do umount -l "$rootfs/$m" 2>/dev/null || true; done
    rm -rf --one-file-system "$rootfs"
}
trap cleanup EXIT

step "debootstrap trixie from $mirror into $rootfs (a few minutes)"
debootstrap --variant=minbase \
    --include=systemd,systemd-sysv,dbus,openssh-server,python3,python3-apt,iproute2,iputils-ping,procps,ca-certificates,gnupg,curl,nftables,less,netcat-openbsd,lsb-release,sudo,locales \
    trixie "$rootfs" "$mirror" 2>&1 | awk '/^I: (Retrieving|Validating|Extracting|Installing|Configuring) / && ++n % 40 != 1 {next} {print "    " $0; fflush()}' \
    || die "debootstrap failed; check the mirror $mirror (override with LAB_MIRROR=...)"

step "configuring apt: trixie, sid pinned low, only MySQL from sid"
rm -f "$rootfs/etc/apt/sources.list"
cat > "$rootfs/etc/apt/sources.list.d/debian.sources" <<SRC
Types: deb
URIs: $mirror
Suites: trixie trixie-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

# sid provides MySQL 9.7 for the lab's 'mysql' flavor. Its lists on this mirror are past Valid-Until.
Types: deb
URIs: $mirror
Suites: sid
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
Check-Valid-Until: no
SRC
cat > "$rootfs/etc/apt/preferences.d/sid-mysql-only" <<'PIN'
Package: *
Pin: release n=sid
Pin-Priority: 50

# MySQL 9.7 and the C++ runtime and allocator it was built against; nothing else upgrades from sid.
Package: mysql-* libmysqlclient* libstdc++6 libgcc-s1 gcc-16-base libgoogle-perftools4t64 libtcmalloc-minimal4t64
Pin: release n=sid
Pin-Priority: 600
PIN
cat > "$rootfs/etc/apt/apt.conf.d/90dbops-lab" <<'CONF'
APT::Install-Recommends "false";
APT::Keep-Downloaded-Packages "true";
Acquire::Languages "none";
CONF

step "preparing systemd to run as PID 1 in a container"
: > "$rootfs/etc/machine-id"            # empty: systemd generates one per container
rm -f "$rootfs/var/lib/dbus/machine-id"
for unit in getty.target console-getty.service systemd-firstboot.service systemd-networkd-wait-online.service \
            systemd-timesyncd.service apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer fstrim.timer; do
    ln -sf /dev/null "$rootfs/etc/systemd/system/$unit"
done
echo 'en_US.UTF-8 UTF-8' > "$rootfs/etc/locale.gen"
chroot "$rootfs" locale-gen >/dev/null
echo 'LANG=C.UTF-8' > "$rootfs/etc/default/locale"

step "preparing sshd, the lab's Ansible transport"
# Ansible reaches the hosts over SSH with a persistent master connection: a task then costs one session on an
# open connection (about 20 ms) instead of a podman exec (about 0.3 s, most of it podman's own work). Each host
# makes its own host keys at its first boot (the image ships none); the controller's lab key is mounted read-only
# as /etc/ssh/lab_authorized_keys by lab/labctl.py.
rm -f "$rootfs"/etc/ssh/ssh_host_*
mkdir -p "$rootfs/etc/systemd/system/ssh.service.d"
cat > "$rootfs/etc/systemd/system/ssh.service.d/lab-host-keys.conf" <<'UNIT'
[Service]
ExecStartPre=
ExecStartPre=/usr/bin/ssh-keygen -A
ExecStartPre=/usr/sbin/sshd -t
UNIT
cat > "$rootfs/etc/ssh/sshd_config.d/lab.conf" <<'SSHD'
# The lab's transport: root with the controller's key only, no DNS lookups, room for parallel sessions.
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
AuthorizedKeysFile /etc/ssh/lab_authorized_keys
UseDNS no
MaxSessions 64
MaxStartups 64:30:128
SSHD

step "speeding up what every converge repeats: module runs and package installs"
# Every Ansible module run compiles ansible.module_utils from its zip payload (about 0.25 s of CPU, most of a
# lab host's CPU in a converge); the hook keeps the compiled code (see the file). dpkg skips fsync: a lab host
# that crashes is created again, never repaired.
install -m 0644 "$here/dbops_lab_zipimport_cache.py" "$rootfs/usr/lib/python3/dist-packages/"
echo "import dbops_lab_zipimport_cache" > "$rootfs/usr/lib/python3/dist-packages/dbops_lab_zipimport_cache.pth"
install -d -m 0755 "$rootfs/var/cache/dbops-lab/zipimport"
echo force-unsafe-io > "$rootfs/etc/dpkg/dpkg.cfg.d/lab-unsafe-io"

step "pre-downloading the lab's packages into the image's apt cache"
cp /etc/resolv.conf "$rootfs/etc/resolv.conf"
mount -t proc proc "$rootfs/proc"
chroot "$rootfs" apt-get update -q 2>&1 | sed 's/^/    /'
download() {  # one apt resolution per line of a package list
    local file=$1 line
    grep -vE '^\s*(#|$)' "$file" | while read -r line; do
        info "downloading: $line"
        # shellcheck disable=SC2086  # one line holds several package names
        chroot "$rootfs" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --download-only $line \
            >/tmp/dbops-lab-download.log 2>&1 || { cat /tmp/dbops-lab-download.log; die "could not download: $line"; }
    done
}
download "$here/packages-trixie.txt"
download "$here/packages-sid.txt"
# The Python drivers every role's modules use are installed, not only downloaded: every scenario would install
# them first (about 25 s of a converge, again for each host a drill adds). The default scenario removes
# PyMySQL and psycopg2 first, so db_host's install path (dpkg first, apt for what is missing; mongodb_rs asks
# the same way for PyMongo) still runs for real there.
chroot "$rootfs" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q python3-pymysql python3-psycopg2 python3-pymongo \
    >/tmp/dbops-lab-download.log 2>&1 || { cat /tmp/dbops-lab-download.log; die "could not install the Python drivers"; }
umount "$rootfs/proc"
info "apt cache: $(du -sh "$rootfs/var/cache/apt/archives" | cut -f1)"
: > "$rootfs/etc/resolv.conf"
# keep the fresh lists (they match the cached .debs); a role's cache_valid_time refreshes them when old

step "importing the rootfs as $image"
tar -C "$rootfs" --numeric-owner -c . | podman import \
    --change 'CMD=["/sbin/init"]' --change 'STOPSIGNAL=SIGRTMIN+3' \
    --change "LABEL=dbops.recipe=$recipe" --change 'ENV=container=podman' \
    - "$image" >/dev/null
info "built $image (recipe $recipe, $(podman image inspect "$image" --format '{{.Size}}' | numfmt --to=iec) ) in $((SECONDS - started)) s"
