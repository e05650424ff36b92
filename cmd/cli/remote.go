package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/nodius/nodius-ai/agent"
	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/agent/remote"
	"github.com/nodius/nodius-ai/agent/tools"
	"github.com/nodius/nodius-ai/config"
	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/internal/credstore"
	"github.com/nodius/nodius-ai/internal/fault"
	"github.com/nodius/nodius-ai/internal/nodiusapi"
	"github.com/nodius/nodius-ai/internal/termtext"
	"github.com/nodius/nodius-ai/threads"
	"github.com/nodius/nodius-ai/tui"
)

// runner is what answers questions and decisions: the in-process agent or the
// Nodius server's assistant (the TUI's Runner interface).
type runner interface {
	Send(ctx context.Context, req agent.SendRequest, emit func(convo.Event)) (agent.Result, error)
	Resume(ctx context.Context, threadID string, d convo.Decision, emit func(convo.Event)) (agent.Result, error)
}

// serverAgent returns the URL of --agent server:URL, or "" for the local agent.
func serverAgent(cfg *config.Config) string {
	if cfg == nil {
		return ""
	}
	if u, ok := strings.CutPrefix(cfg.Agent, "server:"); ok {
		return u
	}
	return ""
}

// remoteRuntime wires the server's assistant: no provider or key is needed here,
// the server holds them. The thread store keeps a copy of every exchange; the data
// source (the server's, by default) is read to preview proposals.
func (f *Factory) remoteRuntime(ctx context.Context, cfg *config.Config, url string) (*Runtime, error) {
	store, err := f.Store(ctx)
	if err != nil {
		return nil, err
	}
	logger := f.Logger()
	src, err := f.Source(ctx)
	if err != nil {
		logger.Warn("no data source to preview proposals", "error", err.Error())
		src = nil
	}
	token, _, err := cfg.ServerToken(url)
	if err != nil {
		return nil, err
	}
	c, err := remote.New(remote.Options{BaseURL: url, WSURL: wsURLFor(cfg, url), Token: token, Logger: logger,
		MaxFrameBytes: remoteFrameBytes(cfg.Limits), MaxHTTPBytes: cfg.Limits.WithDefaults().MaxSnapshotBytes})
	if err != nil {
		return nil, err
	}
	rt := &Runtime{Config: cfg, Source: src, Store: store, Logger: logger}
	rt.Remote = remote.NewRunner(c, store, src, logger)
	rt.Remote.SetLimits(cfg.Limits)
	rt.Remote.SetCommandFlags(agentFlag(rt) + f.rerunFlags())
	// Approved changes are applied through the editing WebSocket of the same
	// server (the server: data source implements nodiusapi.Applier); a source of
	// another server never gets this server's changes, nor its token.
	if a, ok := src.(nodiusapi.Applier); ok && sameServer(cfg.Source, cfg.Agent) {
		rt.Remote.SetApplier(a)
	}
	rt.Runner = rt.Remote
	if src != nil {
		rt.DefaultGraph = defaultGraph(ctx, cfg, src)
	}
	f.rt = rt
	return rt, nil
}

// wsURLFor is the configured WebSocket address (--ws-url, NODIUS_AI_WS_URL,
// ws_url) when serverURL is the server the configuration names, else "": the
// override is for one server, and a thread's recorded server (another host) is
// routed by its own /api/sync.
func wsURLFor(cfg *config.Config, serverURL string) string {
	if cfg.WSURL == "" {
		return ""
	}
	want, err1 := credstore.Host(cfg.ConfiguredServer())
	got, err2 := credstore.Host(serverURL)
	if err1 != nil || err2 != nil || want != got {
		return ""
	}
	return cfg.WSURL
}

// remoteFrameBytes bounds one frame from the server: max_stream_line_bytes when set,
// else the largest of the answer, tool result and tool arguments bounds plus the
// JSON around them (an ai:complete carries the whole answer; an ai:apply_action
// the nodes of a proposal).
func remoteFrameBytes(l config.Limits) int {
	if l.MaxStreamLineBytes > 0 {
		return l.MaxStreamLineBytes
	}
	d := l.WithDefaults()
	return max(d.MaxAnswerBytes, d.MaxToolResultBytes, d.MaxToolArgsBytes) + config.StreamLineSlack
}

