#!/usr/bin/env python3
"""Two captures' pages hold the same data: each HTML file that differs
between `.ci/outputs` captures A and B is compared with its scripts and
styles taken out (the viewer's code), so a change to the viewer's code alone
shows as no difference in what the pages carry.

    .ci/pages-data-equal.py A B     exit 0 when every page's data agrees
"""
import re
import sys
from pathlib import Path

a, b = Path(sys.argv[1]), Path(sys.argv[2])
CODE = re.compile(r"<script>.*?</script>|<style>.*?</style>", re.S)
bad = 0
pages = sorted(p.relative_to(a) for p in a.rglob("*.html"))
for rel in pages:
    x, y = (a / rel).read_text(), (b / rel).read_text()
    if CODE.sub("", x) != CODE.sub("", y):
        print(f"data differs: {rel}")
        bad += 1
print(f"{len(pages)} pages, {bad} with other data")
sys.exit(1 if bad else 0)
