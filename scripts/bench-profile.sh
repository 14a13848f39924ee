#!/usr/bin/env bash
# bench-profile.sh: the datapath bench under perf, and where the programs'
# own time went, source line by source line, in ns a packet
# (scripts/bpfprof). Choose the cases with SLUICE_BENCH, as for the bench;
# each is profiled with the minimal UPF's case beside it.
#
#   SLUICE_BENCH='uplink, 1 PDR$' scripts/bench-profile.sh
#   SLUICE_BENCH='100,000 sessions, UE' SLUICE_BENCH_ROUNDS=3 scripts/bench-profile.sh
#
# perf samples every CPU's clock (-F 20000): a sample's period is the CPU
# time it stands for, and a program's samples over its runs its cost a
# packet. The clock reads of BPF statistics around each run, and the
# helpers a program calls, are not in its own code.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
: "${SLUICE_BENCH:?set SLUICE_BENCH to the cases to profile (a regexp of their names), e.g. 'uplink, 1 PDR\$'}"
command -v perf > /dev/null || { echo "bench-profile.sh: perf is not installed (apt-get install linux-perf)" >&2; exit 1; }
# PROFILE_DIR keeps perf.data and lines.json there, to read them again:
#   perf script -i DIR/perf.data -F period,ip | go run ./scripts/bpfprof -lines DIR/lines.json -top 60
if [ -n "${PROFILE_DIR:-}" ]; then
	work=$PROFILE_DIR
	mkdir -p "$work"
else
	work=$(mktemp -d)
	trap 'rm -rf "$work"' EXIT
fi

cd "$root"
go test -c -o "$work/datapath.test" ./internal/datapath
(cd internal/datapath && SLUICE_BENCH_LINES="$work/lines.json" \
	perf record -q -F 20000 -a -o "$work/perf.data" -- \
	"$work/datapath.test" -test.run '^$' -test.bench Datapath -test.benchtime 1x -test.timeout 60m)
perf script -i "$work/perf.data" -F period,ip 2> /dev/null | go run ./scripts/bpfprof -lines "$work/lines.json"