// sameServer reports whether a server: source and a server: agent name the same
// server (scheme, host and port).
func sameServer(source, agent string) bool {
	s, ok1 := strings.CutPrefix(source, "server:")
	a, ok2 := strings.CutPrefix(agent, "server:")
	if !ok1 || !ok2 {
		return false
	}
	su, err1 := remote.ParseServerURL(s)
	au, err2 := remote.ParseServerURL(a)
	return err1 == nil && err2 == nil && su.Scheme == au.Scheme && su.Host == au.Host
}

// localOnly keeps the in-process agent off the copies of server threads: deciding
// such a proposal here would apply it to the local source, behind the server's back.
type localOnly struct {
	runner
	store *threads.Store
}

func (l localOnly) check(ctx context.Context, threadID string) error {
	if threadID == "" {
		return nil
	}
	rem, ok, err := l.store.RemoteOf(ctx, threadID)
	if err != nil || !ok {
		return err
	}
	return &fault.Error{Code: fault.Config, Message: fmt.Sprintf(
		"thread %s is the server's assistant's (%s) — pass --agent server:%s to continue or decide it", threadID, rem.Server, rem.Server)}
}

func (l localOnly) Send(ctx context.Context, req agent.SendRequest, emit func(convo.Event)) (agent.Result, error) {
	if err := l.check(ctx, req.ThreadID); err != nil {
		return agent.Result{ThreadID: req.ThreadID}, err
	}
	return l.runner.Send(ctx, req, emit)
}

func (l localOnly) Resume(ctx context.Context, threadID string, d convo.Decision, emit func(convo.Event)) (agent.Result, error) {
	if err := l.check(ctx, threadID); err != nil {
		return agent.Result{ThreadID: threadID}, err
	}
	return l.runner.Resume(ctx, threadID, d, emit)
}

// remoteRunner returns the server's assistant for a --remote command, or a usage
// error saying how to name the server.
func remoteRunner(ctx context.Context, f *Factory) (*Runtime, error) {
	cfg, err := f.Config()
	if err != nil {
		return nil, err
	}
	f.remoteAgent()
	if serverAgent(cfg) == "" {
		return nil, noRemoteServer()
	}
	return f.Runtime(ctx)
}

// resolveRemoteThread finds the local copy of a thread for the server's assistant:
// a local id or prefix, or (with --remote) the server's id of any thread of the
// server, including one started in the web client, whose copy is made here.
func resolveRemoteThread(ctx context.Context, rt *Runtime, arg, graph string, anyServerThread bool) (string, error) {
	if anyServerThread {
		if _, err := threadsResolve(ctx, rt.Store, arg); err != nil {
			// Not a local thread: a server thread's id, or its start as threads
			// list --remote shows it.
			full, err := serverThreadID(ctx, rt, arg)
			if err != nil {
				return "", err
			}
			arg = full
		}
		if id, err := rt.Store.FindRemote(ctx, rt.Remote.Client().Server(), arg); err == nil {
			return id, nil
		}
	}
	id, err := threadsResolve(ctx, rt.Store, arg)
	if err == nil || !anyServerThread || !errors.Is(err, threads.ErrNotFound) {
		if err != nil && errors.Is(err, threads.ErrNotFound) {
			return "", fmt.Errorf("%w — for a thread of the server that this terminal has not seen, add --remote", err)
		}
		return id, err
	}
	if graph == "" {
		graph = rt.DefaultGraph
	}
	if graph == "" {
		return "", usageError("thread %s is new to this terminal: pass --graph KEY (the graph it is about, see 'nodius-ai threads list --remote --graph KEY')", arg)
	}
	th, err := rt.Remote.Adopt(ctx, arg, graph)
	if err != nil {
		return "", err
	}
	return th.ID, nil
}

// serverThreadID turns a server thread id as threads list --remote shows it — a
// prefix, cut with "…" — into the full id, looked up in the server's list of the
// user's threads. A full id, or a prefix no server thread has, is returned as
// given (the server says whether it knows it); a prefix several share is a usage
// error naming them.
func serverThreadID(ctx context.Context, rt *Runtime, arg string) (string, error) {
	prefix := strings.TrimSuffix(strings.TrimSpace(arg), "…")
	if len(prefix) >= 64 || len(prefix) < 4 {
		return prefix, nil
	}
	list, err := rt.Remote.Client().Threads(ctx, "")
	if err != nil {
		return "", err
	}
	var found []string
	for _, t := range list {
		if strings.HasPrefix(t.ID, prefix) {
			found = append(found, t.ID)
		}
	}
	switch len(found) {
	case 0:
		return prefix, nil
	case 1:
		return found[0], nil
	}
	return "", usageError("%s is the start of %d threads on the server (%s): give more of the id", prefix, len(found), strings.Join(found, ", "))
}

