#!/usr/bin/env python3
"""Renders a terminal capture (tmux capture-pane -p -e) as an ImageMagick MVG drawing:
one glyph per cell, in DejaVu Sans Mono, with the capture's colours. docs/screenshot.sh
turns it into docs/chat.png with `convert mvg:FILE PNG`."""
import re, sys

COLS, ROWS = int(sys.argv[1]), int(sys.argv[2])
CW, CH, SIZE, PAD = 9.65, 19, 16, 14
FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf"
BOLD = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono-Bold.ttf"
FG, BG = (205, 214, 244), (24, 24, 37)
BASIC = [(40, 42, 54), (243, 139, 168), (166, 227, 161), (249, 226, 175), (137, 180, 250),
         (203, 166, 247), (148, 226, 213), (186, 194, 222)]
BRIGHT = [(88, 91, 112), (243, 139, 168), (166, 227, 161), (249, 226, 175), (137, 180, 250),
          (203, 166, 247), (148, 226, 213), (230, 233, 245)]

def xterm256(n):
    if n < 8: return BASIC[n]
    if n < 16: return BRIGHT[n - 8]
    if n < 232:
        n -= 16
        steps = [0, 95, 135, 175, 215, 255]
        return (steps[n // 36], steps[n // 6 % 6], steps[n % 6])
    v = 8 + (n - 232) * 10
    return (v, v, v)

def colour(params, i):
    """Reads a 38/48 colour at params[i]; returns (colour, next index)."""
    if i + 1 < len(params) and params[i + 1] == 2:
        return tuple(params[i + 2:i + 5]), i + 5
    if i + 1 < len(params) and params[i + 1] == 5:
        return xterm256(params[i + 2]), i + 3
    return None, i + 1

cells = []  # (row, col, ch, fg, bg, bold, faint)
for row, line in enumerate(sys.stdin.read().split("\n")[:ROWS]):
    fg = bg = None
    bold = faint = reverse = False
    col = 0
    for tok in re.split(r"(\x1b\[[0-9;:]*[A-Za-z])", line):
        if tok.startswith("\x1b["):
            if not tok.endswith("m"):
                continue
            params = [int(p) if p else 0 for p in re.split("[;:]", tok[2:-1])] or [0]
            i = 0
            while i < len(params):
                p = params[i]
                if p == 0: fg = bg = None; bold = faint = reverse = False
                elif p == 1: bold = True
                elif p == 2: faint = True
                elif p == 22: bold = faint = False
                elif p == 7: reverse = True
                elif p == 27: reverse = False
                elif 30 <= p <= 37: fg = BASIC[p - 30]
                elif 90 <= p <= 97: fg = BRIGHT[p - 90]
                elif 40 <= p <= 47: bg = BASIC[p - 40]
                elif 100 <= p <= 107: bg = BRIGHT[p - 100]
                elif p == 39: fg = None
                elif p == 49: bg = None
                elif p in (38, 48):
                    c, i = colour(params, i)
                    if p == 38: fg = c
                    else: bg = c
                    continue
                i += 1
            continue
        for ch in tok:
            f, b = fg or FG, bg
            if reverse: f, b = (bg or BG), (fg or FG)
            if faint: f = tuple((a + 2 * c) // 3 for a, c in zip(f, BG))
            cells.append((row, col, ch, f, b, bold))
            col += 1

W, H = int(2 * PAD + COLS * CW), 2 * PAD + ROWS * CH
hexc = lambda c: "#%02x%02x%02x" % tuple(c)
out = ["viewbox 0 0 %d %d" % (W, H), "fill '%s'" % hexc(BG), "rectangle 0,0 %d,%d" % (W, H),
       "font-size %d" % SIZE, "text-antialias 1"]
for row, col, ch, f, b, bold in cells:
    if b:
        x, y = PAD + col * CW, PAD + row * CH
        out.append("fill '%s' rectangle %.1f,%d %.1f,%d" % (hexc(b), x, y, x + CW, y + CH))
for row, col, ch, f, b, bold in cells:
    if ch == " ":
        continue
    esc = ch.replace("\\", "\\\\").replace("'", "\\'")
    out.append("font '%s' fill '%s' text %.1f,%d '%s'" % (BOLD if bold else FONT, hexc(f), PAD + col * CW, PAD + row * CH + 15, esc))
print("\n".join(out))
