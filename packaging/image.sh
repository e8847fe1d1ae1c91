#!/usr/bin/env bash
# The container image without a registry: release/cbwatch-<version>-oci.tar, an OCI image layout in a tar file
# (`podman load -i`, `docker load -i` from Docker 25 on, `skopeo copy oci-archive:…`), built from
# release/cbwatch_<version>_amd64.deb (run packaging/release.sh first; `npm run release` runs both):
#   - Debian 12 (bookworm) minbase from debootstrap, the root test/release/minbase.test.ts also uses, built once
#     into .cache/bookworm-minbase (that needs deb.debian.org) and copied for each build;
#   - the .deb installed in it with dpkg -i (its postinst creates the system user cbwatch), then what a container
#     does not use removed: apt's package lists and caches, logs, manual pages, other packages' documentation and
#     translations (a dpkg path-exclude file keeps later installs as slim, as Debian's slim images do), and the
#     build machine's /etc/hostname and resolv.conf (the container runtime provides both);
#   - assembled with Debian's umoci as one layer; config: the user cbwatch (numeric, so Kubernetes'
#     runAsNonRoot can check it), /usr/bin/cbwatch as entrypoint, `run --config /etc/cbwatch/cbwatch.yml` as
#     command, port 9420, CREDENTIALS_DIRECTORY=/run/secrets (the shipped cbwatch.yml reads
#     $CREDENTIALS_DIRECTORY/couchbase-password: a secret named couchbase-password, where podman, Docker and
#     Compose mount secrets), CBWATCH_WEB_LISTEN_ADDRESS=:9420 (run's default anyway; it makes `cbwatch demo`,
#     whose own default is 127.0.0.1:9420, listen where `-p 9420:9420` reaches it, and the health check follows
#     it), the org.opencontainers.image.* annotations as labels and manifest annotations;
#   - the health check: the OCI image configuration has no field for one. Docker's image configuration, a
#     superset of OCI's, has `Healthcheck`; it is added to the configuration's `config` object as Docker writes
#     it (the Dockerfile's: dist/healthcheck.cjs on the package's Node with --jitless, every 30 s). Docker
#     honours it after `docker load`; OCI tools ignore the field, podman included: give podman the same command
#     with --health-cmd (README.md, "Container image"). The label io.github.cbwatch.healthcheck names it too.
# Needs root (the copy of the root keeps its owners, dpkg -i runs in it with chroot), umoci, and debootstrap when
# the cached root is missing. SOURCE_DATE_EPOCH, when set, is the image's creation time (by default the last
# commit's time, as release.sh). Ends by rewriting release/SHA256SUMS over all artefacts.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=$ROOT/release
VERSION=$(node -p 'require("./package.json").version')
DEB=$OUT/cbwatch_${VERSION}_amd64.deb
IMAGE=$OUT/cbwatch-$VERSION-oci.tar
CACHE=$ROOT/.cache/bookworm-minbase
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}
CREATED=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)
started=$(date +%s%N)

[ -f "$DEB" ] || { echo "image.sh: $DEB is missing: run packaging/release.sh first" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "image.sh: needs root (a Debian root with its owners, dpkg -i in it with chroot)" >&2; exit 1; }
command -v umoci >/dev/null || { echo "image.sh: needs umoci (apt-get install umoci)" >&2; exit 1; }

echo "== OCI image"
if [ ! -x "$CACHE/usr/bin/dpkg" ]; then
  command -v debootstrap >/dev/null || { echo "image.sh: needs debootstrap (apt-get install debootstrap) to build $CACHE" >&2; exit 1; }
  rm -rf "$CACHE"
  debootstrap --variant=minbase --include=adduser bookworm "$CACHE" http://deb.debian.org/debian
fi
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
RFS=$WORK/rootfs
cp -a "$CACHE" "$RFS"
in_root() { chroot "$RFS" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C "$@"; }

