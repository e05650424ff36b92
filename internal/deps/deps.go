//go:build tools

// Package deps pins the project's direct dependencies (DESIGN.md section 7) so that
// `go mod tidy` keeps them while the packages that use them are being written.
package deps

import (
	_ "charm.land/bubbles/v2/textarea"
	_ "charm.land/bubbletea/v2"
	_ "charm.land/glamour/v2"
	_ "charm.land/lipgloss/v2"
	_ "github.com/BurntSushi/toml"
	_ "github.com/anthropics/anthropic-sdk-go"
	_ "github.com/arangodb/go-driver/v2/arangodb"
	_ "github.com/charmbracelet/x/exp/teatest/v2"
	_ "github.com/mattn/go-isatty"
	_ "github.com/openai/openai-go/v3"
	_ "github.com/pressly/goose/v3"
	_ "github.com/spf13/cobra"
	_ "github.com/tiktoken-go/tokenizer"
	_ "modernc.org/sqlite"
)
