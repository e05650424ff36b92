package cli

import "github.com/spf13/cobra"

func newAskCmd(f *Factory) *cobra.Command {
	return &cobra.Command{Use: "ask", Short: "(not built yet)", Hidden: true}
}

func newApproveCmd(f *Factory, approve bool) *cobra.Command {
	use := "reject"
	if approve {
		use = "approve"
	}
	return &cobra.Command{Use: use, Short: "(not built yet)", Hidden: true}
}
