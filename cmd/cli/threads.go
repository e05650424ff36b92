package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"charm.land/glamour/v2"
	"github.com/spf13/cobra"

	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/internal/termtext"
	"github.com/nodius/nodius-ai/threads"
)

func newThreadsCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "threads",
		Short: "List, read, search, export and manage stored conversations",
		Long: `Every conversation is kept in a local SQLite database (--db, NODIUS_AI_DB, default
$XDG_DATA_HOME/nodius-ai/threads.db). These commands work offline: no API key needed.

A thread ID may be given by any unique prefix of at least 4 characters; the "ai_"
every generated id starts with may be left out. The first 4 characters of an id
made by this version ("k3m9" for ai_k3m9x2q7) always name its thread alone.`,
		Example: `  nodius-ai threads list --graph demo
  nodius-ai threads show k3m9 --context
  nodius-ai threads search "fetch api"
  nodius-ai threads export ai_k3m9x2q7 > thread.json
  nodius-ai threads import thread.json`,
	}
	cmd.AddCommand(
		newThreadsListCmd(f), newThreadsShowCmd(f), newThreadsSearchCmd(f), newThreadsExportCmd(f),
		newThreadsImportCmd(f), newThreadsRenameCmd(f), newThreadsArchiveCmd(f), newThreadsDeleteCmd(f),
		newThreadsSyncCmd(f), newThreadsCheckCmd(f),
	)
	return cmd
}

// threadsResolve turns what was typed into a full thread id. An unknown, ambiguous or too
// short id is a usage error (exit 2): the person asked for something that is not there.
func threadsResolve(ctx context.Context, s *threads.Store, arg string) (string, error) {
	id, err := s.ResolveID(ctx, arg)
	if err != nil && (errors.Is(err, threads.ErrNotFound) || errors.Is(err, threads.ErrAmbiguous) || errors.Is(err, threads.ErrInvalid)) {
		return "", &ExitError{Code: ExitUsage, Err: err}
	}
	return id, err
}

// openThread opens the store and resolves the thread id a command was given.
func openThread(ctx context.Context, f *Factory, arg string) (*threads.Store, string, error) {
	s, err := f.Store(ctx)
	if err != nil {
		return nil, "", err
	}
	id, err := threadsResolve(ctx, s, arg)
	return s, id, err
}

// loadTranscript reads, in one snapshot, everything stored about the thread a
// command was given.
func loadTranscript(ctx context.Context, f *Factory, arg string) (threads.Transcript, error) {
	s, err := f.ReadStore(ctx)
	if err != nil {
		return threads.Transcript{}, err
	}
	id, err := threadsResolve(ctx, s, arg)
	if err != nil {
		return threads.Transcript{}, err
	}
	return s.Transcript(ctx, id)
}

func threadsFormat(got string, allowed ...string) error {
	for _, a := range allowed {
		if got == a {
			return nil
		}
	}
	return usageError("--format must be %s (got %q)", strings.Join(allowed, " or "), got)
}

func threadsJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// timeAgo says how long before now t was, the way a person would: "3m ago".
func timeAgo(now, t time.Time) string {
	d := now.Sub(t)
	switch {
	case t.IsZero():
		return "-"
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d/time.Minute))
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh ago", int(d/time.Hour))
	case d < 30*24*time.Hour:
		return fmt.Sprintf("%dd ago", int(d/(24*time.Hour)))
	}
	return t.Local().Format("2006-01-02")
}

// threadCell makes stored text safe and short for one table cell.
func threadCell(s string, max int) string {
	s = termtext.OneLine(s)
	if r := []rune(s); len(r) > max {
		s = string(r[:max-1]) + "…"
	}
	return s
}

// threadsTable writes rows aligned under their headers, each line cut to the
// terminal's width (never wrapped); the header is bold only when colour is on.
func threadsTable(ios *IOStreams, header []string, rows [][]string) error {
	if ios.ColorEnabled() {
		h := make([]string, len(header))
		for i, c := range header {
			h[i] = "\x1b[1m" + c + "\x1b[0m"
		}
		header = h
	}
	width, _ := ios.Size()
	writeAligned(ios.Out, "", append([][]string{header}, rows...), width)
	return nil
}

