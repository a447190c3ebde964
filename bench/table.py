#!/usr/bin/env python3
"""The one table of `make bench` (bench/run.sh), from the records every
bench writes to BENCH_OUT/rows.tsv (bench_row() in bench.c,
bench/rows.subr for the shell benches): one line a row, in sections,
with its median, 99th percentile, rate where it has one, and its ratio
to its anchor, a row of the same run named by the record.  Optionally
the same table in Markdown (for the README) and an SVG plot of the
latency distributions, one panel a section, one line a row, log x.

    table.py [--title T]... [--markdown FILE] [--svg FILE] ROWS.TSV

A record: section, name, anchor ("-": none), by ("median": the ratio
of the medians, "rate": of the rates), unit ("ms", another unit for a
value that is not a latency, "skip" for a row not measured), n,
median, p99, rate ("-": none), samples (a file relative to the tsv's
folder, "-": none; for "skip", why), and for a row that has one, an
eleventh field: its 95th percentile (the table then has a p95 column,
empty for the rows without).  docs/bench.md says how to read it.
"""

import argparse
import math
import os
import re
import sys

# Sections in the order of the table; any other follows, as it came.
SECTIONS = ["boot", "pooled boot", "exec", "http", "first answer",
            "port", "terminal", "idle memory", "density", "scale", "probe",
            "snapshots"]

# Short names of the anchors in the ratio column.
LABELS = [
    (r"^bwrap /bin/true \(L1\.5-like\)(, beside .*)?$", "bwrap"),
    (r"^bwrap --unshare-net /bin/true$", "bwrap --unshare-net"),
    (r"^fork\+exec(\+wait)? /bin/true(, beside .*)?$", "fork+exec"),
    (r"^bare evhttp, ", "bare evhttp"),
    (r"^direct loopback, same server", "direct loopback"),
    (r"^host pty, cat", "host pty"),
    (r"^runsc run /bin/true", "runsc run"),
    (r"^runsc exec /bin/true", "runsc exec"),
    (r"^fencectl exec /bin/true$", "native fencectl exec"),
    (r"^vm \(\w+\) fence boot to agent ready$", "vm fence"),
    (r"^vm \(\w+\) fence exec /bin/true", "vm fence exec"),
]

BWRAP = "bwrap /bin/true (L1.5-like)"
BWRAP_NET = "bwrap --unshare-net /bin/true"


class Row:
    def __init__(self, f, lineno):
        if len(f) not in (10, 11):
            raise ValueError("line %d: %d fields, not 10 or 11"
                             % (lineno, len(f)))
        (self.section, self.name, anchor, self.by, self.unit, n, med, p99,
         rate, self.samples) = f[:10]
        self.p95 = float(f[10]) if len(f) == 11 else None
        if self.by not in ("median", "rate"):
            raise ValueError("line %d: by %r" % (lineno, self.by))
        self.anchor = None if anchor == "-" else anchor
        self.n = int(n)
        self.median = float(med)
        self.p99 = float(p99)
        self.rate = None if rate == "-" else float(rate)
        if self.n < 0 or self.median < 0 or self.p99 < 0 or \
                (self.rate is not None and self.rate < 0) or \
                (self.p95 is not None and self.p95 < 0):
            raise ValueError("line %d: a negative number" % lineno)
        self.classify()

    def classify(self):
        """The warm pool's rows come through bench_row() in boot.c:
        they get a section of their own, against bwrap of their tier."""
        if self.section == "boot" and "pooled" in self.name:
            self.section = "pooled boot"
            self.anchor = BWRAP_NET if re.search(r"\bL2\b", self.name) \
                else BWRAP

    @property
    def measured(self):
        return self.unit != "skip" and self.n > 0


def read_rows(path):
    rows = []
    with open(path) as f:
        for i, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if line:
                rows.append(Row(line.split("\t"), i))
    return rows


def label(anchor):
    # The cgroup v2 guest's rows (images/bench-v2) carry a tag after
    # their names; their section says it already.
    m = re.match(r"^(.*) \(v2 guest[^)]*\)$", anchor)
    if m:
        anchor = m.group(1)
    for pat, short in LABELS:
        if re.search(pat, anchor):
            return short
    return anchor


