#!/usr/bin/env bash
# Checks that packages import only what their room allows: lockimpl (with
# its subpackages, one room), results, redisson and guard import no package of this module,
# workloads -> guard, lockimpl, results; impls -> guard, lockimpl, redisson, results, workloads;
# redisenv/redisenvtest (a test helper) -> redisenv, internal/testkit;
# results/resultstest (test fixtures) -> results;
# faults -> redisenv, results; plots -> results;
# report -> plots, results;
# scenarios -> faults, guard, impls, lockimpl, redisenv, redisson, results, workloads;
# harness -> what it orchestrates: workloads, scenarios, redisenv, report (and below);
# perf -> guard, impls, lockimpl, redisson, results, workloads;
# internal/infile (how every input file is opened) and lockimpl/kind (the
# lock kinds' names and properties, apart from lockimpl's client so that
# data packages need not pull in go-redis) import no package of this
# module, and every package may import them;
# nothing imports cmd/*. Test-only imports (redisenvtest) are not counted.
set -euo pipefail
cd "$(dirname "$0")/.."
mod=$(go list -m)

# allowed PKG: the module packages PKG may depend on (transitively), "*" for any.
allowed() {
  case "$1" in
    lockimpl | lockimpl/* | results | redisenv | redisson | guard | internal/infile) echo "" ;;
    redisenv/redisenvtest) echo "internal/testkit redisenv" ;;
    results/resultstest) echo "results" ;;
    workloads) echo "guard lockimpl results" ;;
    impls) echo "guard lockimpl redisson results workloads" ;;
    faults) echo "redisenv results" ;;
    plots) echo "results" ;;
    report) echo "plots results" ;;
    scenarios) echo "faults guard impls lockimpl redisenv redisson results workloads" ;;
    harness) echo "faults guard impls lockimpl plots redisenv redisson report results scenarios workloads" ;;
    perf) echo "guard impls lockimpl redisson results workloads" ;;
    internal/* | cmd/*) echo "*" ;;
    *) echo "?" ;;
  esac
}

fail=0
while read -r pkg deps; do
  rel=${pkg#"$mod"/}
  rule=$(allowed "$rel")
  if [ "$rule" = "?" ]; then
    echo "depcheck: $rel has no rule; add one to scripts/depcheck.sh" >&2
    fail=1
    continue
  fi
  for dep in $deps; do
    case "$dep" in "$mod"/*) ;; *) continue ;; esac
    d=${dep#"$mod"/}
    # Every package may read its input files through infile, and name lock
    # kinds through lockimpl/kind.
    case "$d" in internal/infile | lockimpl/kind) continue ;; esac
    # lockimpl's other subpackages are lockimpl's own room.
    case "$d" in lockimpl/*) d=lockimpl ;; esac
    # lockimpl/kind, which everyone imports, imports nothing of lockimpl's.
    case "$rel" in lockimpl/kind) ;; lockimpl | lockimpl/*) [ "$d" = lockimpl ] && continue ;; esac
    case "$d" in cmd/*)
      echo "depcheck: $rel imports $d: nothing may import cmd/*" >&2
      fail=1
      continue ;;
    esac
    [ "$rule" = "*" ] && continue
    ok=0
    for a in $rule; do [ "$d" = "$a" ] && ok=1; done
    if [ $ok = 0 ]; then
      echo "depcheck: $rel imports $d; it may import only: ${rule:-no package of this module}" >&2
      fail=1
    fi
  done
done < <(go list -f '{{.ImportPath}}{{range .Deps}} {{.}}{{end}}' ./...)

[ $fail = 0 ] && echo "depcheck: package dependency directions hold"
exit $fail
