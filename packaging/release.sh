#!/usr/bin/env bash
# `npm run release`: build cbwatch's release artefacts into release/ (gitignored):
#   cbwatch-<version>.tgz          npm pack: installs with `npm install -g ./cbwatch-<version>.tgz` (Node >= 20.18.1)
#   cbwatch_<version>_amd64.deb    Debian package carrying its own Node 24, the systemd unit, /etc/cbwatch and a
#                                  system user cbwatch (created on install, kept on remove)
#   cbwatch-<version>-oci.tar      the container image as an OCI image layout (packaging/image.sh: Debian 12
#                                  minbase plus the .deb, assembled with umoci), when CBWATCH_IMAGE asks for it
#   SHA256SUMS                     sha256sum of each
# Needs npm (and the npm registry: the Debian package's runtime dependencies and Node 24) and dpkg-deb.
# CBWATCH_IMAGE: 1 builds the image (failing when it cannot); auto, what `npm run release` sets, builds it when
# this runs as root with umoci, and debootstrap or the cached Debian root (.cache/bookworm-minbase), and says
# how to build it otherwise; unset or 0, as the tests run this script: no image (`npm test` never builds it).
# SOURCE_DATE_EPOCH, when set, fixes the build date and the files' times.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=$ROOT/release
VERSION=$(node -p 'require("./package.json").version')
DEB_VERSION=$VERSION
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}

rm -rf "$OUT" && mkdir -p "$OUT"

echo "== npm pack"
# dist/ is built from this tree (tsc, scripts/bundle.mjs, then scripts/build-info.mjs). The package is packed from a copy of the files
# package.json lists, with a package.json that has no scripts or dev dependencies: an installed cbwatch has
# nothing to build, and npm would otherwise offer to run `prepare` (tsc, which is not installed) on a global install.
# The build happens in a copy of the tree (its own dist/), never in this checkout's dist/: tests running beside
# this script spawn bin/cbwatch.js from dist/, and a rebuild there pulls files from under them.
TREE=$WORK/tree
mkdir -p "$TREE"
tar -C "$ROOT" --exclude=./node_modules --exclude=./dist --exclude=./release --exclude=./.cache --exclude=./.git \
  --exclude=./test-results --exclude=./bench/out -cf - . | tar -C "$TREE" -xf -
ln -s "$ROOT/node_modules" "$TREE/node_modules"
# The copy has no .git: the revision and branch come from this checkout.
export CBWATCH_REVISION=${CBWATCH_REVISION:-$(git rev-parse HEAD 2>/dev/null || echo unknown)}
export CBWATCH_BRANCH=${CBWATCH_BRANCH:-$(git rev-parse --abbrev-ref HEAD 2>/dev/null || echo unknown)}
(cd "$TREE" && npm run --silent build)
PKG=$WORK/pkg
mkdir -p "$PKG"
(cd "$TREE" && npm pack --dry-run --json --ignore-scripts 2>/dev/null) \
  | node -e 'for (const f of JSON.parse(require("fs").readFileSync(0, "utf8"))[0].files) console.log(f.path)' \
  | tar -C "$TREE" -cf - --verbatim-files-from -T - | tar -C "$PKG" -xpf -
node -e '
  const fs = require("fs"), p = process.argv[1], j = JSON.parse(fs.readFileSync(p, "utf8"));
  delete j.scripts; delete j.devDependencies; delete j.overrides;
  j.files.push("npm-shrinkwrap.json");
  j.bundleDependencies = Object.keys(j.dependencies);
  fs.writeFileSync(p, JSON.stringify(j, null, 2) + "\n");
' "$PKG/package.json"
# The production dependencies travel inside the tarball (bundleDependencies), installed here from
# package-lock.json, the one lock file in git: an install of the tarball, global or local, gets the tree the tests
# ran and asks the registry for nothing. npm ignores the shrinkwrap and the overrides of a local tarball, so without
# the bundle it would resolve the ranges afresh (fastify's light-my-request to a release that takes cookie 2, which
# declares Node 22: EBADENGINE on Node 20). npm-shrinkwrap.json, the lock's production packages, is what `npm ci`
# installs from here and stays in the tarball as the record of that tree.
node -e '
  const fs = require("fs"), [lockPath, pkgPath, out] = process.argv.slice(1);
  const lock = JSON.parse(fs.readFileSync(lockPath, "utf8")), pkg = JSON.parse(fs.readFileSync(pkgPath, "utf8"));
  const packages = {};
  for (const [path, entry] of Object.entries(lock.packages)) {
    if (path === "") {
      const { name, version, license, bin, engines, dependencies } = pkg;
      packages[path] = { name, version, license, dependencies, bin, engines };
    } else if (!entry.dev && !entry.devOptional) packages[path] = entry;
  }
  fs.writeFileSync(out, JSON.stringify({ name: lock.name, version: lock.version, lockfileVersion: lock.lockfileVersion, requires: true, packages }, null, 2) + "\n");