def ratio(row, byname):
    """The ratio column of a row: '0.54x bwrap', 'rate 1.70x fork+exec',
    or why there is none."""
    if row.anchor is None or not row.measured:
        return ""
    a = byname.get(row.anchor)
    if a is None or not a.measured:
        return "(no %s in this run)" % label(row.anchor)
    if a.unit != row.unit:
        return "(%s is in %s)" % (label(row.anchor), a.unit)
    if row.by == "rate":
        if row.rate is None or not a.rate:
            return "(no rate)"
        return "rate %.2fx %s" % (row.rate / a.rate, label(row.anchor))
    if a.median == 0:
        return "(%s took 0)" % label(row.anchor)
    return "%.2fx %s" % (row.median / a.median, label(row.anchor))


def num(v):
    if v >= 1000:
        return "%.0f" % v
    if v >= 100:
        return "%.1f" % v
    return "%.3f" % v


def cells(row, byname, pct=False):
    """name, n, median, [p95,] p99, rate, ratio: the row's cells as
    text; the p95 cell where pct (some row of the table has one)."""
    if row.unit == "skip":
        c = [row.name, "", "", "", "", "skipped: " + row.samples]
    elif row.n == 0:
        c = [row.name, "0", "", "", "", "failed"]
    else:
        if row.unit == "ms":
            med, p99 = num(row.median) + " ms", num(row.p99) + " ms"
        elif row.unit == "count":
            med, p99 = "%d" % row.median, ""
        else:
            med, p99 = num(row.median) + " " + row.unit, ""
        rate = "%.1f/s" % row.rate if row.rate is not None else ""
        n = str(row.n) if row.unit == "ms" else ""
        c = [row.name, n, med, p99, rate, ratio(row, byname)]
    if pct:
        p95 = num(row.p95) + " ms" if row.p95 is not None and \
            row.unit == "ms" and row.n > 0 else ""
        c.insert(3, p95)
    return c


def ordered(rows):
    secs = [s for s in SECTIONS if any(r.section == s for r in rows)]
    for r in rows:
        if r.section not in secs:
            secs.append(r.section)
    return [(s, [r for r in rows if r.section == s]) for s in secs]


HEAD = ["", "n", "median", "p99", "rate", "ratio to anchor"]


def head(pct):
    """The columns: a p95 column only where some row has one, so that a
    table without such rows is as it always was."""
    return HEAD[:3] + ["p95"] + HEAD[3:] if pct else HEAD


def text_table(rows, titles):
    byname = {}
    for r in rows:
        byname.setdefault(r.name, r)
    pct = any(r.p95 is not None for r in rows)
    hd = head(pct)
    lines = list(titles)
    body = []
    for sec, rs in ordered(rows):
        body.append([sec])
        for r in rs:
            c = cells(r, byname, pct)
            c[0] = "  " + c[0]
            body.append(c)
    w = [max(len(hd[i]), max((len(c[i]) for c in body if len(c) > i),
                             default=0)) for i in range(len(hd))]
    # Two spaces at least between cells, one at most inside one; the
    # name left, the ratio left and last, the numbers right.
    fmt = lambda c: ("  ".join(["%-*s" % (w[0], c[0])] +
                               ["%*s" % (w[i], c[i])
                                for i in range(1, len(hd) - 1)] +
                               [c[-1]])).rstrip()
    lines.append(fmt(hd))
    for c in body:
        lines.append(c[0] if len(c) == 1 else fmt(c))
    return "\n".join(lines) + "\n"


def markdown_table(rows, titles):
    byname = {}
    for r in rows:
        byname.setdefault(r.name, r)
    pct = any(r.p95 is not None for r in rows)
    hd = head(pct)
    esc = lambda s: s.replace("|", "\\|")
    lines = [t for t in titles] + [""] if titles else []
    lines.append("| row | " + " | ".join(hd[1:]) + " |")
    lines.append("|---|" + "---:|" * (len(hd) - 2) + "---|")
    for sec, rs in ordered(rows):
        lines.append("| **%s** |" % esc(sec) + " |" * (len(hd) - 1))
        for r in rs:
            lines.append("| " + " | ".join(esc(c) for c in
                                           cells(r, byname, pct)) + " |")
    return "\n".join(lines) + "\n"


