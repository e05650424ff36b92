package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/nodius/nodius-ai/config"
	"github.com/nodius/nodius-ai/threads"
)

// newThreadsCheckCmd runs SQLite's full integrity check over the threads database
// and, when it fails, says what to do: keep a copy, export what can be read, rebuild.
func newThreadsCheckCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "check",
		Short: "Check the threads database for damage and say what to do",
		Long: `Runs SQLite's full integrity check over the threads database (read-only: the
check writes nothing). Exit 0 when the database is sound, 1 when it is damaged, with
the steps to save what can be read and rebuild.`,
		Example: `  nodius-ai threads check
  nodius-ai threads check --db ./threads.db`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			cfg, err := f.Config()
			if err != nil {
				return err
			}
			path := cfg.DB
			if path == "" {
				path = config.DefaultDBPath(f.IO.Getenv)
			}
			s, err := threads.Open(ctx, path, threads.Options{ReadOnly: true})
			if err != nil {
				return err
			}
			defer s.Close()
			problems, err := s.Check(ctx, true, 50)
			if err != nil && len(problems) == 0 {
				return fmt.Errorf("the integrity check of %s could not run: %w", path, err)
			}
			if len(problems) == 0 {
				fmt.Fprintf(f.IO.Out, "ok: %s passed SQLite's integrity check.\n", path)
				return nil
			}
			w := f.IO.Out
			fmt.Fprintf(w, "damaged: SQLite's integrity check found %d problem(s) in %s:\n", len(problems), path)
			for _, p := range problems {
				fmt.Fprintf(w, "  - %s\n", p)
			}
			fmt.Fprintf(w, `
What to do:
  1. Stop other nodius-ai processes and keep a copy of the file as it is:
       cp %[1]s %[1]s.damaged
  2. Export what can still be read, one file per thread:
       nodius-ai --db %[1]s threads list --all --format json
       nodius-ai --db %[1]s threads export ID > ID.json      (for each thread)
  3. Move the damaged file aside and import the exports into a new database:
       mv %[1]s %[1]s.old && nodius-ai --db %[1]s threads import ID.json
  (If the sqlite3 shell is installed, 'sqlite3 %[1]s .recover | sqlite3 new.db'
   often saves more.)
`, path)
			return &ExitError{Code: ExitRuntime} // the report above says it all
		},
	}
}