' "$ROOT/package-lock.json" "$PKG/package.json" "$PKG/npm-shrinkwrap.json"
(cd "$PKG" && npm ci --omit=dev --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null)
# What the dependencies publish besides their runtime code: tests, benchmarks, sources and type declarations,
# tooling dot-files, documentation (licences stay beside their code) and a docs page. cbwatch loads none of it.
# Their command-line tools stay (npm links the bins a package declares); the Debian package drops them below.
find "$PKG/node_modules" \( -name '.package-lock.json' -o -name '.eslintrc*' -o -name '.npmignore' -o -name '.gitattributes' \
  -o -name '*.map' -o -name '*.ts' -o -name '*.sh' -o -name 'index.html' -o -name '*.png' \) -type f -delete
find "$PKG/node_modules" -depth \( -name test -o -name benchmarks -o -name integration -o -name scripts -o -name .husky \) -type d \
  -exec rm -rf {} +
find "$PKG/node_modules" -type f \( -iname '*.md' -o -iname '*.markdown' \) ! -iname 'licen[cs]e*' -delete
rm -rf "$PKG/node_modules/.bin"
find "$PKG/node_modules" -type d -empty -delete
(cd "$PKG" && npm pack --silent --ignore-scripts --pack-destination "$OUT" >/dev/null)
TGZ=$OUT/cbwatch-$VERSION.tgz
[ -f "$TGZ" ] || { echo "npm pack did not write $TGZ" >&2; exit 1; }

echo "== Debian package"
NODE24=$(scripts/node24.sh)
STAGE=$WORK/deb
APP=$STAGE/usr/lib/cbwatch
mkdir -p "$APP" "$STAGE/DEBIAN" "$STAGE/usr/bin" "$STAGE/lib/systemd/system" "$STAGE/etc/cbwatch" \
  "$STAGE/usr/share/doc/cbwatch" "$STAGE/usr/share/lintian/overrides"
# The application is the npm tarball's content, its production dependencies included (bundled), as an install of
# the tarball gets them.
tar -xzf "$TGZ" -C "$WORK"
cp -a "$WORK/package/." "$APP/"
rm -f "$APP/npm-shrinkwrap.json"
# The dependencies' own command-line tools: cbwatch runs none, and nothing in node_modules needs to be executable.
find "$APP/node_modules" -depth -name bin -type d -exec rm -rf {} +
rm -f "$APP/node_modules/pino/bin.js" "$APP/node_modules/yaml/bin.mjs"
find "$APP/node_modules" -type f -exec chmod 0644 {} +
find "$APP" -type d -empty -delete
# The documentation lives where Debian keeps it; /usr/lib/cbwatch/docs points there (cbwatch's hints name it).
mv "$APP/docs" "$STAGE/usr/share/doc/cbwatch/docs"
ln -s ../../share/doc/cbwatch/docs "$APP/docs"
mv "$APP/CHANGELOG.md" "$STAGE/usr/share/doc/cbwatch/CHANGELOG.md"
gzip -9n "$STAGE/usr/share/doc/cbwatch/CHANGELOG.md"
# So do the README and the Markdown beside the alert rules and dashboards (the runbook, the thresholds table, the
# dashboards' guide): each moves to the same path under /usr/share/doc/cbwatch, and a relative link keeps its
# place under /usr/lib/cbwatch. The test fixtures' SOURCES.md files are data the simulator reads, and stay.
(cd "$APP" && find . \( -path ./node_modules -o -path ./test \) -prune -o -type f -name '*.md' -printf '%P\n') | while IFS= read -r f; do
  d=$(dirname "$f")
  mkdir -p "$STAGE/usr/share/doc/cbwatch/$d"
  mv "$APP/$f" "$STAGE/usr/share/doc/cbwatch/$f"
  ln -s "$(realpath -m --relative-to="$APP/$d" "$STAGE/usr/share/doc/cbwatch/$f")" "$APP/$f"
