#!/usr/bin/env bash
# Runs nodius-ai's MCP server against a third-party client, the MCP Inspector's
# command-line mode (npm @modelcontextprotocol/inspector): tools/list and tools/call
# over stdio, and over HTTP with and without the bearer token (TestInspectorCLI).
#
# The inspector is installed once into a cache directory (npm registry needed the
# first time); `go test` itself never reaches the network. Without npm or node the
# script says so and exits 0.
#
#   mcpserver/inspector-test.sh
#   NODIUS_AI_INSPECTOR_VERSION=0.16.8 NODIUS_AI_INSPECTOR_DIR=/tmp/insp mcpserver/inspector-test.sh
set -euo pipefail
cd "$(dirname "$0")/.."

# 0.16.8 runs on Node 20 (newer releases want Node >= 22).
version="${NODIUS_AI_INSPECTOR_VERSION:-0.16.8}"
if ! command -v npm >/dev/null 2>&1 || ! command -v node >/dev/null 2>&1; then
  echo "skip: npm and node are needed for the MCP Inspector test (TestInspectorCLI); install Node.js to run it"
  exit 0
fi
dir="${NODIUS_AI_INSPECTOR_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/nodius-ai/mcp-inspector-$version}"
bin="$dir/node_modules/.bin/mcp-inspector"
if [ ! -x "$bin" ]; then
  echo "installing @modelcontextprotocol/inspector@$version into $dir"
  mkdir -p "$dir"
  if ! npm install --prefix "$dir" --no-audit --no-fund --loglevel=error "@modelcontextprotocol/inspector@$version" >"$dir/install.log" 2>&1; then
    # Not reaching the npm registry is no failure of nodius-ai: say so and skip.
    echo "skip: could not install @modelcontextprotocol/inspector@$version (log below); TestInspectorCLI not run" >&2
    cat "$dir/install.log" >&2
    rm -rf "$dir"
    exit 0
  fi
fi
NODIUS_AI_TEST_INSPECTOR="$bin" go test -count=1 -run '^TestInspectorCLI$' -v ./mcpserver
