package cli

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
)

// page writes text to standard output, through $PAGER (default "less", with LESS=FRX
// as git sets it) when standard output is a terminal and the text is taller than it.
// Piped output never goes through a pager. If the pager cannot start, the text is
// written directly.
func page(ios *IOStreams, text string) error {
	_, height := ios.Size()
	if height <= 0 || strings.Count(text, "\n") < height-1 {
		_, err := io.WriteString(ios.Out, text)
		return err
	}
	pager := strings.TrimSpace(ios.Getenv("NODIUS_AI_PAGER"))
	if pager == "" {
		pager = strings.TrimSpace(ios.Getenv("PAGER"))
	}
	if pager == "" {
		pager = "less"
	}
	if pager == "cat" {
		_, err := io.WriteString(ios.Out, text)
		return err
	}
	cmd := exec.Command("sh", "-c", pager)
	cmd.Stdin = strings.NewReader(text)
	cmd.Stdout, cmd.Stderr = ios.Out, ios.ErrOut
	cmd.Env = os.Environ()
	if ios.Getenv("LESS") == "" {
		cmd.Env = append(cmd.Env, "LESS=FRX")
	}
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && (!errors.As(err, &ee) || ee.ExitCode() == 126 || ee.ExitCode() == 127) {
		// The pager could not start (not found, not executable): write directly.
		_, err = io.WriteString(ios.Out, text)
		return err
	}
	return nil // quitting the pager early (q) is not an error
}

// pagedWriter collects output to hand to page.
type pagedWriter struct{ bytes.Buffer }
