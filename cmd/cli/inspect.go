package cli

import "github.com/spf13/cobra"

func newInspectCmd(f *Factory) *cobra.Command {
	return &cobra.Command{Use: "inspect", Short: "(not built yet)", Hidden: true}
}
