#!/bin/sh
# Shows, as a user runs it, what vector similarity adds to text search: the fake LLM
# server answers /v1/embeddings with the stand-in model where paraphrases and French
# questions land close (fakellm --embed thesaurus: needs apt-get install
# wordnet-base dict-freedict-fra-eng dict-freedict-eng-fra); every graph of a
# questions set is embedded with `nodius-ai embed`, then measured with
# `inspect eval --format json`, with and without --text-only. Prints MRR by kind,
# text alone → hybrid, over the whole set. Needs Go and Node.js (it reads the JSON).
#
#   sh rag/bench/hybrid.sh                      # rag/eval/testdata/heldout7
#   sh rag/bench/hybrid.sh rag/eval/testdata/heldout4
set -eu
cd "$(dirname "$0")/../.."
set_dir=${1:-rag/eval/testdata/heldout7}
work=$(mktemp -d)
trap 'kill "$fake" 2>/dev/null; rm -rf "$work"' EXIT
go build -o "$work/nodius-ai" ./cmd/nodius-ai
go build -o "$work/fakellm" ./agent/llm/llmtest/cmd/fakellm
"$work/fakellm" --addr 127.0.0.1:0 --embed thesaurus >"$work/url" &
fake=$!
while [ ! -s "$work/url" ]; do
	kill -0 "$fake" 2>/dev/null || { echo "fakellm did not start" >&2; exit 1; }
	sleep 0.2
done
export HOME="$work" XDG_CACHE_HOME="$work/cache" XDG_CONFIG_HOME="$work/config" XDG_DATA_HOME="$work/data"
set -- --base-url "$(head -1 "$work/url")/v1" --api-key test --embedding-model stand-in
for q in "$set_dir"/*.questions.json; do
	g=$(basename "$q" .questions.json)
	cp "$set_dir/$g.json" "$work/$g.json"
	# Each command's messages go to a log, shown when it fails (set -e stops there).
	run() { "$work/nodius-ai" --source "file:$work/$g.json" "$@" 2>"$work/log" || { cat "$work/log" >&2; exit 1; }; }
	run "$@" embed --graph "$g" >/dev/null
	run "$@" inspect eval --graph "$g" --format json --text-only "$q" >"$work/$g.text.json"
	run "$@" inspect eval --graph "$g" --format json "$q" >"$work/$g.hybrid.json"
done
# MRR by kind over every question of the set, from the per-question ranks.
node -e '
const fs = require("fs"), dir = process.argv[1];
const runs = {text: [], hybrid: []};
for (const f of fs.readdirSync(dir)) {
  const m = f.match(/\.(text|hybrid)\.json$/);
  if (m) runs[m[1]].push(...JSON.parse(fs.readFileSync(dir + "/" + f)).questions);
}
const mrr = (qs) => qs.reduce((s, q) => s + (q.rank > 0 ? 1 / q.rank : 0), 0) / qs.length;
const kinds = [...new Set(runs.text.map((q) => q.cat))].sort().concat("all");
for (const k of kinds) {
  const pick = (qs) => qs.filter((q) => k === "all" || q.cat === k);
  console.log(k.padEnd(12), String(pick(runs.text).length).padStart(4), "MRR text", mrr(pick(runs.text)).toFixed(3), "→ hybrid", mrr(pick(runs.hybrid)).toFixed(3));
}' "$work"
