#!/usr/bin/env bash
# `edgeprof report --html DIR`: tests/programs/loops.c (gcc -O2 -g) is profiled, and its pages
# are checked against `edgeprof report --json` (whose counts the other tests check against
# callgrind):
# - index.html lists the hottest functions (--top 3) with the JSON's invocations and block
#   executions, and links to their pages;
# - on each page every block's count and every out-edge's count in the disassembly, and every
#   block (address and count) and every edge label of the inline SVG drawn by dot, equal the
#   JSON's; each source line shown is the source file's line of that number;
# - nothing is loaded from elsewhere (no script, no <link>, no external URL);
# - headless Chromium opens index.html and the hottest function's page with no console
#   message and no failed load (a page with a script error proves the check sees one), and the
#   function page's screenshot shows a rendered CFG: thousands of heat-coloured pixels below
#   the header (the same page with its graph removed has none);
# - a second run replaces the report; a missing binary gives pages without disassembly, with
#   a note; bad input gets one "edgeprof: " line and exit 1 (DIR a file, DIR holding other
#   files: left untouched, a truncated profile, a binary of another build), a bad command line
#   exit 2.
# Needs root and BPF (edgeprof run), dot (graphviz), chromium and python3 with PIL
# (python3-pil): scripts/install-deps.sh installs them; missing ones skip (CI=true: fail).
set -u
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=tests/support/bpf-checks.sh
source tests/support/bpf-checks.sh
# shellcheck source=tests/support/checks.sh
source tests/support/checks.sh
need_root_and gcc dot chromium
# A python3 with PIL: the first python3 on PATH may be another installation than Debian's.
PY=
for p in python3 /usr/bin/python3; do
	if command -v "$p" >/dev/null && "$p" -c 'import PIL' 2>/dev/null; then
		PY=$p
		break
	fi
