// Command nodius-standin runs the servertest stand-in of a Nodius server (the
// graph endpoints and the editing WebSocket, seeded with the recordings' graph
// testgraph001 and users, token tok-NAME) for trying the server: source by hand.
// It is a test tool, not a server.
//
//	nodius-standin serve [-log]           # prints the URL; WebSocket on port + 2000
//	                                      # -log: each request on stderr; stdin "counts": the totals
//	nodius-standin edit URL NODE PATH JSON   # as carol: set NODE's field PATH (data.url), unsaved
//	nodius-standin connect URL EDGE FROM TO  # as carol: add an edge FROM → TO
//	nodius-standin watch URL SECONDS      # as carol: print the broadcasts received
//	nodius-standin save URL               # (serve's stdin: type "save" instead)
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/nodius/nodius-ai/datasource/server/servertest"
	"github.com/nodius/nodius-ai/internal/nodiusapi"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "nodius-standin:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("usage: nodius-standin serve | edit URL NODE PATH JSON | connect URL EDGE FROM TO | watch URL SECONDS")
	}
	switch args[0] {
	case "serve":
		opt := servertest.Options{PairedPorts: true}
		if len(args) > 1 && args[1] == "-log" {
			opt.Log = func(line string) { fmt.Fprintln(os.Stderr, "standin:", line) }
		}
		s, err := servertest.NewSeeded(opt)
		if err != nil {
			return err
		}
		defer s.Close()
		fmt.Println(s.URL)
		fmt.Fprintln(os.Stderr, "websocket", s.WSURL, "— type 'save' to save the live graph, 'counts' for what was asked, EOF to stop")
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
			switch strings.TrimSpace(sc.Text()) {
			case "save":
				s.Save(servertest.SeedGraphKey)
				fmt.Fprintln(os.Stderr, "saved")
			case "counts":
				c := s.Counts()
				fmt.Fprintf(os.Stderr, "graph/get %d, nodeconfig/list %d, sync %d, sockets %d, registrations %d (refused %d), pings %d, edits %d, saves %d\n",
					c.GraphGets, c.NodeConfigLists, c.Syncs, c.Sockets, c.Registrations, c.Refusals, c.Pings, c.Edits, c.Saves)
			}
		}
		return nil
	case "edit", "connect", "watch":
		if len(args) < 3 {
			return fmt.Errorf("%s needs URL and arguments", args[0])
		}
		// Routed as a web editor is: POST /api/sync names (and claims) the
		// instance that manages the graph.
		ctx := context.Background()
		api, err := nodiusapi.New(nodiusapi.Options{BaseURL: args[1], Token: "tok-carol"})
		if err != nil {
			return err
		}
		addr, err := api.SocketAddress(ctx, nodiusapi.GraphInstance(servertest.SeedGraphKey))
		if err != nil {
			return err
		}
		c, err := nodiusapi.DialEditor(ctx, addr, nodiusapi.EditorOptions{Options: nodiusapi.SocketOptions{Token: "tok-carol"},
			OnBroadcast: func(msg json.RawMessage, _ uint64) { fmt.Println("received:", string(msg)) }})
		if err != nil {
			return err
		}
		defer c.Close()
		for _, sheet := range []string{"0", "1"} {
			if _, err := c.Register(ctx, servertest.SeedGraphKey, sheet, "carol (web)", 0); err != nil {
				return err
			}
		}
		switch args[0] {
		case "edit":
			if len(args) != 5 {
				return fmt.Errorf("edit URL NODE PATH JSON")
			}
			var v any
			if err := json.Unmarshal([]byte(args[4]), &v); err != nil {
				return fmt.Errorf("the value must be JSON: %w", err)
			}
			in, _ := json.Marshal(map[string]any{"i": map[string]any{"o": 1, "p": strings.Split(args[3], "."), "v": v}, "sheetId": "0", "nodeId": args[2]})
			if err := c.ApplyInstructions(ctx, []json.RawMessage{in}); err != nil {
				return err
			}
			fmt.Println("set", args[2], args[3], "to", args[4], "(not saved)")
		case "connect":
			if len(args) != 5 {
				return fmt.Errorf("connect URL EDGE FROM TO")
			}
			e, _ := json.Marshal(map[string]any{"_key": args[2], "graphKey": servertest.SeedGraphKey, "sheet": "0",
				"source": args[3], "sourceHandle": "0", "target": args[4], "targetHandle": "0"})
			if err := c.BatchCreate(ctx, "0", nil, []json.RawMessage{e}); err != nil {
				return err
			}
			fmt.Println("added edge", args[2])
		case "watch":
			secs, err := strconv.Atoi(args[2])
			if err != nil {
				return err
			}
			time.Sleep(time.Duration(secs) * time.Second)
		}
		return nil
	}
	return fmt.Errorf("unknown command %q", args[0])
}
