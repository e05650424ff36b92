package cli

import "github.com/spf13/cobra"

func newEmbedCmd(f *Factory) *cobra.Command {
	return &cobra.Command{Use: "embed", Short: "(not built yet)", Hidden: true}
}