def read_samples(base, row):
    if not row.measured or row.unit != "ms" or row.samples == "-":
        return []
    path = os.path.join(base, row.samples)
    # A samples name comes from our own benches; still, stay in base.
    if os.path.realpath(path).find(os.path.realpath(base) + os.sep) != 0:
        return []
    try:
        with open(path) as f:
            v = sorted(float(x) for x in f if x.strip())
    except (OSError, ValueError):
        return []
    return [x for x in v if x > 0]


def plot(rows, base, path):
    """One panel a section, one line a row: the fraction of its samples
    at or under each latency, latency on a log scale; anchors dashed."""
    colours = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e",
               "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"]
    w, h, pad, left = 620, 180, 46, 60
    panels = []
    anchors = set(r.anchor for r in rows if r.anchor is not None)
    for sec, rs in ordered(rows):
        series = [(r.name, read_samples(base, r)) for r in rs]
        series = [(n, s) for n, s in series if s]
        if series:
            panels.append((sec, series))
    legend = 14
    heights = [h + pad + legend * len(s) for _, s in panels]
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
           'font-family="sans-serif" font-size="11">'
           % (left + w + pad, sum(heights) + pad)]
    out.append('<rect width="100%" height="100%" fill="white"/>')
    y0 = pad
    for (sec, series), ph in zip(panels, heights):
        lo = min(s[0] for _, s in series)
        hi = max(s[-1] for _, s in series)
        d0 = math.floor(math.log10(lo))
        d1 = max(math.ceil(math.log10(hi)), d0 + 1)
        xs = lambda v: left + w * (math.log10(v) - d0) / (d1 - d0)
        out.append('<text x="%d" y="%d">%s: fraction of runs at or under '
                   'a latency (ms, log scale)</text>'
                   % (left, y0 - 8, xml(sec)))
        out.append('<rect x="%d" y="%d" width="%d" height="%d" fill="none" '
                   'stroke="#888"/>' % (left, y0, w, h))
        for d in range(d0, d1 + 1):
            x = xs(10 ** d)
            out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" '
                       'stroke="#ddd"/>' % (x, y0, x, y0 + h))
            out.append('<text x="%.1f" y="%d" text-anchor="middle">%s</text>'
                       % (x, y0 + h + 13, ("%g" % (10 ** d))))
        for f in (0, 0.5, 1):
            out.append('<text x="%d" y="%.1f" text-anchor="end">%g</text>'
                       % (left - 4, y0 + h - h * f + 4, f))
        for ci, (name, s) in enumerate(series):
            n = len(s)
            # A step up at each sample, from 0 below the first.
            pts = ["%.1f,%d" % (xs(s[0]), y0 + h)]
            for i, v in enumerate(s):
                pts.append("%.1f,%.1f" % (xs(v), y0 + h - h * i / n))
                pts.append("%.1f,%.1f" % (xs(v), y0 + h - h * (i + 1) / n))
            c = colours[ci % len(colours)]
            # An anchor's line is dashed: what the others are held to.
            dash = ' stroke-dasharray="5,3"' if name in anchors else ""
            out.append('<polyline fill="none" stroke="%s"%s points="%s"/>'
                       % (c, dash, " ".join(pts)))
            out.append('<text x="%d" y="%d" fill="%s">%s</text>'
                       % (left, y0 + h + 28 + legend * ci, c, xml(name)))
        y0 += ph
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def xml(s):
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("rows")
    ap.add_argument("--title", action="append", default=[])
    ap.add_argument("--markdown")
    ap.add_argument("--svg")
    a = ap.parse_args()
    try:
        rows = read_rows(a.rows)
    except (OSError, ValueError) as e:
        print("table.py: %s: %s" % (a.rows, e), file=sys.stderr)
        return 1
    sys.stdout.write(text_table(rows, a.title))
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write(markdown_table(rows, a.title))
    if a.svg:
        plot(rows, os.path.dirname(os.path.abspath(a.rows)), a.svg)
    return 0


if __name__ == "__main__":
    sys.exit(main())