func newThreadsListCmd(f *Factory) *cobra.Command {
	var graph, format string
	var all, onServer bool
	var limit int
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List threads, most recent first",
		Long: `List threads, most recent first. On a terminal the table is cut to its width
(never wrapped); piped, rows are whole. --format json lists every field.`,
		Example: `  nodius-ai threads list
  nodius-ai threads list --graph demo --all
  nodius-ai threads list --format json | jq -r '.[].id'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := threadsFormat(format, "table", "json"); err != nil {
				return err
			}
			if onServer {
				return runRemoteThreadsList(cmd, f, graph, format)
			}
			if limit < 0 {
				return usageError("--limit cannot be negative (got %d): give a number of threads, or 0 for all", limit)
			}
			ctx := cmd.Context()
			s, err := f.ReadStore(ctx)
			if err != nil {
				return err
			}
			// A table shows a page of the most recent threads (a terminal cannot use ten
			// thousand rows, and the page costs a millisecond where all cost ~45 ms);
			// json lists everything unless --limit says otherwise.
			page := limit
			if !cmd.Flags().Changed("limit") && format == "table" {
				page = tablePage + 1 // one more, to know whether to say "more"
			}
			ts, err := s.List(ctx, threads.ListOptions{Graph: graph, All: all, Limit: page})
			if err != nil {
				return err
			}
			if format == "json" {
				return threadsJSON(f.IO.Out, ts)
			}
			more := false
			if !cmd.Flags().Changed("limit") && len(ts) > tablePage {
				ts, more = ts[:tablePage], true
			}
			if len(ts) == 0 {
				fmt.Fprintln(f.IO.ErrOut, "No threads yet. Start one with: nodius-ai chat --graph KEY")
				return nil
			}
			now := time.Now()
			// The marks of server threads are a nicety: a database opened read-only
			// from before they existed simply has none.
			onServers, _ := s.Remotes(ctx)
			rows := make([][]string, 0, len(ts))
			for _, t := range ts {
				title := threadCell(t.Title, 48)
				if title == "" {
					title = "(untitled)"
				}
				if _, ok := onServers[t.ID]; ok {
					title = "[server] " + title // answered by a Nodius server's assistant
				}
				if t.Status == convo.Archived {
					title = "[archived] " + title
				}
				rows = append(rows, []string{threadCell(t.ID, 40), title, threadCell(t.GraphKey, 24), fmt.Sprint(t.MessageCount), timeAgo(now, t.UpdatedAt)})
			}
			if err := threadsTable(f.IO, []string{"ID", "TITLE", "GRAPH", "MESSAGES", "UPDATED"}, rows); err != nil {
				return err
			}
			if more {
				fmt.Fprintf(f.IO.ErrOut, "Showing the %d most recent threads; --limit 0 lists them all.\n", tablePage)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&graph, "graph", "", "only threads about this graph")
	cmd.Flags().BoolVar(&all, "all", false, "include archived threads")
	cmd.Flags().StringVar(&format, "format", "table", "output: table or json")
	cmd.Flags().IntVar(&limit, "limit", 0, fmt.Sprintf("show at most this many threads (0: all; default: %d for the table, all for json)", tablePage))
	cmd.Flags().BoolVar(&onServer, "remote", false, "list your threads on the server (with --agent server:URL; of --graph when given), from every client, pending ones marked")
	return cmd
}

// tablePage is how many threads `threads list` shows in a table by default.
const tablePage = 100

// visibleTranscript drops the system prompt and retrieval contexts unless asked for.
func visibleTranscript(tr threads.Transcript, withContext bool) threads.Transcript {
	if withContext {
		return tr
	}
	msgs := make([]convo.Message, 0, len(tr.Messages))
	for _, m := range tr.Messages {
		if m.Role != convo.System || m.Kind == convo.KindUndo {
			msgs = append(msgs, m)
		}
	}
	tr.Messages = msgs
	return tr
}

// writeTranscript writes the Markdown transcript; on a terminal with colour it is
// rendered, otherwise it is written as Markdown text (with no control sequences from
// stored text either way).
func writeTranscript(ios *IOStreams, tr threads.Transcript, withContext, render bool) error {
	opts := threads.MarkdownOptions{Context: withContext}
	if !render || !ios.ColorEnabled() {
		return threads.WriteMarkdown(ios.Out, tr, opts)
	}
	var b strings.Builder
	if err := threads.WriteMarkdown(&b, tr, opts); err != nil {
		return err
	}
	r, err := glamour.NewTermRenderer(glamour.WithStandardStyle("dark"), glamour.WithWordWrap(transcriptWidth(ios)))
	if err != nil {
		_, err = io.WriteString(ios.Out, b.String())
		return err
	}
	out, err := r.Render(b.String())
	if err != nil {
		out = b.String()
	}
	_, err = io.WriteString(ios.Out, out)
	return err
}

func newThreadsShowCmd(f *Factory) *cobra.Command {
	var format string
	var withContext, pictures, onServer bool
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Show a thread: messages, tool calls, proposals, decisions, tokens and cost",
		Long: `Show a thread: messages, tool calls, proposals, decisions, tokens and cost.

On a terminal, a thread longer than the screen goes through $PAGER (less by default,
NODIUS_AI_PAGER overrides it, PAGER=cat turns it off); piped output never does.

--pictures draws each proposal from the thread's own data source (the one it was
asked and decided on), as approve and undo use it, with credentials from your flags,
environment or config. When another source is configured (NODIUS_AI_SOURCE, the
config file), the pictures still come from the thread's and a line on stderr says
so; --source draws from the source you name instead.`,
		Example: `  nodius-ai threads show ai_k3m9
  nodius-ai threads show ai_k3m9 --context     # also the system prompt and retrieval context
  nodius-ai threads show ai_k3m9 --format json
  nodius-ai threads show ai_k3m9 --pictures    # also draw each proposal on the graph`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := threadsFormat(format, "markdown", "json"); err != nil {
				return err
			}
			if onServer {
				return runRemoteThreadShow(cmd, f, args[0], format, withContext)
			}
			tr, err := loadTranscript(cmd.Context(), f, args[0])
			if err != nil {
				if errors.Is(err, threads.ErrNotFound) && serverAgentConfigured(f) {
					// A thread started in the web client: the server has its history.
					return runRemoteThreadShow(cmd, f, args[0], format, withContext)
				}
				return err
			}
			tr = visibleTranscript(tr, withContext)
			if pictures && format == "json" {
				return usageError("--pictures draws for people; it goes with --format markdown, not json")
			}
			if format == "json" {
				return threadsJSON(f.IO.Out, tr)
			}
			if !f.IO.OutTTY {
				if err := writeTranscript(f.IO, tr, withContext, true); err != nil || !pictures {
					return err
				}
				return writeProposalPictures(cmd.Context(), f, f.IO.Out, tr)
			}
			// On a terminal, a transcript taller than the screen goes through $PAGER.
			var buf pagedWriter
			shown := *f.IO
			shown.Out = &buf
			if err := writeTranscript(&shown, tr, withContext, true); err != nil {
				return err
			}
			if pictures {
				if err := writeProposalPictures(cmd.Context(), f, &buf, tr); err != nil {
					return err
				}
			}
			return page(f.IO, buf.String())
		},
	}
	cmd.Flags().StringVar(&format, "format", "markdown", "output: markdown or json")
	cmd.Flags().BoolVar(&pictures, "pictures", false, "also draw each proposal: the graph around it before and after")
	cmd.Flags().BoolVar(&withContext, "context", false, "also show the system prompt and the retrieval context of each question")
	cmd.Flags().BoolVar(&onServer, "remote", false, "show the server's history of the thread (with --agent server:URL): also a thread started in the web client")
	return cmd
}

