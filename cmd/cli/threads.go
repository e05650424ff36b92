package cli

import "github.com/spf13/cobra"

func newThreadsCmd(f *Factory) *cobra.Command {
	return &cobra.Command{Use: "threads", Short: "(not built yet)", Hidden: true}
}
