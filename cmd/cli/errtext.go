package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/spf13/cobra"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/internal/fault"
	"github.com/nodius/nodius-ai/threads"
)

// userMessage is the one sentence printed for an error: the sentinel kinds that
// packages wrap for errors.Is (": not found", ": invalid input", ...) and the
// system call texts behind a message that already says what happened ("lstat
// PATH: no such file or directory") are cut off; the kinds stay in the chain.
func userMessage(err error) string {
	msg := err.Error()
	if ce, ok := fault.As(err); ok {
		msg = ce.Error()
	}
	// The kinds' texts end a message only as the %w of a wrapped kind (a message
	// built with %v loses the chain, not the text): cut them wherever they end it.
	for _, kind := range []error{threads.ErrNotFound, threads.ErrInvalid, threads.ErrExists, datasource.ErrNotFound} {
		msg = strings.TrimSuffix(msg, ": "+kind.Error())
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		if i := strings.Index(msg, ": "+pe.Op+" "+pe.Path); i > 0 {
			msg = msg[:i]
		}
	}
	return strings.TrimSpace(msg)
}

// flagError rewrites pflag's texts as sentences that say what to type.
func flagError(c *cobra.Command, err error) error {
	s := err.Error()
	help := fmt.Sprintf("run '%s --help' to see its flags", c.CommandPath())
	switch {
	case strings.HasPrefix(s, "unknown flag: "), strings.HasPrefix(s, "unknown shorthand flag: "):
		name := s[strings.LastIndex(s, " ")+1:]
		if strings.HasPrefix(s, "unknown shorthand") {
			name = strings.Trim(strings.TrimPrefix(s, "unknown shorthand flag: "), "'")
			if i := strings.Index(name, " "); i > 0 {
				name = "-" + name[:i]
			}
		}
		return fmt.Errorf("%s has no flag %s: %s", shortPath(c), name, help)
	case strings.HasPrefix(s, "flag needs an argument: "):
		name := strings.Trim(strings.TrimPrefix(s, "flag needs an argument: "), "'")
		if !strings.HasPrefix(name, "-") {
			name = "-" + name
		}
		return fmt.Errorf("%s needs a value, as in %s VALUE", name, name)
	case strings.HasPrefix(s, "invalid argument "):
		// invalid argument "x" for "--limit" flag: strconv.ParseInt: parsing "x": invalid syntax
		var val, name string
		if _, e := fmt.Sscanf(s, "invalid argument %q for %q", &val, &name); e == nil {
			name = strings.TrimSuffix(name, " flag")
			if i := strings.Index(name, ", "); i >= 0 { // "-g, --graph"
				name = name[i+2:]
			}
			if fl := c.Flags().Lookup(strings.TrimLeft(name, "-")); fl != nil {
				switch fl.Value.Type() {
				case "int", "int64", "uint":
					return fmt.Errorf("%s takes a whole number (got %q)", name, val)
				case "duration":
					return fmt.Errorf("%s takes a duration like 200ms or 2s (got %q)", name, val)
				case "bool":
					return fmt.Errorf("%s takes true or false (got %q)", name, val)
				}
			}
			return fmt.Errorf("%q is not a valid value for %s: %s", val, name, help)
		}
	}
	return fmt.Errorf("%s: %s", s, help)
}

// sentenceArgs wraps every command's argument check so that cobra's texts ("requires
// at least 2 arg(s), only received 1") become a sentence with the usage line, and
// turns an unknown subcommand into one too.
func sentenceArgs(c *cobra.Command) {
	if c.Args != nil {
		check := c.Args
		c.Args = func(cmd *cobra.Command, args []string) error {
			if err := check(cmd, args); err != nil {
				return argsError(cmd, args, err)
			}
			return nil
		}
	} else if c.HasSubCommands() {
		c.Args = func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return &ExitError{Code: ExitUsage, Err: fmt.Errorf("%q is not a command of %s: run '%s --help' to see them",
					args[0], shortPath(cmd), cmd.CommandPath())}
			}
			return nil
		}
		if c.RunE == nil && c.Run == nil {
			c.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
		}
	}
	for _, sub := range c.Commands() {
		sentenceArgs(sub)
	}
}

func argsError(cmd *cobra.Command, args []string, err error) error {
	if strings.HasPrefix(err.Error(), "invalid argument") { // ValidArgs, with OnlyValidArgs
		return &ExitError{Code: ExitUsage, Err: err}
	}
	want := strings.TrimSpace(strings.TrimPrefix(cmd.Use, cmd.Name()))
	text := err.Error()
	var msg string
	switch {
	case strings.HasPrefix(text, "unknown command"): // cobra.NoArgs
		return &ExitError{Code: ExitUsage, Err: fmt.Errorf("%s takes no arguments (got %q): run '%s --help'",
			shortPath(cmd), strings.Join(args, " "), cmd.CommandPath())}
	case len(args) == 0 || strings.Contains(text, "at least"):
		msg = fmt.Sprintf("%s needs %s", shortPath(cmd), want)
	default:
		msg = fmt.Sprintf("%s takes %s, not %d arguments (quote a value that holds spaces)", shortPath(cmd), want, len(args))
	}
	return &ExitError{Code: ExitUsage, Err: fmt.Errorf("%s — type: %s", msg, cmd.CommandPath()+" "+want)}
}

// shortPath names a command in a message that already starts with "nodius-ai:":
// 'threads rename', or 'nodius-ai' for the root.
func shortPath(c *cobra.Command) string {
	if !c.HasParent() {
		return "nodius-ai"
	}
	return "'" + strings.TrimPrefix(c.CommandPath(), c.Root().Name()+" ") + "'"
}
