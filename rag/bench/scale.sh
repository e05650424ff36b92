#!/bin/sh
# Measures retrieval on large file graphs the way a user runs it: the built binary,
# `inspect context` on a generated 10,000-node and 100,000-node graph, first with an
# empty index cache (the graph is parsed, indexed and cached), then twice more on
# the unchanged file (served from the cache). Each figure is taken RUNS times
# (default 3); the best and the median are printed: wall time, CPU time (user +
# system) and peak memory (maxrss). Needs GNU time (/usr/bin/time).
#
#   sh rag/bench/scale.sh            # in a temporary directory
#   WORK=/tmp/scale RUNS=5 sh rag/bench/scale.sh
set -eu
cd "$(dirname "$0")/../.."
work=${WORK:-$(mktemp -d)}
runs=${RUNS:-3}
mkdir -p "$work"
go build -o "$work/nodius-ai" ./cmd/nodius-ai
for n in 10000 100000; do
	[ -f "$work/g$n.json" ] || go run ./datasource/gen/cmd/gengraph -nodes "$n" -o "$work/g$n.json"
done
export HOME="$work" XDG_CACHE_HOME="$work/cache" XDG_CONFIG_HOME="$work/config" XDG_DATA_HOME="$work/data"
unset NODIUS_AI_INDEX_CACHE NODIUS_AI_SOURCE 2>/dev/null || true

# run FILE OUT: one `inspect context`, its "wall cpu maxrss-KB" appended to OUT.
run() {
	/usr/bin/time -o "$work/time" -f "%e %U %S %M" \
		"$work/nodius-ai" --source "file:$1" inspect context --graph gen-1 --format json \
		"what runs after fetch-orders-12 when the retry fails" >/dev/null
	awk '{ printf "%.2f %.2f %d\n", $1, $2 + $3, $4 }' "$work/time" >>"$2"
}

# summary OUT LABEL: best and median of each column.
summary() {
	col() { cut -d' ' -f"$1" "$2" | sort -n | awk '{ v[NR] = $1 } END { printf "%s (median %s)", v[1], v[int((NR + 1) / 2)] }'; }
	printf '  %-16s wall %s s, CPU %s s, peak %s KB  [%d runs]\n' "$2" \
		"$(col 1 "$1")" "$(col 2 "$1")" "$(col 3 "$1")" "$(wc -l <"$1")"
}

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)"
for n in 10000 100000; do
	echo "$n nodes, $(du -h "$work/g$n.json" | cut -f1) file:"
	rm -f "$work/first" "$work/cached"
	i=0
	while [ "$i" -lt "$runs" ]; do
		rm -rf "$work/cache"
		run "$work/g$n.json" "$work/first"
		run "$work/g$n.json" "$work/cached"
		run "$work/g$n.json" "$work/cached"
		i=$((i + 1))
	done
	summary "$work/first" "first (no cache)"
	summary "$work/cached" "cached"
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)"