done
[ -n "$PY" ] || { echo "SKIP: no python3 with PIL (apt-get install python3-pil)"; exit 77; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"

gcc -O2 -g -o "$tmp/loops" tests/programs/loops.c || { echo "FAIL: cannot build loops.c"; exit 1; }
if ! timeout -k 5 120 "$EDGEPROF" -q run -o "$tmp/p.data" -- "$tmp/loops" 2 >/dev/null 2>"$tmp/run.err"; then
	skip_if_no_bpf "$tmp/run.err"
	echo "FAIL: edgeprof run: $(tail -n 2 "$tmp/run.err")"
	exit 1
fi
"$EDGEPROF" report --json "$tmp/p.data" >"$tmp/p.json" || { echo "FAIL: report --json"; exit 1; }

# --- the pages against the JSON --------------------------------------------------------------
if "$EDGEPROF" report --html "$tmp/html" --top 3 "$tmp/p.data" 2>"$tmp/html.err"; then
	ok "report --html wrote $(ls "$tmp/html" | wc -l) files"
else
	bad "report --html failed: $(cat "$tmp/html.err")"
	checks_summary report-html
	exit 1
fi

if "$PY" - "$tmp/p.json" "$tmp/html" "$PWD/tests/programs/loops.c" >"$tmp/cmp.txt" 2>&1 <<'PY'; then
import html.parser, json, os, re, sys

doc = json.load(open(sys.argv[1]))
d, src = sys.argv[2], sys.argv[3]
funcs = {int(f["addr"], 16): f for f in doc["functions"]}
problems = []

def cnt(c):
    return "" if c is None else str(c)

class Page(html.parser.HTMLParser):
    """Collects the elements with data-* attributes, the SVG nodes and edges, links and
    anything that loads a resource."""
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.rows, self.blocks, self.edges, self.lines, self.links = [], [], [], [], []
        self.svg_nodes, self.svg_edges, self.loads = [], [], []
        self.stack, self.g, self.text, self.cur_line = [], None, [], None
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag in ("script", "link", "img", "iframe", "object", "embed") or "src" in a:
            self.loads.append(tag)
        if tag == "style" or "style" in a:
            s = a.get("style") or ""
            if "url(" in s or "@import" in s:
                self.loads.append("css url")
        if tag == "a":
            h = a.get("href") or a.get("xlink:href") or ""
            self.links.append(h)
        if tag == "tr" and "data-addr" in a:
            self.rows.append(a)
        if tag == "tr" and "data-block" in a:
            self.blocks.append(a)
            self.cur_block = a["data-block"]
        if tag == "span" and a.get("class") == "e":
            self.edges.append((self.cur_block, a["data-to"], a["data-count"]))
        if tag == "tr" and "data-line" in a:
            self.cur_line = [a, []]
            self.lines.append(self.cur_line)
        if tag == "g" and a.get("class") in ("node", "edge"):
            self.g = [a["class"], [], []]  # class, title, texts
            self.gdepth = len(self.stack)
        if self.g is not None and tag in ("title", "text"):
            self.text = []
        self.stack.append(tag)
    def handle_endtag(self, tag):
        while self.stack and self.stack.pop() != tag:
            pass
        if self.g is not None and tag == "title":
            self.g[1] = "".join(self.text)
        elif self.g is not None and tag == "text":
            self.g[2].append("".join(self.text))
        elif self.g is not None and tag == "g" and len(self.stack) == self.gdepth:
            (self.svg_nodes if self.g[0] == "node" else self.svg_edges).append(self.g)
            self.g = None
        if tag == "tr":
            self.cur_line = None
    def handle_data(self, data):
        self.text.append(data)
        if self.cur_line is not None and self.stack and self.stack[-1] == "td":
            self.cur_line[1].append(data)

def parse(name):
    p = Page()
    p.feed(open(os.path.join(d, name)).read())
    for ld in p.loads:
        problems.append(f"{name}: loads a resource ({ld})")
    for h in p.links:
        if re.match(r"^[a-z]+:", h):
            problems.append(f"{name}: link outside the page set: {h}")
    return p

idx = parse("index.html")
if len(idx.rows) != 3:
    problems.append(f"index.html: {len(idx.rows)} functions listed, not 3 (--top 3)")
hot = sorted((f for f in doc["functions"]),
             key=lambda f: (-sum(b["count"] or 0 for b in f["blocks"]), int(f["addr"], 16)))
for row, want in zip(idx.rows, hot):
    f = funcs[int(row["data-addr"], 16)]
    if row["data-addr"] != want["addr"]:
        problems.append(f"index.html: {row['data-addr']} where {want['addr']} ({want['name']}) is next hottest")
    if row["data-count"] != cnt(f["count"]):
        problems.append(f"index.html: {f['name']} invocations {row['data-count']} != {f['count']}")
    if int(row["data-blocks"]) != sum(b["count"] or 0 for b in f["blocks"]):
        problems.append(f"index.html: {f['name']} block executions {row['data-blocks']}")
pages = [h for h in idx.links if h.startswith("f-")]
nblocks = nedges = nlines = 0
for name in pages:
    p = parse(name)
    addr = int(re.match(r"f-0x([0-9a-f]+)", name).group(1), 16)
    f = funcs[addr]
    want_blocks = {b["addr"]: cnt(b["count"]) for b in f["blocks"]}
    got_blocks = {b["data-block"]: b["data-count"] for b in p.blocks}
    if got_blocks != want_blocks:
        problems.append(f"{name}: disassembly block counts differ: {got_blocks} != {want_blocks}")
    want_edges = sorted((e["from"], e["to"], cnt(e["count"])) for e in f["edges"])
    if sorted(p.edges) != want_edges:
        problems.append(f"{name}: disassembly edges differ: {sorted(p.edges)} != {want_edges}")
    # The SVG: nodes bN labelled "0xADDR" and the count (commas), exit and entry apart.
    names = {}
    svg_blocks = {}
    for _, title, texts in p.svg_nodes:
        if title in ("entry", "exit"):
            continue
        if len(texts) != 2:
            problems.append(f"{name}: SVG node {title} has texts {texts}")
            continue
        names[title] = texts[0]
        svg_blocks[texts[0]] = texts[1].replace(",", "").replace("?", "")
    if svg_blocks != want_blocks:
        problems.append(f"{name}: SVG block labels differ: {svg_blocks} != {want_blocks}")
    svg_edges = []
    for _, title, texts in p.svg_edges:
        a, b = title.split("->")
        c = texts[0].replace(",", "").replace("?", "") if texts else None
        if a == "entry":
            if c != cnt(f["count"]):
                problems.append(f"{name}: SVG entry edge {c} != invocations {f['count']}")
            continue
        svg_edges.append((names.get(a, a), names.get(b, b), c))
    if sorted(svg_edges) != want_edges:
        problems.append(f"{name}: SVG edge labels differ: {sorted(svg_edges)} != {want_edges}")
    # Source lines: each shown line is the file's line of that number.
    text = open(src).read().split("\n")
    for a, cells in p.lines:
        n = int(a["data-line"])
        shown = cells[-1] if len(cells) >= 3 else ""
        if shown != text[n - 1]:
            problems.append(f"{name}: line {n} shows {shown!r}, the file has {text[n - 1]!r}")
        nlines += 1
    nblocks += len(got_blocks)
    nedges += len(p.edges)
if len(pages) != 3:
    problems.append(f"index.html links {len(pages)} function pages, not 3")
if not nlines:
    problems.append("no source line shown")
for x in problems[:20]:
    print(x)
if problems:
    sys.exit(1)
print(f"{len(pages)} pages: {nblocks} block counts, {nedges} edge counts in disassembly and SVG "
      f"and {nlines} source lines as in report --json")
PY
	ok "$(tail -n 1 "$tmp/cmp.txt")"
else
	bad "pages differ from report --json: $(head -n 12 "$tmp/cmp.txt")"
fi

# --- headless Chromium --------------------------------------------------------------------
# chromium_open PAGE PNG: screenshot (1280x900) with the browser's log in PNG.log; prints the
# console messages and failed loads found in the log.
chromium_open() {
	timeout -k 5 120 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
		--user-data-dir="$tmp/chrome" --window-size=1280,900 --screenshot="$2" \
		--enable-logging=stderr --v=0 "file://$1" >"$2.log" 2>&1
	grep -E 'CONSOLE|net::ERR_|Failed to load' "$2.log"
}

# heat_pixels PNG: the number of pixels in a heat colour (no grey: channels at least 60
# apart, red the largest) inside the graph's box (its 1px #ccc border: the rows below the
# header with more than 600 such pixels; to the bottom of the screenshot when it goes past).
heat_pixels() {
	"$PY" - "$1" <<'PY'
import sys
from PIL import Image
im = Image.open(sys.argv[1]).convert("RGB")
w, h = im.size
px = im.load()
rows = [y for y in range(120, h) if sum(px[x, y] == (204, 204, 204) for x in range(w)) > 600]
if not rows:
    print(0)
    sys.exit()
top = rows[0]
bottom = next((y for y in rows if y > top + 1), h)
n = 0
for y in range(top + 1, bottom):
    for x in range(w):
        r, g, b = px[x, y]
        if r >= g and r >= b and r - min(g, b) >= 60:
            n += 1
print(n)
PY
}

printf '<!DOCTYPE html><html><head><meta charset="utf-8"><title>x</title></head><body><script>no_such_function();</script></body></html>\n' >"$tmp/broken.html"
if [ -n "$(chromium_open "$tmp/broken.html" "$tmp/broken.png")" ]; then
	ok "the console check sees a script error in a broken page"
else
	bad "no console message seen for a page with a script error: $(tail -n 5 "$tmp/broken.png.log")"
fi

hot=$(sed -n 's/.*<a href="\(f-[^"]*\)".*/\1/p' "$tmp/html/index.html" | head -n 1)
for page in index.html "$hot"; do
	if [ ! -s "$tmp/html/$page" ]; then
		bad "no page $page"
		continue
	fi
	msgs=$(chromium_open "$tmp/html/$page" "$tmp/$page.png")
	if [ ! -s "$tmp/$page.png" ]; then
		bad "chromium made no screenshot of $page: $(tail -n 5 "$tmp/$page.png.log")"
	elif [ -n "$msgs" ]; then
		bad "chromium logged for $page: $(echo "$msgs" | head -n 5)"
	else
		ok "chromium opened $page with no console message or failed load"
	fi
done
if [ -s "$tmp/$hot.png" ]; then
	n=$(heat_pixels "$tmp/$hot.png")
	# The same page with an empty graph of the same size: the check must see the difference.
	"$PY" -c 'import re, sys; s = open(sys.argv[1]).read(); open(sys.argv[2], "w").write(re.sub(r"(<svg[^>]*>).*</svg>", r"\1</svg>", s, flags=re.S))' \
		"$tmp/html/$hot" "$tmp/html/nograph.html"
	chromium_open "$tmp/html/nograph.html" "$tmp/nograph.png" >/dev/null
	m=$(heat_pixels "$tmp/nograph.png")
	rm -f "$tmp/html/nograph.html"
	if [ "$n" -ge 3000 ] && [ "$m" -lt 300 ]; then
		ok "the screenshot of $hot shows a rendered CFG: $n heat-coloured pixels (with an empty graph: $m)"
	else
		bad "the screenshot of $hot: $n heat-coloured pixels (want >= 3000), with an empty graph $m (want < 300)"
	fi
fi

# --- replacing, no binary, bad input ----------------------------------------------------------
touch "$tmp/html/stale-marker-test"
if "$EDGEPROF" -q report --html "$tmp/html" --top 1 "$tmp/p.data" 2>"$tmp/again.err" &&
	[ ! -e "$tmp/html/stale-marker-test" ] && [ "$(ls "$tmp/html" | wc -l)" = 2 ] &&
	[ -z "$(ls -a "$tmp" | grep '\.tmp-')" ]; then
	ok "a second run replaced the report (index.html and 1 page, no temporary directory left)"
else
	bad "second run: $(cat "$tmp/again.err"); $(ls -a "$tmp" "$tmp/html" | tr '\n' ' ')"
fi

cp "$tmp/loops" "$tmp/loops.bak"
rm "$tmp/loops"
if "$EDGEPROF" report --html "$tmp/nobin" --top 1 "$tmp/p.data" 2>"$tmp/nobin.err" &&
	grep -q 'cannot be opened' "$tmp/nobin/index.html" &&
	grep -q 'no disassembly' "$tmp/nobin/$(ls "$tmp/nobin" | grep '^f-' | head -n 1)" &&
	grep -q 'data-block' "$tmp/nobin/$(ls "$tmp/nobin" | grep '^f-' | head -n 1)"; then
	ok "without the binary: pages with counts and graph, a note instead of disassembly ($(head -n 1 "$tmp/nobin.err"))"
else
	bad "without the binary: $(cat "$tmp/nobin.err")"
fi
mv "$tmp/loops.bak" "$tmp/loops"

# expect_bad NAME STATUS CMD...: exit STATUS with exactly one "edgeprof: " line on stderr.
expect_bad() {
	local name=$1 want=$2 rc
	shift 2
	"$@" >"$tmp/bad.out" 2>"$tmp/bad.err"
	rc=$?
	if [ "$rc" = "$want" ] && [ "$(grep -c '^edgeprof: ' "$tmp/bad.err")" = 1 ]; then
		ok "$name: exit $rc, $(head -n 1 "$tmp/bad.err")"
	else
		bad "$name: exit $rc (want $want): $(head -n 3 "$tmp/bad.err")"
	fi
}
touch "$tmp/afile"
expect_bad "DIR is a file" 1 "$EDGEPROF" report --html "$tmp/afile" "$tmp/p.data"
mkdir "$tmp/mine" && echo keep >"$tmp/mine/notes.txt"
expect_bad "DIR holds other files" 1 "$EDGEPROF" report --html "$tmp/mine" "$tmp/p.data"
[ "$(cat "$tmp/mine/notes.txt")" = keep ] && [ "$(ls -A "$tmp/mine")" = notes.txt ] &&
	ok "the directory of other files is untouched" || bad "the directory of other files changed"
head -c 300 "$tmp/p.data" >"$tmp/short.data"
expect_bad "truncated profile" 1 "$EDGEPROF" report --html "$tmp/short" "$tmp/short.data"
gcc -O1 -g -o "$tmp/other" tests/programs/loops.c
expect_bad "binary of another build" 1 "$EDGEPROF" report --html "$tmp/other-html" --binary "$tmp/other" "$tmp/p.data"
[ ! -e "$tmp/short" ] && [ ! -e "$tmp/other-html" ] && ok "nothing written for bad input" ||
	bad "a directory was made for bad input"
expect_bad "--source-map without --html" 2 "$EDGEPROF" report --source-map a=b "$tmp/p.data"
expect_bad "--html with --json" 2 "$EDGEPROF" report --html "$tmp/x" --json "$tmp/p.data"

checks_summary report-html
