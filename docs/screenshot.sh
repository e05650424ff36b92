#!/bin/sh
# Makes docs/chat.png, the README's screenshot, as a user sees the chat: the built
# binary in a 150x36 tmux window, the fake LLM server playing docs/screenshot-script.json
# (a tool call, an answer, a proposal) over a copy of examples/nba.json; the pane is
# captured with its colours and drawn by docs/ansi2mvg.py for ImageMagick.
# Needs tmux, python3, ImageMagick (convert) and the DejaVu fonts (fonts-dejavu-core).
set -eu
cd "$(dirname "$0")/.."
work=$(mktemp -d)
sock="nodius-shot-$$"
trap 'tmux -L "$sock" kill-server 2>/dev/null; kill "$fake" 2>/dev/null; rm -rf "$work"' EXIT
go build -o "$work/nodius-ai" ./cmd/nodius-ai
go build -o "$work/fakellm" ./agent/llm/llmtest/cmd/fakellm
"$work/fakellm" --addr 127.0.0.1:0 --script docs/screenshot-script.json >"$work/url" &
fake=$!
while [ ! -s "$work/url" ]; do sleep 0.2; done
mkdir -p "$work/home" && cp examples/nba.json "$work/home/nba.json"
tmux -L "$sock" new-session -d -s shot -x 150 -y 36 "cd '$work/home' && env HOME='$work/home' \
  XDG_CONFIG_HOME='$work/home/config' XDG_DATA_HOME='$work/home/data' XDG_CACHE_HOME='$work/home/cache' \
  XDG_STATE_HOME='$work/home/state' TERM=xterm-256color COLORTERM=truecolor NODIUS_AI_API_KEY=x \
  '$work/nodius-ai' chat --base-url '$(head -1 "$work/url")/v1' --model deepseek-chat --source file:nba.json --graph nba"
sleep 3
tmux -L "$sock" send-keys -t shot "what does fetch-api do?"
sleep 0.5
tmux -L "$sock" send-keys -t shot Enter
sleep 5
tmux -L "$sock" capture-pane -t shot -p -e | python3 docs/ansi2mvg.py 150 36 >"$work/screen.mvg"
convert "mvg:$work/screen.mvg" -define png:compression-level=9 docs/chat.png
echo "wrote docs/chat.png"
