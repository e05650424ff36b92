package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// Set at build time by goreleaser: -X github.com/nodius/nodius-ai/cmd/cli.version=...
var (
	version = "dev"
	commit  = ""
	date    = ""
)

func newVersionCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintln(f.IO.Out, versionLine())
			return nil
		},
	}
}

// versionLine is what `nodius-ai version` and `nodius-ai --version` print.
func versionLine() string {
	v, c := version, commit
	if v == "dev" {
		if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			v = bi.Main.Version
		}
	}
	line := "nodius-ai " + v
	if c != "" {
		line += " (" + c
		if date != "" {
			line += ", " + date
		}
		line += ")"
	}
	return fmt.Sprintf("%s %s/%s %s", line, runtime.GOOS, runtime.GOARCH, runtime.Version())
}