// runRemoteThreadsList prints the caller's threads on the server (of one graph
// with --graph), marking those that wait for a decision as "pending".
func runRemoteThreadsList(cmd *cobra.Command, f *Factory, graph, format string) error {
	ctx := cmd.Context()
	rt, err := remoteRunner(ctx, f)
	if err != nil {
		return err
	}
	list, err := rt.Remote.Client().Threads(ctx, graph)
	if err != nil {
		return err
	}
	if format == "json" {
		if list == nil {
			list = []remote.ServerThread{}
		}
		enc := json.NewEncoder(f.IO.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(list)
	}
	if len(list) == 0 {
		if graph != "" {
			fmt.Fprintf(f.IO.ErrOut, "The server %s has no thread of yours on graph %q.\n", rt.Remote.Client().Server(), graph)
		} else {
			fmt.Fprintf(f.IO.ErrOut, "The server %s has no thread of yours.\n", rt.Remote.Client().Server())
		}
		return nil
	}
	now := time.Now()
	rows := make([][]string, 0, len(list))
	for _, t := range list {
		title := threadCell(t.Title, 40)
		if title == "" {
			title = "(untitled)"
		}
		state := ""
		if t.Pending {
			state = "pending"
		}
		rows = append(rows, []string{threadCell(t.ID, 40), threadCell(t.GraphKey, 20), title, fmt.Sprint(t.Messages), fmt.Sprint(t.TotalTokens), timeAgo(now, t.UpdatedAt), state})
	}
	return threadsTable(f.IO, []string{"ID", "GRAPH", "TITLE", "MESSAGES", "TOKENS", "UPDATED", "STATE"}, rows)
}

// serverAgentConfigured reports whether --agent server:URL is in effect.
func serverAgentConfigured(f *Factory) bool {
	cfg, err := f.Config()
	return err == nil && serverAgent(cfg) != ""
}

// runRemoteThreadShow prints the server's history of a thread (GET
// /api/ai/thread/:id/messages): a thread started in the web client, or the server's
// side of a local copy. id is the server's id, or a local copy's id or prefix.
func runRemoteThreadShow(cmd *cobra.Command, f *Factory, id, format string, withContext bool) error {
	ctx := cmd.Context()
	rt, err := remoteRunner(ctx, f)
	if err != nil {
		return err
	}
	serverID := id
	if local, err := threadsResolve(ctx, rt.Store, id); err == nil {
		if rem, ok, err := rt.Store.RemoteOf(ctx, local); err == nil && ok && rem.ID != "" && rem.Server == rt.Remote.Client().Server() {
			serverID = rem.ID
		}
	} else if serverID, err = serverThreadID(ctx, rt, id); err != nil {
		return err
	}
	msgs, err := rt.Remote.Client().Messages(ctx, serverID)
	if err != nil {
		return err
	}
	if format == "json" {
		type msgJSON struct {
			Role       string   `json:"role"`
			Content    string   `json:"content"`
			ToolCalls  []string `json:"tool_calls,omitempty"`
			ToolCallID string   `json:"tool_call_id,omitempty"`
		}
		out := struct {
			ThreadID string    `json:"thread_id"`
			Server   string    `json:"server"`
			Messages []msgJSON `json:"messages"`
		}{ThreadID: serverID, Server: rt.Remote.Client().Server(), Messages: []msgJSON{}}
		for _, m := range msgs {
			if m.Role == "system" && !withContext {
				continue
			}
			out.Messages = append(out.Messages, msgJSON{Role: m.Role, Content: m.Text(), ToolCalls: m.ToolCallNames(), ToolCallID: m.ToolCallID})
		}
		enc := json.NewEncoder(f.IO.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	w := f.IO.Out
	fmt.Fprintf(w, "# Thread %s (on the server %s)\n", termtext.Strip(serverID), rt.Remote.Client().Server())
	for _, m := range msgs {
		switch m.Role {
		case "system":
			if withContext {
				fmt.Fprintf(w, "\n## context\n\n%s\n", termtext.Strip(m.Text()))
			}
		case "user":
			fmt.Fprintf(w, "\n## you\n\n%s\n", termtext.Strip(m.Text()))
		case "assistant":
			if t := strings.TrimSpace(m.Text()); t != "" {
				fmt.Fprintf(w, "\n## assistant\n\n%s\n", termtext.Strip(t))
			}
			for _, name := range m.ToolCallNames() {
				fmt.Fprintf(w, "\n● %s\n", termtext.Strip(name))
			}
		case "tool":
			t := m.Text()
			fmt.Fprintf(w, "  ✓ result (%d characters)%s\n", len(t), firstLine(t))
		}
	}
	return nil
}

// firstLine is ": " and the first line of s, cut to 80 characters, or "".
func firstLine(s string) string {
	l, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	if l == "" {
		return ""
	}
	return ": " + termtext.Strip(truncateRunes(l, 80))
}

// runRemoteDelete deletes threads on the server (and their local copies), after a
// confirmation on a terminal or with --yes.
func runRemoteDelete(cmd *cobra.Command, f *Factory, args []string, yes bool) error {
	ctx := cmd.Context()
	rt, err := remoteRunner(ctx, f)
	if err != nil {
		return err
	}
	server := rt.Remote.Client().Server()
	// Each argument is the server's id, or a local copy's id (or prefix).
	type target struct{ serverID, localID string }
	var targets []target
	for _, a := range args {
		t := target{serverID: a}
		if _, err := threadsResolve(ctx, rt.Store, a); err != nil {
			full, err := serverThreadID(ctx, rt, a)
			if err != nil {
				return err
			}
			a, t.serverID = full, full
		}
		if id, err := rt.Store.FindRemote(ctx, server, a); err == nil {
			t.localID = id
		} else if id, err := threadsResolve(ctx, rt.Store, a); err == nil {
			rem, ok, err := rt.Store.RemoteOf(ctx, id)
			if err != nil {
				return err
			}
			if !ok || rem.Server != server || rem.ID == "" {
				return usageError("thread %s is not a thread of the server %s: delete it locally with 'nodius-ai threads delete %s'", id, server, id)
			}
			t = target{serverID: rem.ID, localID: id}
		}
		targets = append(targets, t)
	}
	if !yes {
		if !f.IO.InTTY {
			return usageError("refusing to delete on the server without confirmation: standard input is not a terminal; pass --yes")
		}
		fmt.Fprintf(f.IO.ErrOut, "Delete on the server %s, for everyone, for good?\n", server)
		list := make([]convo.Thread, 0, len(targets))
		for _, t := range targets {
			list = append(list, convo.Thread{ID: t.serverID, Title: "(server thread)"})
		}
		ok, err := confirmDelete(f.IO, list)
		if err != nil {
			return err
		}
		if !ok {
			fmt.Fprintln(f.IO.ErrOut, "Nothing deleted.")
			return nil
		}
	}
	for _, t := range targets {
		if err := rt.Remote.Client().DeleteThread(ctx, t.serverID); err != nil {
			return err
		}
		if t.localID != "" {
			if err := rt.Store.Delete(ctx, t.localID); err != nil {
				return err
			}
		}
		fmt.Fprintf(f.IO.ErrOut, "Deleted %s on the server.\n", t.serverID)
	}
	return nil
}

// chatGraph reads the graph the chat is about. With the server's assistant the
// graph may not be readable here (not held in the server's memory, no fallback):
// the server reads it itself, so the chat opens all the same, under its key.
func chatGraph(ctx context.Context, rt *Runtime, graphKey string) (datasource.Graph, error) {
	if rt.Source == nil {
		return datasource.Graph{Key: graphKey, Name: graphKey}, nil
	}
	g, err := rt.Source.Graph(ctx, graphKey)
	if err == nil {
		return g, nil
	}
	if rt.Remote != nil {
		rt.Logger.Warn("graph not readable here; the server's assistant reads it", "graph", graphKey, "error", err.Error())
		return datasource.Graph{Key: graphKey, Name: graphKey}, nil
	}
	return datasource.Graph{}, err
}

// chatNodes is @ completion's node list (none without a source, nor in home mode:
// no graph is open, so there are no nodes to mention).
func chatNodes(rt *Runtime, graphKey string) tui.NodeLister {
	if rt.Source == nil || tools.IsHome(graphKey) {
		return nil
	}
	return nodeLister{src: rt.Source, retriever: rt.Retriever}
}
