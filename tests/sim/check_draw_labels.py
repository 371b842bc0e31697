#!/usr/bin/env python3
"""Checks an SVG of `collie-sim draw`: no two message labels overlap (boxes estimated as
the drawing code does: 5.6 px per glyph at font-size 9, 9 px above the baseline and 2
below), no label leaves the drawing, and every message is accounted for: each arrow has
either its label on the drawing or a row in the side table.  Exit 1 with the reason."""
import re
import sys

svg = open(sys.argv[1], encoding="utf-8").read()
arrows = len(re.findall(r"marker-end='url\(#a[kb]\)'", svg))
width = float(re.search(r"<svg [^>]*width='([0-9.]+)'", svg).group(1))
labels = [(float(x), float(y), t) for x, y, t in re.findall(
    r"<text x='([0-9.-]+)' y='([0-9.-]+)' font-size='9' text-anchor='middle' fill='#333' stroke='white'[^>]*>([^<]*)</text>", svg)]
rows = re.findall(r"<text x='[0-9.]+' y='[0-9.]+' font-size='9' fill='#333'>\[(\d+)\] ", svg)
refs = [t for _, _, t in labels if re.fullmatch(r"\[\d+\]", t)]
full = len(labels) - len(refs)
if full + len(rows) != arrows:
    sys.exit(f"{arrows} arrows but {full} labels on the drawing and {len(rows)} in the table")
if sorted(int(r) for r in rows) != list(range(1, len(rows) + 1)):
    sys.exit("table rows are not numbered 1..n")
boxes = []
for x, y, t in labels:
    half = len(t) * 5.6 / 2 + 1
    boxes.append((x - half, y - 9, x + half, y + 2, t))
    if x - half < 0 or x + half > width:
        sys.exit(f"label {t} at x={x} leaves the drawing")
boxes.sort()
for i, a in enumerate(boxes):          # sweep by left edge
    for b in boxes[i + 1:]:
        if b[0] >= a[2]:
            break
        if a[1] < b[3] and b[1] < a[3]:
            sys.exit(f"labels overlap: {a[4]} at ({a[0]:.1f},{a[1]:.1f}) and {b[4]} at ({b[0]:.1f},{b[1]:.1f})")
print(f"{arrows} messages: {full} labels on the drawing, {len(rows)} in the table "
      f"({len(refs)} with a reference on their arrow), none overlapping")
