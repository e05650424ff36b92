package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/nodius/nodius-ai/config"
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

// flagError rewrites pflag's errors as sentences that say what to type, from the
// errors' fields (never by parsing their English): an unknown flag comes with the
// nearest flag of the command ("did you mean --graph?").
func flagError(c *cobra.Command, err error) error {
	help := fmt.Sprintf("run '%s --help' to see its flags", c.CommandPath())
	var (
		notExist *pflag.NotExistError
		noValue  *pflag.ValueRequiredError
		badValue *pflag.InvalidValueError
	)
	switch {
	case errors.As(err, &notExist):
		name := "--" + notExist.GetSpecifiedName()
		if notExist.GetSpecifiedShortnames() != "" {
			name = "-" + notExist.GetSpecifiedName()
		}
		if s := suggestFlag(c, strings.TrimLeft(name, "-")); s != "" {
			return fmt.Errorf("%s has no flag %s — did you mean %s? (%s)", shortPath(c), name, s, help)
		}
		return fmt.Errorf("%s has no flag %s: %s", shortPath(c), name, help)
	case errors.As(err, &noValue):
		name := "--" + noValue.GetSpecifiedName()
		if noValue.GetSpecifiedShortnames() != "" {
			name = "-" + noValue.GetSpecifiedName()
		}
		return fmt.Errorf("%s needs a value, as in %s VALUE", name, name)
	case errors.As(err, &badValue):
		fl, val := badValue.GetFlag(), badValue.GetValue()
		name := "--" + fl.Name
		switch fl.Value.Type() {
		case "int", "int64", "uint":
			return fmt.Errorf("%s takes a whole number (got %q)", name, val)
		case "duration":
			return fmt.Errorf("%s takes a duration like 200ms or 2s (got %q)", name, val)
		case "bool":
			return fmt.Errorf("%s takes true or false (got %q)", name, val)
		}
		return fmt.Errorf("%q is not a valid value for %s: %s", val, name, help)
	}
	return fmt.Errorf("%s: %s", err.Error(), help)
}

// suggestFlag names the flag of c (its own or inherited) the person most likely
// meant by typed: one that starts with it, or at most two edits away from it (one
// for a name of three letters); "" when none is close.
func suggestFlag(c *cobra.Command, typed string) string {
	if typed == "" {
		return ""
	}
	best, bestDist := "", 0
	consider := func(fl *pflag.Flag) {
		if fl.Hidden {
			return
		}
		if len(typed) == 1 {
			if strings.EqualFold(fl.Shorthand, typed) && fl.Shorthand != typed {
				best, bestDist = "-"+fl.Shorthand, 0
			}
			return
		}
		d := config.EditDistance(strings.ToLower(typed), fl.Name)
		if len(typed) >= 3 && strings.HasPrefix(fl.Name, strings.ToLower(typed)) {
			d = min(d, 1)
		}
		limit := 2
		if len(typed) <= 3 {
			limit = 1
		}
		if d <= limit && (best == "" || d < bestDist) {
			best, bestDist = "--"+fl.Name, d
		}
	}
	c.LocalFlags().VisitAll(consider)
	c.InheritedFlags().VisitAll(consider)
	return best
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
