#!/usr/bin/env bash
# Installs what lockbench needs beyond Go modules: a redis-server binary.
# As root with apt-get it installs Debian's redis-server package; otherwise
# it prints the exact command and fails.
set -euo pipefail

server=${REDIS_SERVER:-redis-server}
install_cmd="apt-get install -y redis-server"

if ! command -v go >/dev/null 2>&1; then
  echo "setup: Go is missing: install Go 1.26 or newer (https://go.dev/dl/)" >&2
  exit 1
fi

if command -v "$server" >/dev/null 2>&1; then
  echo "setup: $("$server" --version | cut -d' ' -f1-3) at $(command -v "$server")"
  exit 0
fi

if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "setup: $server is missing. Install it with:" >&2
  if command -v apt-get >/dev/null 2>&1; then
    echo "  sudo apt-get update && sudo $install_cmd" >&2
  else
    echo "  your package manager's redis package (e.g. 'brew install redis', 'dnf install redis')" >&2
  fi
  echo "or set REDIS_SERVER=/path/to/redis-server, or use your own Redis: REDIS_URL=redis://host:6379/0" >&2
  exit 1
fi

echo "setup: $server is missing; installing: apt-get update && $install_cmd"
# lockbench starts its own servers on free ports; keep the package from
# starting a system-wide one on 6379 (Debian's policy-rc.d convention).
policy=/usr/sbin/policy-rc.d
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' >"$policy"
  chmod +x "$policy"
  trap 'rm -f "$policy"' EXIT
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq redis-server >/dev/null
command -v "$server" >/dev/null 2>&1 || { echo "setup: $install_cmd ran, but $server is still not on PATH" >&2; exit 1; }
echo "setup: installed $("$server" --version | cut -d' ' -f1-3)"
