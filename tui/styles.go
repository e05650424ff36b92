package tui

import (
	"image/color"

	"charm.land/lipgloss/v2"
)

// theme holds every style the TUI uses, built once per (dark, noColor) so that the
// components never build styles while rendering.
type theme struct {
	noColor bool
	dark    bool

	header, headerDim  lipgloss.Style
	user, userLabel    lipgloss.Style
	assistantLabel     lipgloss.Style
	dim, reasoning     lipgloss.Style
	badgeRun, badgeOK  lipgloss.Style
	badgeErr, badgeArg lipgloss.Style
	focus              lipgloss.Style
	errText, warn      lipgloss.Style
	banner             lipgloss.Style
	status, statusKey  lipgloss.Style
	added, removed     lipgloss.Style
	changed, code      lipgloss.Style
	dialog             lipgloss.Style
	title, selected    lipgloss.Style
}

func newTheme(dark, noColor bool) theme {
	t := theme{noColor: noColor, dark: dark}
	plain := lipgloss.NewStyle()
	if noColor {
		bold := plain.Bold(false)
		t.header, t.headerDim, t.user, t.userLabel, t.assistantLabel = plain, plain, plain, plain, plain
		t.dim, t.reasoning, t.badgeRun, t.badgeOK, t.badgeErr, t.badgeArg = plain, plain, plain, plain, plain, plain
		t.focus, t.errText, t.warn, t.status, t.statusKey = plain, plain, plain, plain, plain
		t.added, t.removed, t.changed, t.code, t.title, t.selected = plain, plain, plain, plain, plain, plain
		t.banner = bold
		t.dialog = plain.Border(lipgloss.NormalBorder()).Padding(0, 1)
		return t
	}
	ld := lipgloss.LightDark(dark)
	c := func(light, darkHex string) color.Color { return ld(lipgloss.Color(light), lipgloss.Color(darkHex)) }
	accent := c("#5A3FC0", "#A78BFA")
	muted := c("#6B7280", "#9CA3AF")
	green := c("#15803D", "#4ADE80")
	red := c("#B91C1C", "#F87171")
	yellow := c("#A16207", "#FACC15")
	blue := c("#1D4ED8", "#60A5FA")

	t.header = plain.Bold(true).Foreground(accent)
	t.headerDim = plain.Foreground(muted)
	t.user = plain
	t.userLabel = plain.Bold(true).Foreground(blue)
	t.assistantLabel = plain.Bold(true).Foreground(accent)
	t.dim = plain.Foreground(muted)
	t.reasoning = plain.Foreground(muted).Italic(true)
	t.badgeRun = plain.Foreground(yellow)
	t.badgeOK = plain.Foreground(green)
	t.badgeErr = plain.Foreground(red)
	t.badgeArg = plain.Foreground(muted)
	t.focus = plain.Bold(true)
	t.errText = plain.Foreground(red)
	t.warn = plain.Foreground(yellow)
	t.banner = plain.Bold(true).Foreground(yellow)
	t.status = plain.Foreground(muted)
	t.statusKey = plain.Bold(true)
	t.added = plain.Foreground(green)
	t.removed = plain.Foreground(red)
	t.changed = plain.Foreground(yellow)
	t.code = plain.Foreground(blue)
	t.dialog = plain.Border(lipgloss.RoundedBorder()).BorderForeground(accent).Padding(0, 1)
	t.title = plain.Bold(true).Foreground(accent)
	t.selected = plain.Reverse(true)
	return t
}