done
find "$APP" -type d -empty -delete
mkdir -p "$APP/node/bin"
install -m 0755 "$NODE24" "$APP/node/bin/node"
# Node's release binary keeps its symbol table (about a fifth of its size); cbwatch needs none of it.
strip --strip-unneeded --remove-section=.comment --remove-section=.note "$APP/node/bin/node"
install -m 0644 "$(dirname "$NODE24")/../LICENSE" "$APP/node/LICENSE"
install -m 0755 packaging/deb/cbwatch "$STAGE/usr/bin/cbwatch"
# The unit is deploy/systemd/cbwatch.service with the package's paths and its static user.
{
  echo '# cbwatch as a hardened systemd service, from the Debian package. Configure /etc/cbwatch/cbwatch.yml and put'
  echo '# the Couchbase password in /etc/cbwatch/couchbase-password (root-only, mode 0600), then'
  echo '# `systemctl enable --now cbwatch`. The password reaches the service through LoadCredential=.'
  sed -n '/^\[Unit\]/,$p' deploy/systemd/cbwatch.service \
    | sed -e 's|^ExecStart=.*|ExecStart=/usr/bin/cbwatch run --config /etc/cbwatch/cbwatch.yml|' \
          -e 's|/opt/cbwatch/node/bin/node|/usr/lib/cbwatch/node/bin/node|g' -e 's|/opt/cbwatch/dist/|/usr/lib/cbwatch/dist/|g' \
          -e '/^# A transient user per start/d' \
          -e 's|^DynamicUser=yes|# The system user the package created (kept on remove).\nUser=cbwatch\nGroup=cbwatch|'
} > "$STAGE/lib/systemd/system/cbwatch.service"
chmod 0644 "$STAGE/lib/systemd/system/cbwatch.service"
install -m 0644 deploy/systemd/cbwatch.yml "$STAGE/etc/cbwatch/cbwatch.yml"
install -m 0644 packaging/deb/copyright "$STAGE/usr/share/doc/cbwatch/copyright"
install -m 0644 packaging/deb/lintian-overrides "$STAGE/usr/share/lintian/overrides/cbwatch"
date_rfc=$(date -u -R -d "@$SOURCE_DATE_EPOCH")
printf 'cbwatch (%s) unstable; urgency=medium\n\n  * Release %s. The changes are in /usr/share/doc/cbwatch/CHANGELOG.md.gz.\n\n -- cbwatch maintainers <maintainers@cbwatch.invalid>  %s\n' \
  "$DEB_VERSION" "$VERSION" "$date_rfc" | gzip -9n > "$STAGE/usr/share/doc/cbwatch/changelog.gz"
# A manual page from `cbwatch --help`, run on the Node the package carries.
mkdir -p "$STAGE/usr/share/man/man1"
{
  printf '.TH CBWATCH 1 "%s" "cbwatch %s" "User Commands"\n' "$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%d)" "$VERSION"
  printf '.SH NAME\ncbwatch \\- Prometheus exporter and alerting kit for Couchbase Server\n'
  printf '.SH SYNOPSIS\n.B cbwatch\n[\\fIcommand\\fR] [\\fIflags\\fR]\n.SH DESCRIPTION\n.nf\n'
  "$APP/node/bin/node" "$APP/bin/cbwatch.js" --help | sed -e 's/\\/\\e/g' -e 's/^\./\\\&./' -e "s/^'/\\\\\&'/"
  printf '.fi\n.SH FILES\n/etc/cbwatch/cbwatch.yml, /lib/systemd/system/cbwatch.service, /usr/lib/cbwatch/alerts, /usr/lib/cbwatch/dashboards\n'
} | gzip -9n > "$STAGE/usr/share/man/man1/cbwatch.1.gz"
for s in postinst prerm postrm; do install -m 0755 "packaging/deb/$s" "$STAGE/DEBIAN/$s"; done
echo /etc/cbwatch/cbwatch.yml > "$STAGE/DEBIAN/conffiles"
installed_kb=$(du -sk --exclude=DEBIAN "$STAGE" | cut -f1)
cat > "$STAGE/DEBIAN/control" <<CONTROL
Package: cbwatch
Version: $DEB_VERSION
Architecture: amd64
Maintainer: cbwatch maintainers <maintainers@cbwatch.invalid>
Installed-Size: $installed_kb
Depends: adduser, libc6 (>= 2.28), libstdc++6, libgcc-s1
Section: net
Priority: optional
Homepage: https://github.com/cbwatch/cbwatch
Description: Prometheus exporter and alerting kit for Couchbase Server
 cbwatch polls a Couchbase Server cluster's REST API in the background and
 serves buckets, bucket statistics, XDCR replications, certificate expiry,
 security posture, node health, Search queries and backup repositories as
 Prometheus metrics. It carries its own Node.js 24, a hardened systemd unit
 and the alert rules and Grafana dashboards in /usr/lib/cbwatch.
CONTROL
(cd "$STAGE" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | sort -z | xargs -0 md5sum) > "$STAGE/DEBIAN/md5sums"
find "$STAGE" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
find "$STAGE" -type d -exec chmod 0755 {} +
DEB=$OUT/cbwatch_${DEB_VERSION}_amd64.deb
dpkg-deb --root-owner-group -Zxz -z6 --build "$STAGE" "$DEB" >/dev/null

(cd "$OUT" && sha256sum "$(basename "$TGZ")" "$(basename "$DEB")" > SHA256SUMS)

# The image writes SHA256SUMS again, with itself.
case "${CBWATCH_IMAGE:-0}" in
  1) bash packaging/image.sh ;;
  auto)
    if [ "$(id -u)" -eq 0 ] && command -v umoci >/dev/null && { [ -x .cache/bookworm-minbase/usr/bin/dpkg ] || command -v debootstrap >/dev/null; }; then
      bash packaging/image.sh
    else
      echo "== OCI image: not built (it needs root, umoci and debootstrap); \`sudo bash packaging/image.sh\` builds it from release/'s .deb"
    fi
    ;;
  0) ;;
  *) echo "CBWATCH_IMAGE must be 1, auto or 0, not '$CBWATCH_IMAGE'" >&2; exit 2 ;;
esac
echo "== release/"
(cd "$OUT" && ls -l && cat SHA256SUMS)
