#!/usr/bin/env bash
# Builds what the container images hold into DIR (default bin/image): bench
# and chaos as static binaries (CGO_ENABLED=0; go-redis and everything else
# they link is pure Go), and the CA certificates of this machine for
# rediss:// URLs. `make image` and the container test of deploy/k8s both
# build through here.
set -euo pipefail
dir=${1:-bin/image}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
cd "$(dirname "$0")/.."
CGO_ENABLED=0 ${GO:-go} build -trimpath -ldflags "${LDFLAGS:-}" -o "$dir/" ./cmd/bench ./cmd/chaos
certs=/etc/ssl/certs/ca-certificates.crt
if [ -f "$certs" ]; then
  cp "$certs" "$dir/ca-certificates.crt"
else
  echo "image-context: $certs is missing: the image will trust no CA for rediss:// (apt-get install ca-certificates)" >&2
  : >"$dir/ca-certificates.crt"
fi