func newThreadsSearchCmd(f *Factory) *cobra.Command {
	var format string
	var limit int
	cmd := &cobra.Command{
		Use:   "search QUERY",
		Short: "Find messages in every thread (full-text)",
		Long: `Search what was asked and answered in every thread, archived ones included, and
the reasons of the changes the assistant proposed. The query is plain words, all
required; the last one also matches as a prefix.`,
		Example: `  nodius-ai threads search fetch api
  nodius-ai threads search "nba stats" --format json`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := threadsFormat(format, "table", "json"); err != nil {
				return err
			}
			if limit < 1 {
				return usageError("--limit must be at least 1 (got %d)", limit)
			}
			ctx := cmd.Context()
			s, err := f.ReadStore(ctx)
			if err != nil {
				return err
			}
			hits, err := s.Search(ctx, strings.Join(args, " "), limit)
			if err != nil {
				return err
			}
			if format == "json" {
				unmark := strings.NewReplacer(threads.MatchStart, "", threads.MatchEnd, "")
				for i := range hits {
					hits[i].Snippet = unmark.Replace(hits[i].Snippet)
				}
				return threadsJSON(f.IO.Out, hits)
			}
			if len(hits) == 0 {
				fmt.Fprintln(f.IO.ErrOut, "No message matches.")
				return nil
			}
			on, off := "", ""
			if f.IO.ColorEnabled() {
				on, off = "\x1b[1m", "\x1b[22m"
			}
			mark := strings.NewReplacer(threads.MatchStart, on, threads.MatchEnd, off)
			now := time.Now()
			rows := make([][]string, 0, len(hits))
			for _, h := range hits {
				title := threadCell(h.Title, 32)
				if title == "" {
					title = "(untitled)"
				}
				snippet := mark.Replace(threadCell(h.Snippet, 200))
				who := string(h.Role)
				if h.ProposalID != "" {
					who = "proposal " + threadCell(h.ProposalID, 24)
				}
				rows = append(rows, []string{threadCell(h.ThreadID, 40), title, timeAgo(now, h.CreatedAt), who + ": " + snippet})
			}
			return threadsTable(f.IO, []string{"THREAD", "TITLE", "WHEN", "MATCH"}, rows)
		},
	}
	cmd.Flags().StringVar(&format, "format", "table", "output: table or json")
	cmd.Flags().IntVar(&limit, "limit", 20, "show at most this many matches")
	return cmd
}

