package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/nodius/nodius-ai/config"
)

// setting is one line of `nodius-ai config`: a name, its effective value (secrets
// masked) and where it came from.
type setting struct {
	Name   string `json:"name"`
	Value  string `json:"value"`
	Origin string `json:"origin"`
}

// configReport is what `nodius-ai config --format json` prints.
type configReport struct {
	Settings []setting `json:"settings"`
	Paths    []setting `json:"paths"`
	Env      []string  `json:"environment"`
	Error    string    `json:"chat_error,omitempty"`
	// Unknown names the config file's settings nodius-ai does not know.
	Unknown string `json:"unknown_settings,omitempty"`
}

func newConfigCmd(f *Factory) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Show the effective settings, where each came from, and the paths in use",
		Long: `Show the settings a command would run with, after flags > environment > config
file > the default server of 'auth login' > defaults, with where each value came from,
and the files in use (config file, threads database, log file). Secrets (API keys,
tokens, passwords in URLs) are masked. Flags given here are taken into account, so
'nodius-ai config --provider ollama' shows what that flag would change.

A setting of the config file that nodius-ai does not know (a misspelt key) is named
with the closest known one ("did you mean max_tool_rounds?"). Commands that run the
assistant (ask, chat, approve, reject, undo, mcp) refuse to run with it, since a
misspelt limit or policy would not apply; the others warn and go on without it.`,
		Example: `  nodius-ai config
  nodius-ai config --base-url http://localhost:11434/v1 --model llama3.2
  nodius-ai config --format json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := threadsFormat(format, "table", "json"); err != nil {
				return err
			}
			cfg, err := f.Config()
			if err != nil {
				return err
			}
			r := buildConfigReport(f, cfg)
			if format == "json" {
				return threadsJSON(f.IO.Out, r)
			}
			w := f.IO.Out
			section := func(title string, rows []setting) {
				fmt.Fprintln(w, title)
				tab := make([][]string, 0, len(rows))
				for _, s := range rows {
					tab = append(tab, []string{s.Name, s.Value, s.Origin})
				}
				writeAligned(w, "  ", tab, f.termWidth())
			}
			section("Settings (flags > environment > config file > auth login > defaults):", r.Settings)
			fmt.Fprintln(w)
			section("Paths:", r.Paths)
			if len(r.Env) > 0 {
				fmt.Fprintln(w)
				fmt.Fprintln(w, "Provider keys found in the environment:")
				for _, e := range r.Env {
					fmt.Fprintln(w, "  "+e)
				}
			}
			if r.Unknown != "" {
				fmt.Fprintln(w)
				fmt.Fprintln(w, "Ignored: "+r.Unknown+".")
			}
			if r.Error != "" {
				fmt.Fprintln(w)
				fmt.Fprintln(w, "Chat: "+r.Error)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&format, "format", "table", "output: table or json")
	return cmd
}

func buildConfigReport(f *Factory, cfg *config.Config) configReport {
	origin := func(name, fallback string) string {
		if o := cfg.Origins[name]; o != "" {
			return o
		}
		return fallback
	}
	val := func(s string) string {
		if s == "" {
			return "(none)"
		}
		return s
	}
	secret := func(s string) string {
		if s == "" {
			return "(not set)"
		}
		return "**** (set, hidden)"
	}
	var r configReport
	add := func(name, value, from string) {
		r.Settings = append(r.Settings, setting{name, value, from})
	}
	add("provider", val(cfg.Provider), origin("provider", ""))
	add("model", val(cfg.Model), origin("model", ""))
	add("base-url", val(config.RedactURL(cfg.BaseURL)), origin("base-url", ""))
	keyFrom := origin("api-key", "")
	if cfg.Entry.APIKeyEnv == "" && cfg.Provider != "" && cfg.APIKey == "" {
		keyFrom = "not needed"
	}
	add("api-key", secret(cfg.APIKey), keyFrom)
	add("embedding-model", val(cfg.EmbeddingModel), origin("embedding-model", ""))
	add("embedding-base-url", val(config.RedactURL(cfg.EmbeddingBaseURL)), origin("NODIUS_AI_EMBEDDING_BASE_URL", "the chat provider"))
	if cfg.Login != "" {
		from := config.OriginLogin
		if named, by := namedElsewhere(cfg); named != "" {
			from += fmt.Sprintf("; not in use: %s names %s", by, named)
		}
		add("default server", cfg.Login, from)
	} else if f.loginNote != "" {
		add("default server", "(none)", f.loginNote)
		f.loginNote = "" // the report says it
	}
	add("agent", config.RedactURL(cfg.Agent), origin("agent", config.OriginDefault))
	add("source", config.RedactURL(cfg.Source), origin("source", config.OriginDefault))
	if cfg.Fallback != "" {
		add("fallback", config.RedactURL(cfg.Fallback), origin("fallback", ""))
	}
	// The token the server in effect would get: the configured one, else auth
	// login's for that host; never shown, only where it comes from.
	tokVal, tokFrom := secret(cfg.Token), origin("token", "")
	if srv, _ := cfg.Server(); srv != "" {
		if tok, from, err := cfg.ServerToken(srv); err == nil {
			tokVal, tokFrom = secret(tok), from
		}
	} else if cfg.Token != "" {
		tokFrom += " (sent to no server: none is named)"
	}
	add("token", tokVal, tokFrom)
	if cfg.WSURL != "" {
		add("ws-url", config.RedactURL(cfg.WSURL), origin("ws-url", ""))
	}
	add("workspace", cfg.Workspace, origin("workspace", config.OriginDefault))
	add("role", cfg.Role, origin("role", config.OriginDefault))
	add("sync", val(config.RedactURL(cfg.Sync)), origin("sync", ""))
	add("max_tool_rounds", strconv.Itoa(cfg.MaxToolRounds), origin("max_tool_rounds", config.OriginDefault))
	add("debug", strconv.FormatBool(cfg.Debug), origin("debug", config.OriginDefault))
	if cfg.ArangoIgnoreServer {
		add("arango-ignore-server", "true", origin("arango-ignore-server", config.OriginDefault))
	}
	add("retrieval.expand", cfg.RetrievalExpand, origin("retrieval.expand", config.OriginDefault))

	cfgPath, cfgFrom := cfg.File, "read"
	if cfgPath == "" {
		cfgPath, cfgFrom = config.DefaultConfigPath(f.IO.Getenv), "not found (optional)"
	}
	r.Paths = append(r.Paths,
		setting{"config file", cfgPath, cfgFrom},
		setting{"threads database", cfg.DB, origin("db", config.OriginDefault) + existsNote(cfg.DB)},
		setting{"log file", filepath.Join(config.StateDir(f.IO.Getenv), "nodius-ai.log"), "always written"},
	)
	for _, name := range []string{"DEEPSEEK_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "NODIUS_AI_API_KEY"} {
		if f.IO.Getenv(name) != "" {
			r.Env = append(r.Env, name+" (set, hidden)")
		}
	}
	if err := cfg.RequireLLM(); err != nil && !strings.HasPrefix(cfg.Agent, "server:") {
		r.Error = err.Error()
	}
	r.Unknown = cfg.UnknownText()
	f.unknownNote = "" // the report says it
	return r
}

func existsNote(path string) string {
	if _, err := os.Stat(path); err != nil {
		return " (not created yet)"
	}
	return ""
}
