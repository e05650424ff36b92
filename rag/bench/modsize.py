# Size of a Go binary by module: code, read-only data and data of each module's
# symbols (go tool nm -size, placed by section), plus the function table (pclntab)
# shared out in proportion to code. Build the binary with symbols (no -s -w) but
# otherwise as released; the stripped release binary is the same code.
#
#   CGO_ENABLED=0 go build -trimpath -o /tmp/nodius-ai-sym ./cmd/nodius-ai
#   go list -m all >/tmp/mods.txt
#   python3 rag/bench/modsize.py /tmp/nodius-ai-sym /tmp/mods.txt 20
#
# What it cannot attribute (Go's string data, type metadata shared by name) is the
# difference between its total and the binary's size.
import sys, subprocess, re, collections
binp, modsf = sys.argv[1], sys.argv[2]
mods = sorted([l.split()[0] for l in open(modsf) if l.strip()], key=len, reverse=True)
secs = []
for l in subprocess.run(['readelf','-S','-W',binp],capture_output=True,text=True).stdout.splitlines():
    m = re.match(r'\s*\[\s*\d+\]\s+(\S+)\s+\S+\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)', l)
    if m: secs.append((m.group(1), int(m.group(2),16), int(m.group(3),16)))
def sec(a):
    for n,s,z in secs:
        if s <= a < s+z: return n
    return None
def module(name):
    for p in ('type:', 'go:itab.', 'go:link.'):
        if name.startswith(p): name = name[len(p):]
    name = name.lstrip('*[]0123456789')
    if name.startswith(('go:', 'runtime.')) or '.' not in name: return 'std'
    # package path: up to the first '.' after the last '/' before any '.' / '(' / '['
    m = re.match(r'([^\[\(]*?/)?([^./\[\(]+)\.', name)
    pkg = (m.group(1) or '') + m.group(2) if m else name
    if pkg.startswith('vendor/'): return 'std'
    for md in mods:
        if pkg == md or pkg.startswith(md + '/'): return md
    first = pkg.split('/')[0]
    return 'std' if '.' not in first else pkg
tot = collections.Counter(); text = collections.Counter()
for l in subprocess.run(['go','tool','nm','-size',binp],capture_output=True,text=True).stdout.splitlines():
    f = l.split(None, 3)
    if len(f) < 4: continue
    a, z, t, n = int(f[0],16), int(f[1]), f[2], f[3]
    s = sec(a)
    if s not in ('.text', '.rodata', '.data', '.noptrdata', '.typelink', '.itablink'): continue
    md = module(n)
    tot[md] += z
    if s == '.text': text[md] += z
pcln = next(z for n,s,z in secs if n == '.gopclntab')
alltext = sum(text.values())
rows = []
for md, z in tot.items():
    share = z + pcln * text[md] / alltext
    rows.append((share, md, z))
rows.sort(reverse=True)
total = sum(r[0] for r in rows)
for share, md, z in rows[:int(sys.argv[3]) if len(sys.argv)>3 else 30]:
    print(f"{share/1e6:8.1f} MB  {md}")
print(f"{total/1e6:8.1f} MB  attributed (code, read-only data, data, and pclntab in proportion to code)")