func newThreadsExportCmd(f *Factory) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "export ID",
		Short: "Write a thread as the server's thread document (json) or as Markdown",
		Long: `json writes the Nodius server's thread document (AIThreadDocument: _key, graphKey,
workspace, userId, conversationHistory in the OpenAI message format, pendingInterrupt,
createdTime, lastUpdatedTime), which the web client reads and 'threads import' takes
back, plus a nodiusAi record the server ignores with everything else kept here (models,
tokens, costs, proposals, decisions, the recorded source, undo records), so that an
import gives back the same thread. markdown writes the full transcript, system prompt and retrieval context included.`,
		Example: `  nodius-ai threads export ai_k3m9 > thread.json
  nodius-ai threads export ai_k3m9 --format markdown > thread.md`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := threadsFormat(format, "json", "markdown"); err != nil {
				return err
			}
			tr, err := loadTranscript(cmd.Context(), f, args[0])
			if err != nil {
				return err
			}
			if format == "json" {
				return threadsJSON(f.IO.Out, threads.DocumentOf(tr))
			}
			return writeTranscript(f.IO, tr, true, false)
		},
	}
	cmd.Flags().StringVar(&format, "format", "json", "output: json (server thread document) or markdown")
	return cmd
}

func newThreadsImportCmd(f *Factory) *cobra.Command {
	var replace bool
	cmd := &cobra.Command{
		Use:   "import FILE",
		Short: "Store a server thread document (from the web client or 'threads export')",
		Long: `Reads one thread document (json, as 'threads export' writes it; "-" reads standard
input; any other file must be a regular one). The thread keeps the document's _key as its id, and a pendingInterrupt becomes a
pending proposal to approve or reject. Prints the thread id.`,
		Example: `  nodius-ai threads import thread.json
  nodius-ai threads import --replace thread.json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			doc, err := readDocument(ctx, f.IO.In, args[0])
			if err != nil {
				return err
			}
			s, err := f.Store(ctx)
			if err != nil {
				return err
			}
			t, err := s.Import(ctx, doc, threads.ImportOptions{Replace: replace})
			if errors.Is(err, threads.ErrExists) {
				return &ExitError{Code: ExitUsage, Err: err}
			}
			if err != nil {
				return err
			}
			fmt.Fprintln(f.IO.Out, t.ID)
			if f.IO.ErrTTY {
				fmt.Fprintf(f.IO.ErrOut, "Imported %q (%d messages) on graph %s.\n", threadCell(t.Title, 60), t.MessageCount, threadCell(t.GraphKey, 40))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&replace, "replace", false, "replace a stored thread with the same id")
	return cmd
}

func newThreadsRenameCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:     "rename ID TITLE",
		Short:   "Give a thread a new title",
		Example: `  nodius-ai threads rename ai_k3m9 "NBA pipeline review"`,
		Args:    cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			s, id, err := openThread(ctx, f, args[0])
			if err != nil {
				return err
			}
			title := strings.Join(args[1:], " ")
			if err := s.Rename(ctx, id, title); err != nil {
				if errors.Is(err, threads.ErrInvalid) {
					return &ExitError{Code: ExitUsage, Err: err}
				}
				return err
			}
			fmt.Fprintf(f.IO.ErrOut, "Renamed %s.\n", id)
			return nil
		},
	}
}

func newThreadsArchiveCmd(f *Factory) *cobra.Command {
	var undo bool
	cmd := &cobra.Command{
		Use:   "archive ID",
		Short: "Hide a thread from 'threads list' (it stays searchable; --undo brings it back)",
		Example: `  nodius-ai threads archive ai_k3m9
  nodius-ai threads archive --undo ai_k3m9`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			s, id, err := openThread(ctx, f, args[0])
			if err != nil {
				return err
			}
			if undo {
				if err := s.Unarchive(ctx, id); err != nil {
					return err
				}
				fmt.Fprintf(f.IO.ErrOut, "Unarchived %s.\n", id)
				return nil
			}
			if err := s.Archive(ctx, id); err != nil {
				return err
			}
			fmt.Fprintf(f.IO.ErrOut, "Archived %s (see it with 'threads list --all').\n", id)
			return nil
		},
	}
	cmd.Flags().BoolVar(&undo, "undo", false, "make an archived thread active again")
	return cmd
}

func newThreadsDeleteCmd(f *Factory) *cobra.Command {
	var yes, onServer bool
	cmd := &cobra.Command{
		Use:   "delete ID...",
		Short: "Delete threads and everything they hold",
		Long: `Deletes threads for good. On a terminal it asks first; otherwise --yes is required.
Either every given thread is deleted or none is.`,
		Example: `  nodius-ai threads delete ai_k3m9
  nodius-ai threads delete --yes ai_k3m9 ai_w8dn4c2p`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if onServer {
				return runRemoteDelete(cmd, f, args, yes)
			}
			ctx := cmd.Context()
			s, err := f.Store(ctx)
			if err != nil {
				return err
			}
			var ids []string
			var list []convo.Thread
			seen := map[string]bool{}
			for _, a := range args {
				id, err := threadsResolve(ctx, s, a)
				if err != nil {
					return err
				}
				if seen[id] {
					continue
				}
				seen[id] = true
				t, err := s.Thread(ctx, id)
				if err != nil {
					return err
				}
				ids, list = append(ids, id), append(list, t)
			}
			if !yes {
				if !f.IO.InTTY {
					return usageError("refusing to delete without confirmation: standard input is not a terminal; pass --yes")
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
			if err := s.Delete(ctx, ids...); err != nil {
				return err
			}
			for _, id := range ids {
				fmt.Fprintf(f.IO.ErrOut, "Deleted %s.\n", id)
			}
			return nil
		},
	}
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "do not ask for confirmation")
	cmd.Flags().BoolVar(&onServer, "remote", false, "delete the threads on the server (with --agent server:URL), for every client")
	return cmd
}

// confirmDelete lists what would go and reads y/yes from the terminal.
func confirmDelete(ios *IOStreams, list []convo.Thread) (bool, error) {
	noun := "thread"
	if len(list) > 1 {
		noun = fmt.Sprintf("%d threads", len(list))
	}
	fmt.Fprintf(ios.ErrOut, "Delete %s for good?\n", noun)
	for _, t := range list {
		fmt.Fprintf(ios.ErrOut, "  %s  %s (%d messages)\n", threadCell(t.ID, 40), threadCell(t.Title, 60), t.MessageCount)
	}
	fmt.Fprint(ios.ErrOut, "Type y to confirm [y/N]: ")
	line, err := bufio.NewReader(ios.In).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return false, fmt.Errorf("read the confirmation: %w", err)
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return true, nil
	}
	return false, nil
}

func newThreadsSyncCmd(f *Factory) *cobra.Command {
	var push, pull bool
	cmd := &cobra.Command{
		Use:   "sync [--push|--pull]",
		Short: "Sync threads with the server's nodius_ai_threads collection",
		Long: `Send local threads to the Nodius server's ArangoDB collection nodius_ai_threads and
fetch the threads written there (by the web client, say), so a conversation can be
continued on either side. Needs --sync arango://USER:PASS@HOST:PORT/DB?workspace=W (or
NODIUS_AI_SYNC).

The newer copy of a thread wins (lastUpdatedTime); a repeated sync changes nothing.
Only what changed since the last sync is looked at. A thread that fails is reported
and retried by the next sync; the others go on. Without --push or --pull, both.`,
		Example: `  nodius-ai threads sync --sync 'arango://root:pw@localhost:8529/nodius?workspace=acme'
  NODIUS_AI_SYNC='arango://root:pw@db:8529/nodius?workspace=acme' nodius-ai threads sync --pull`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runThreadsSync(cmd.Context(), f, push, pull)
		},
	}
	cmd.Flags().BoolVar(&push, "push", false, "only send local threads")
	cmd.Flags().BoolVar(&pull, "pull", false, "only fetch remote threads")
	return cmd
}

// transcriptWidth is the width a rendered transcript wraps at: the terminal's, at
// most 120 columns.
func transcriptWidth(ios *IOStreams) int {
	w, _ := ios.Size()
	if w <= 0 || w > 120 {
		return min(max(w, 100), 120)
	}
	return max(w-2, 20)
}
