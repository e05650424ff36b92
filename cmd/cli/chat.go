package cli

import "github.com/spf13/cobra"

func newChatCmd(f *Factory) *cobra.Command {
	return &cobra.Command{Use: "chat", Short: "(not built yet)", Hidden: true}
}
