"""Compare tally's CSV output with a csv-spectrum expectation.

The expectation is a JSON array of objects whose values are all strings.
tally infers types, so a cell matches when the texts are equal or when both
read as the same number (tally writes 1.50 as 1.5).  An empty unquoted cell
(null) matches the empty string.
"""
import csv, json, sys

def same(want, got):
    if want == got:
        return True
    try:
        return float(want) == float(got)
    except ValueError:
        return False

want = json.load(open(sys.argv[1], encoding="utf-8"))
with open(sys.argv[2], newline="", encoding="utf-8") as f:
    got = list(csv.DictReader(f))
if len(want) != len(got):
    sys.exit(f"{len(got)} rows, expected {len(want)}")
for i, (w, g) in enumerate(zip(want, got)):
    if list(w.keys()) != list(g.keys()):
        sys.exit(f"row {i}: columns {list(g.keys())}, expected {list(w.keys())}")
    for k in w:
        if not same(w[k], g[k]):
            sys.exit(f"row {i} column {k}: {g[k]!r}, expected {w[k]!r}")
