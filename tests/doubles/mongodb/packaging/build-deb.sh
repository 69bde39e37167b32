#!/usr/bin/env bash
# Build the mongod/mongos test double as a Debian package: build-deb.sh RELEASE OUTDIR (RELEASE 7.0 or 8.0).
# Built at test time from this directory; no package file is committed.
set -euo pipefail
release=${1:?release (7.0 or 8.0)}
outdir=${2:?output directory}
case $release in 7.0|8.0) ;; *) echo "release must be 7.0 or 8.0" >&2; exit 2 ;; esac
here=$(cd "$(dirname "$0")" && pwd)
root=$(mktemp -d)
chmod 0755 "$root"
trap 'rm -rf "$root"' EXIT
install -d "$root/DEBIAN" "$root/usr/lib/mongodb-double" "$root/usr/bin" "$root/lib/systemd/system" \
    "$root/usr/share/doc/mongodb-double"
install -m 0644 "$here/../mongod_double.py" "$root/usr/lib/mongodb-double/mongod_double.py"
echo "$release" > "$root/usr/lib/mongodb-double/VERSION"
install -m 0644 "$here/../README.md" "$root/usr/share/doc/mongodb-double/README.md"
install -m 0644 "$here/mongod.service" "$here/mongos.service" "$root/lib/systemd/system/"
printf '#!/bin/sh\nexec /usr/bin/python3 /usr/lib/mongodb-double/mongod_double.py "$@"\n' > "$root/usr/bin/mongod"
printf '#!/bin/sh\nexec /usr/bin/python3 /usr/lib/mongodb-double/mongod_double.py --mongos "$@"\n' > "$root/usr/bin/mongos"
chmod 0755 "$root/usr/bin/mongod" "$root/usr/bin/mongos"
install -m 0755 "$here/postinst" "$root/DEBIAN/postinst"
cat > "$root/DEBIAN/control" <<CONTROL
Package: mongodb-double
Version: $release.0
Architecture: all
Maintainer: dbops.clusters maintainers <dbops@example.invalid>
Depends: python3 (>= 3.9), python3-pymongo (>= 4.0), passwd
Section: database
Priority: optional
Description: test double of mongod/mongos $release for the dbops.clusters lab
 Speaks the MongoDB wire protocol and models documented replica-set,
 election, reconfiguration, authentication, featureCompatibilityVersion and
 balancer rules. It is not a MongoDB server.
CONTROL
mkdir -p "$outdir"
dpkg-deb --root-owner-group -Zgzip --build "$root" "$outdir/mongodb-double_${release}.0_all.deb" >/dev/null
echo "$outdir/mongodb-double_${release}.0_all.deb"
