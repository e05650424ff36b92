#!/bin/sh
# Measures retrieval on large file graphs the way a user runs it: the built binary,
# `inspect context` on a generated 10,000-node and 100,000-node graph, first with an
# empty index cache (the graph is parsed, indexed and cached), then twice more on
# the unchanged file (served from the cache). Prints wall time, CPU time and peak
# memory (maxrss) of each run. Needs GNU time (/usr/bin/time).
#
#   sh rag/bench/scale.sh            # in a temporary directory
#   WORK=/tmp/scale sh rag/bench/scale.sh
set -eu
cd "$(dirname "$0")/../.."
work=${WORK:-$(mktemp -d)}
mkdir -p "$work"
go build -o "$work/nodius-ai" ./cmd/nodius-ai
for n in 10000 100000; do
	[ -f "$work/g$n.json" ] || go run ./datasource/gen/cmd/gengraph -nodes "$n" -o "$work/g$n.json"
done
export HOME="$work" XDG_CACHE_HOME="$work/cache" XDG_CONFIG_HOME="$work/config" XDG_DATA_HOME="$work/data"
unset NODIUS_AI_INDEX_CACHE NODIUS_AI_SOURCE 2>/dev/null || true
run() {
	/usr/bin/time -f "  $2: %e s wall, %U+%S s CPU, %M KB peak" \
		"$work/nodius-ai" --source "file:$1" inspect context --graph gen-1 --format json \
		"what runs after fetch-orders-12 when the retry fails" >/dev/null
}
for n in 10000 100000; do
	echo "$n nodes, $(du -h "$work/g$n.json" | cut -f1) file:"
	rm -rf "$work/cache"
	run "$work/g$n.json" "first (no cache)"
	run "$work/g$n.json" "second (cached)"
	run "$work/g$n.json" "third (cached)"
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)"
