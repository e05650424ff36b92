package cli

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"
)

// helpWidth is the width --help text is wrapped to: the terminal's, or 80 columns
// when standard output is not a terminal (a pager, a file, a pipe).
func helpWidth(ios *IOStreams) int {
	if w, _ := ios.Size(); w > 0 {
		return max(w, 20)
	}
	return 80
}

// wrapHelp makes every command's --help fit in width columns: the flags' texts are
// wrapped by pflag under their description column, and every other line (the long
// description, the examples) by wrapHelpText.
func wrapHelp(root *cobra.Command, width int) {
	root.SetUsageTemplate(strings.ReplaceAll(root.UsageTemplate(), ".FlagUsages |", fmt.Sprintf(".FlagUsagesWrapped %d |", width)))
	plain := root.HelpFunc()
	root.SetHelpFunc(func(c *cobra.Command, args []string) {
		out := c.OutOrStdout()
		var buf bytes.Buffer
		long := c.Long
		c.Long = reflow(long, width)
		c.SetOut(&buf)
		plain(c, args)
		c.SetOut(out)
		c.Long = long
		_, _ = out.Write([]byte(wrapHelpText(buf.String(), width)))
	})
}

// wrapHelpText wraps each line longer than width at spaces, the rest of it indented
// as the line was. In the Examples section a command stays runnable as printed: it
// continues on the next line after a " \", and a comment that does not fit after
// it goes on its own line above it.
func wrapHelpText(text string, width int) string {
	var b strings.Builder
	inExamples := false
	for _, line := range strings.SplitAfter(text, "\n") {
		body := strings.TrimSuffix(line, "\n")
		nl := line[len(body):]
		switch {
		case body == "Examples:":
			inExamples = true
		case body != "" && body[0] != ' ':
			inExamples = false
		}
		if utf8.RuneCountInString(body) <= width {
			b.WriteString(line)
			continue
		}
		if inExamples {
			b.WriteString(strings.Join(wrapCommand(body, width), "\n"))
		} else {
			b.WriteString(strings.Join(wrapWords(body, width), "\n"))
		}
		b.WriteString(nl)
	}
	return b.String()
}

// reflow rewraps the paragraphs of a command's long description that do not fit
// in width: a paragraph of plain lines is joined and wrapped again as a whole
// (rather than each line broken and leaving a word alone on the next); lines that
// are indented or start a list item keep their own breaks.
func reflow(long string, width int) string {
	paras := strings.Split(long, "\n\n")
	for i, p := range paras {
		lines := strings.Split(p, "\n")
		fits, plain := true, true
		for _, l := range lines {
			if utf8.RuneCountInString(l) > width {
				fits = false
			}
			if strings.HasPrefix(l, " ") || strings.HasPrefix(l, "- ") || strings.HasPrefix(l, "• ") {
				plain = false
			}
		}
		if fits || !plain {
			continue
		}
		paras[i] = strings.Join(wrapWords(strings.Join(lines, " "), width), "\n")
	}
	return strings.Join(paras, "\n\n")
}

// indentOf is the leading spaces of s.
func indentOf(s string) string { return s[:len(s)-len(strings.TrimLeft(s, " "))] }

// wrapWords breaks s at spaces into lines of at most width runes, each after the
// first indented as s is (a word longer than a line stays whole).
func wrapWords(s string, width int) []string {
	indent := indentOf(s)
	words := strings.Fields(s)
	var lines []string
	cur := indent
	for _, w := range words {
		switch {
		case strings.TrimSpace(cur) == "":
			cur += w
		case utf8.RuneCountInString(cur)+1+utf8.RuneCountInString(w) <= width:
			cur += " " + w
		default:
			lines = append(lines, cur)
			cur = indent + w
		}
	}
	return append(lines, cur)
}

// wrapCommand wraps an example command line: its trailing comment, when the line
// is too long with it, goes on a line of its own above it; the command itself
// breaks at spaces with a shell continuation (" \") so that it still runs as
// printed. A space inside quotes is never a break.
func wrapCommand(s string, width int) []string {
	indent := indentOf(s)
	code, comment := s, ""
	if i := strings.Index(s, "  #"); i > 0 {
		code, comment = strings.TrimRight(s[:i], " "), strings.TrimSpace(s[i:])
	}
	var lines []string
	if comment != "" {
		lines = append(lines, wrapWords(indent+comment, width)...)
		for i := 1; i < len(lines); i++ {
			lines[i] = indent + "# " + strings.TrimSpace(lines[i])
		}
	}
	if utf8.RuneCountInString(code) <= width {
		return append(lines, code)
	}
	words := shellWords(strings.TrimSpace(code))
	cur := indent
	more := indent + "    "
	for _, w := range words {
		switch {
		case strings.TrimSpace(cur) == "":
			cur += w
		case utf8.RuneCountInString(cur)+1+utf8.RuneCountInString(w)+2 <= width:
			cur += " " + w
		default:
			lines = append(lines, cur+" \\")
			cur = more + w
		}
	}
	return append(lines, cur)
}

// shellWords splits a command at the spaces outside quotes.
func shellWords(s string) []string {
	var words []string
	var cur strings.Builder
	quote := rune(0)
	for _, r := range s {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
			cur.WriteRune(r)
		case r == '"' || r == '\'':
			quote = r
			cur.WriteRune(r)
		case r == ' ':
			if cur.Len() > 0 {
				words = append(words, cur.String())
				cur.Reset()
			}
		default:
			cur.WriteRune(r)
		}
	}
	if cur.Len() > 0 {
		words = append(words, cur.String())
	}
	return words
}