# Debian's slim images' dpkg excludes (debuerreotype), keeping cbwatch's own documentation: the launcher's
# hints and /usr/lib/cbwatch/docs point into /usr/share/doc/cbwatch.
cat > "$RFS/etc/dpkg/dpkg.cfg.d/slim" <<'EXCLUDES'
# A container image: no manual pages, info pages or translations, and of the documentation only the copyright
# files (and cbwatch's own, which its hints name). Remove this file before installing a package to get them.
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-include /usr/share/doc/cbwatch/*
path-exclude /usr/share/man/*
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/lintian/*
path-exclude /usr/share/linda/*
path-exclude /usr/share/locale/*
EXCLUDES
cp "$DEB" "$RFS/tmp/cbwatch.deb"
in_root dpkg -i /tmp/cbwatch.deb >/dev/null
rm -f "$RFS/tmp/cbwatch.deb"
# The revision the package was built from (its build-info.json), not this checkout's HEAD.
REVISION=$(node -p 'require(process.argv[1]).revision' "$RFS/usr/lib/cbwatch/dist/build-info.json")
uid=$(in_root id -u cbwatch)
gid=$(in_root id -g cbwatch)
[ "$uid" -ne 0 ] || { echo "image.sh: the cbwatch user is uid 0" >&2; exit 1; }
# What debootstrap and dpkg left that the minbase packages already had before the excludes applied.
find "$RFS/usr/share/doc" -mindepth 1 -maxdepth 1 ! -name cbwatch -exec sh -c '
  for d; do find "$d" -mindepth 1 ! -name copyright ! -type d -delete; find "$d" -mindepth 1 -type d -empty -delete; done' sh {} +
rm -rf "$RFS"/usr/share/man/* "$RFS"/usr/share/info/* "$RFS"/usr/share/groff/* "$RFS"/usr/share/lintian/* "$RFS"/usr/share/locale/*
rm -rf "$RFS"/var/lib/apt/lists/* "$RFS"/var/cache/apt/* "$RFS"/var/cache/debconf/*-old "$RFS"/var/lib/dpkg/*-old
find "$RFS/var/log" -type f -delete
rm -f "$RFS/etc/hostname"
: > "$RFS/etc/resolv.conf"

# The image: one layer holding the root, then its configuration.
OCI=$WORK/oci
umoci init --layout "$OCI"
umoci new --image "$OCI:$VERSION"
umoci insert --image "$OCI:$VERSION" --history.created "$CREATED" \
  --history.created_by "debootstrap --variant=minbase --include=adduser bookworm; dpkg -i cbwatch_${VERSION}_amd64.deb" \
  "$RFS" /
annotations=(
  "org.opencontainers.image.title=cbwatch"
  "org.opencontainers.image.description=Prometheus exporter and alerting kit for Couchbase Server"
  "org.opencontainers.image.version=$VERSION"
  "org.opencontainers.image.revision=$REVISION"
  "org.opencontainers.image.created=$CREATED"
  "org.opencontainers.image.source=https://github.com/cbwatch/cbwatch"
  "org.opencontainers.image.documentation=https://github.com/cbwatch/cbwatch#readme"
  "org.opencontainers.image.licenses=Apache-2.0"
  "org.opencontainers.image.vendor=cbwatch"
)
HEALTH_CMD="/usr/lib/cbwatch/node/bin/node --jitless /usr/lib/cbwatch/dist/healthcheck.cjs"
args=()
for a in "${annotations[@]}"; do args+=(--config.label "$a" --manifest.annotation "$a"); done
umoci config --image "$OCI:$VERSION" --no-history --created "$CREATED" --author "cbwatch maintainers" \
  --architecture amd64 --os linux \
  --config.user "$uid:$gid" \
  --config.entrypoint /usr/bin/cbwatch \
  --config.cmd run --config.cmd --config --config.cmd /etc/cbwatch/cbwatch.yml \
  --config.exposedports 9420/tcp \
  --config.env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  --config.env CREDENTIALS_DIRECTORY=/run/secrets \
  --config.env CBWATCH_WEB_LISTEN_ADDRESS=:9420 \
  --config.workingdir / \
  --config.stopsignal SIGTERM \
  --config.label "io.github.cbwatch.healthcheck=$HEALTH_CMD" \
  "${args[@]}"
umoci gc --layout "$OCI"

# Docker's Healthcheck in the configuration (see the top of this file), then the manifest and the index that
# name the configuration by digest. The name a load gives the image: podman and Docker read
# org.opencontainers.image.ref.name (the tag) and io.containerd.image.name (the full name) of the index.
node - "$OCI" "$HEALTH_CMD" "$VERSION" <<'NODE'
const fs = require('fs'), path = require('path'), crypto = require('crypto');
const [oci, healthCmd, version] = process.argv.slice(2);
const blob = (d) => path.join(oci, 'blobs', ...d.split(':'));
const put = (obj) => {
  const text = Buffer.from(JSON.stringify(obj));
  const digest = 'sha256:' + crypto.createHash('sha256').update(text).digest('hex');
  fs.writeFileSync(blob(digest), text);
  return { digest, size: text.length };
};
const index = JSON.parse(fs.readFileSync(path.join(oci, 'index.json'), 'utf8'));
if (index.manifests.length !== 1) throw new Error('expected one manifest in index.json');
const mdesc = index.manifests[0];
const manifest = JSON.parse(fs.readFileSync(blob(mdesc.digest), 'utf8'));
const config = JSON.parse(fs.readFileSync(blob(manifest.config.digest), 'utf8'));
const s = 1e9;
config.config.Healthcheck = { Test: ['CMD', ...healthCmd.split(' ')], Interval: 30 * s, Timeout: 5 * s, StartPeriod: 20 * s, Retries: 3 };
const old = [mdesc.digest, manifest.config.digest];
Object.assign(manifest.config, put(config));
Object.assign(mdesc, put(manifest));
mdesc.annotations = { ...mdesc.annotations, 'org.opencontainers.image.ref.name': version, 'io.containerd.image.name': `localhost/cbwatch:${version}` };
fs.writeFileSync(path.join(oci, 'index.json'), JSON.stringify(index));
for (const d of old) fs.rmSync(blob(d));
NODE

rm -f "$IMAGE"
tar --sort=name --owner=0 --group=0 --numeric-owner --mode=a+rX,u+w --mtime="@$SOURCE_DATE_EPOCH" -C "$OCI" -cf "$IMAGE" oci-layout index.json blobs
(cd "$OUT" && sha256sum "cbwatch-$VERSION.tgz" "$(basename "$DEB")" "$(basename "$IMAGE")" > SHA256SUMS)
ms=$(( ($(date +%s%N) - started) / 1000000 ))
echo "image.sh: $(basename "$IMAGE"), $(du -m "$IMAGE" | cut -f1) MB, user cbwatch ($uid:$gid), in $((ms / 1000)).$(printf '%03d' $((ms % 1000))) s"
