#!/usr/bin/env bash
# Compares two builds of bench on one host, in one session: each profile
# runs ROUNDS times on each build, old and new alternating and each going
# first in turn (so the host's drift falls on both alike), and the medians
# and their ratio (new / old) are printed per figure.
#
# Usage: scripts/ab-bench.sh [-r ROUNDS] [-p "PROFILES"] [-o DIR] [-m MIN] OLD NEW [-- BENCH-RUN-FLAGS...]
#   OLD, NEW  commits (anything git rev-parse takes), or "." for the working tree
#   -r        rounds per build and profile (default 3)
#   -p        profiles, space-separated (default "rw90 mutex"), each at its defaults
#             unless BENCH-RUN-FLAGS say otherwise
#   -o        where the builds and results go (default: a temporary directory, removed)
#   -m        fail (exit 1) when a profile's median ops/s ratio is below MIN, e.g. 0.95
# Example: scripts/ab-bench.sh 9ce50fb . -m 0.95
#          scripts/ab-bench.sh -r 5 -p uncontended HEAD~1 . -- --duration 10s
set -euo pipefail

rounds=3 profiles="rw90 mutex" out="" minratio="" builds=() extra=()
usage() { sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; }
# Options may come before or after OLD and NEW; what follows -- goes to bench run.
while [ $# -gt 0 ]; do
  case $1 in
    -r | -p | -o | -m)
      [ $# -ge 2 ] || { echo "ab-bench: $1 needs a value; -h for help" >&2; exit 2; }
      case $1 in -r) rounds=$2 ;; -p) profiles=$2 ;; -o) out=$2 ;; -m) minratio=$2 ;; esac
      shift 2 ;;
    -h | --help) usage; exit 0 ;;
    --) shift; extra=("$@"); break ;;
    -*) echo "ab-bench: unknown option $1; -h for help" >&2; exit 2 ;;
    *) builds+=("$1"); shift ;;
  esac
done
if [ ${#builds[@]} -ne 2 ]; then
  echo "ab-bench: give two builds, OLD and NEW (commits, or . for the working tree); -h for help" >&2
  exit 2
fi
old=${builds[0]} new=${builds[1]}
if [ -n "$minratio" ] && ! [[ $minratio =~ ^[0-9]*\.?[0-9]+$ ]]; then
  echo "ab-bench: -m $minratio: give a ratio, e.g. 0.95" >&2
  exit 2
fi
case $rounds in '' | *[!0-9]* | 0) echo "ab-bench: -r $rounds: give a whole number of rounds, 1 or more" >&2; exit 2 ;; esac
command -v jq >/dev/null || { echo "ab-bench: jq is missing; install it with: apt-get install -y jq" >&2; exit 2; }

top=$(git rev-parse --show-toplevel)
if [ -z "$out" ]; then
  out=$(mktemp -d)
  trap 'rm -rf "$out"; git -C "$top" worktree prune' EXIT
else
  mkdir -p "$out"
  trap 'git -C "$top" worktree prune' EXIT
fi

# build NAME REV: bench from REV ("." is the working tree) into $out/NAME/bench.
build() {
  local name=$1 rev=$2 src=$top
  if [ "$rev" != "." ]; then
    local sha
    sha=$(git -C "$top" rev-parse --verify -q "$rev^{commit}") || { echo "ab-bench: $rev is not a commit here" >&2; exit 2; }
    src=$out/$name/src
    rm -rf "$src"
    git -C "$top" worktree add -q --detach "$src" "$sha"
  fi
  mkdir -p "$out/$name"
  (cd "$src" && go build -o "$out/$name/bench" ./cmd/bench)
  if [ "$rev" != "." ]; then
    git -C "$top" worktree remove --force "$src"
  fi
  if [ "$rev" = "." ]; then
    echo "ab-bench: $name = the working tree (on $(git -C "$top" rev-parse --short HEAD))" >&2
  else
    echo "ab-bench: $name = $rev ($(git -C "$top" rev-parse --short "$rev"))" >&2
  fi
}
build old "$old"
build new "$new"

# figures FILE: one result's figures, tab-separated in the order of $cols.
cols="ops/s redis-cpu lockbench-cpu host-cpu hold-p50 hold-err-p50 hold-err-p99 waits-cpu acquire-p99"
figures() {
  jq -r '[.throughput.ops_per_s, (.cpu.redis_cores // 0), (.cpu.load_cores // 0), (.cpu.host_busy_cores // 0),
          (.latency_us.hold.p50_us // 0), (.waits.hold.p50_us // "-"), (.waits.hold.p99_us // "-"),
          (.cpu.wait_cores // "-"), (.latency_us.acquire.p99_us // 0)] | @tsv' "$1"
}

fail=0
for profile in $profiles; do
  for r in $(seq 1 "$rounds"); do
    order="old new"
    [ $((r % 2)) -eq 0 ] && order="new old"
    for b in $order; do
      dir=$out/results/$profile/$b/$r
      mkdir -p "$dir"
      echo "ab-bench: $profile round $r/$rounds: $b" >&2
      rc=0
      "$out/$b/bench" run --profile "$profile" --quiet --out "$dir" ${extra[@]+"${extra[@]}"} >"$dir/summary.txt" 2>"$dir/stderr.txt" || rc=$?
      if [ $rc -ne 0 ]; then
        echo "ab-bench: $profile round $r on $b failed (exit $rc); its output:" >&2
        cat "$dir/summary.txt" "$dir/stderr.txt" >&2
        exit 1
      fi
      files=("$dir"/*.json)
      figures "${files[0]}" >"$dir/figures.tsv"
    done
  done
  echo
  echo "$profile: medians of $rounds rounds (old = $old, new = $new)"
  # Median per column per build, then new/old.
  awk -v cols="$cols" -v minratio="$minratio" -F'\t' '
    function fmt(x) { return x == "-" ? x : sprintf("%.4g", x) }
    function median(a, n,   i, j, t) {
      for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] > a[j]; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
      return n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2
    }
    { b = FILENAME ~ /\/old\// ? "old" : "new"; n[b]++
      for (c = 1; c <= NF; c++) { v[b, c, n[b]] = $c; if ($c == "-") miss[b, c] = 1 } }
    END {
      split(cols, name, " ")
      printf "%-14s %12s %12s %8s   %s\n", "figure", "old", "new", "new/old", "rounds (old | new)"
      for (c = 1; c <= length(name); c++) {
        for (bi = 1; bi <= 2; bi++) {
          b = bi == 1 ? "old" : "new"; list[b] = ""
          for (i = 1; i <= n[b]; i++) { x[i] = v[b, c, i]; list[b] = list[b] (i > 1 ? " " : "") fmt(x[i]) }
          m[b] = miss[b, c] ? "-" : median(x, n[b])
        }
        ratio = (m["old"] != "-" && m["new"] != "-" && m["old"] > 0) ? sprintf("%.2f", m["new"] / m["old"]) : "-"
        printf "%-14s %12s %12s %8s   %s | %s\n", name[c], fmt(m["old"]), fmt(m["new"]), ratio, list["old"], list["new"]
        if (c == 1 && minratio != "" && ratio != "-" && ratio + 0 < minratio + 0) low = 1
      }
      exit low
    }' "$out"/results/"$profile"/*/*/figures.tsv || { echo "$profile: new/old ops/s below $minratio" >&2; fail=1; }
done
[ -n "$minratio" ] && [ $fail -eq 0 ] && echo && echo "ab-bench: every profile's median ops/s at least $minratio× the old build's"
exit $fail
