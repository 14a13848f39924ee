#!/usr/bin/env bash
# bench-trial.sh OTHER: the datapath bench with upfd's eBPF objects of OTHER
# measured beside this tree's, paired in one run (SLUICE_BENCH_TRIAL).
#
# OTHER is a commit (its objects are built in a temporary work tree) or a
# directory holding a work tree of this repository whose objects are built
# already (make generate, or go generate ./internal/datapath). The two must
# agree on the maps, types and configuration variables: a change to the
# programs alone.
#
#   scripts/bench-trial.sh HEAD~1                      # before and after a change
#   SLUICE_BENCH='1 PDR$' SLUICE_BENCH_ROUNDS=15 scripts/bench-trial.sh ../trial
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
other=${1:?"usage: $0 COMMIT|WORKTREE (see the comment at the top)"}
obj=$(mktemp --suffix=.o)
tree=""
cleanup() {
	rm -f "$obj"
	if [ -n "$tree" ]; then git -C "$root" worktree remove --force "$tree"; fi
}
trap cleanup EXIT

if [ -d "$other" ]; then
	cp "$other/internal/datapath/bpf_bpfel.o" "$obj"
else
	tree=$(mktemp -d)
	git -C "$root" worktree add --detach --quiet "$tree" "$other"
	(cd "$tree" && go generate ./internal/datapath)
	cp "$tree/internal/datapath/bpf_bpfel.o" "$obj"
fi
cd "$root"
SLUICE_BENCH_TRIAL="$obj" go test -run '^$' -bench Datapath -benchtime 1x -timeout 60m ./internal/datapath
