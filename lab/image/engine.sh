#!/usr/bin/env bash
# Build one engine image (see engines.txt) on top of the lab image: its packages installed from the lab image's
# apt cache (no network), no service started or enabled. Skipped when an image built from the same recipe (this
# script, the engine's line and the lab image's own recipe) exists.
#
# Usage: lab/image/engine.sh ENGINE [--force]     Env: LAB_IMAGE (default localhost/dbops-lab:trixie)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"

engine=${1:?usage: engine.sh ENGINE [--force]}
base=${LAB_IMAGE:-localhost/dbops-lab:trixie}
image=$base-$engine
line=$(grep -E "^$engine:" "$here/engines.txt") || die "no engine '$engine' in $here/engines.txt"
packages=$(cut -d: -f2- <<<"$line" | cut -d'|' -f1 | xargs)
units=$(cut -d'|' -f2 <<<"$line" | xargs)
removed=$(cut -d'|' -f3 <<<"$line" | xargs)
volumes=$(cut -d'|' -f4 <<<"$line" | xargs)
# one build at a time per engine (scenarios started side by side may ask for the same image)
exec 9>"${TMPDIR:-/tmp}/dbops-lab-engine-$engine.lock"
flock 9
base_recipe=$(podman image inspect "$base" --format '{{index .Labels "dbops.recipe"}}')
recipe=$(printf '%s\n%s\n' "$base_recipe" "$line" | cat - "$here/engine.sh" | sha256sum | cut -c1-16)

if [[ ${2:-} != --force ]] && podman image exists "$image" \
   && [[ $(podman image inspect "$image" --format '{{index .Labels "dbops.recipe"}}') == "$recipe" ]]; then
    step "engine image $image is up to date (recipe $recipe), not rebuilding"
    exit 0
fi

started=$SECONDS
step "building $image: $packages"
# policy-rc.d as the roles' start ban; --no-download: everything comes from the lab image's apt cache. The units
# are disabled after the install (the packages enable them), so a host booted from the image runs no server;
# the identity files the line names are removed, so each host makes its own; its data directories are volumes.
podman build --network none --label "dbops.recipe=$recipe" --tag "$image" -f - <<CONTAINERFILE 2>&1 | sed 's/^/    /'
FROM $base
RUN printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod 0755 /usr/sbin/policy-rc.d \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-download $packages \
 && rm /usr/sbin/policy-rc.d ${units:+&& systemctl disable $units} \
 && rm -rf /tmp/* /var/log/apt/* $removed
${volumes:+VOLUME $volumes}
CONTAINERFILE
[[ ${PIPESTATUS[0]} == 0 ]] || die "could not build $image"
info "built $image (recipe $recipe) in $((SECONDS - started)) s"
