#!/usr/bin/env python3
"""Reads lab/guard-residual.sh's output (one run) and says where each failed
write request of the DIX disk falls and whether the tool saw a violation on
its pages while it was in flight.

  guard-residual.py [WINDOW_MS] < RUN_OUTPUT

A failed request's pages: the file pages (ino, index) its sectors hold
(FIEMAP extents), or "journal" (ext4's journal blocks), or "other" (no file:
metadata). A violation event on one of its pages between its first bio's
queueing (the guard is computed then) and its completion counts as seen in
flight (no queueing time seen: WINDOW_MS before, default 1000). Without
bpftrace's lines (rq|) the guard lines stand for the failed requests: their
first bad sector, at their printk time (local_clock, taken as the
monotonic clock, 50 ms of slack after). Prints the counts, then one line
per failed request. Exit 2 on bad usage.
"""
import json
import sys
from collections import Counter, defaultdict

PAGE = 4096


def parse(lines):
    d = defaultdict(list)
    for line in lines:
        tag, _, rest = line.partition('| ')
        if tag in ('rq', 'guard', 'ev', 'ext', 'jnl', 'bs', 'clk', 'sum', 'kw'):
            d[tag].append(rest.strip())
    return d


def owner_of(sector, exts, jnl, bs):
    for ino, logical, phys, length in exts:
        if phys <= sector < phys + length:
            return (ino, (logical + sector - phys) * 512 // PAGE)
    block = sector * 512 // bs
    if jnl and jnl[0] <= block <= jnl[1]:
        return 'journal'
    return 'other'


def main(argv):
    if len(argv) > 2 or (len(argv) == 2 and not argv[1].isdigit()):
        print('usage: guard-residual.py [WINDOW_MS] < RUN_OUTPUT', file=sys.stderr)
        return 2
    window = (int(argv[1]) if len(argv) == 2 else 1000) / 1000
    d = parse(sys.stdin)
    bs = int(d['bs'][0]) if d['bs'] else 1024
    exts = [tuple(map(int, e.split())) for e in d['ext']]
    jnl = tuple(map(int, d['jnl'][0].split())) if d['jnl'] and d['jnl'][0].split() else None
    mono, real = d['clk'][0].split()
    offset = float(real) - int(mono) / 1e9
    events = defaultdict(list)
    for e in d['ev']:
        ts, ino, index, _ = e.split()
        events[(int(ino), int(index))].append(float(ts))
    failures = []
    for r in d['rq']:
        ns, sector, nr, err, queued = map(int, r.split())
        end = ns / 1e9 + offset
        failures.append((end, sector, nr, err, queued / 1e9 + offset if queued else end - window))
    if not failures:
        for g in d['guard']:
            sector, ts = g.split()
            end = float(ts) + offset + 0.05
            failures.append((end, int(sector), 1, 0, end - window))
    rqs = []
    for end, sector, nr, err, start in failures:
        owners = []
        for s in range(sector, sector + nr):
            o = owner_of(s, exts, jnl, bs)
            if o not in owners:
                owners.append(o)
        seen = [o for o in owners if isinstance(o, tuple) and
                any(start <= t <= end for t in events.get(o, []))]
        rqs.append((end, sector, nr, err, owners, seen, start))
    guards = [int(g.split()[0]) for g in d['guard']]
    s = json.loads(d['sum'][0]) if d['sum'] else {}
    kinds = Counter('file' if isinstance(o, tuple) else o for r in rqs for o in r[4])
    # a page counted failed once a cycle: pages in two failed requests
    # in flight together (one writeback of the page, split)
    last, twice = {}, 0
    for r in sorted(rqs, key=lambda r: r[6]):
        for o in r[5]:
            if o in last and r[6] <= last[o]:
                twice += 1
            last[o] = max(last.get(o, 0), r[0])
    print(f'guard lines {len(guards)}; failed write requests {len(rqs)} '
          f'(guard sector inside: {sum(any(r[1] <= g < r[1] + r[2] for r in rqs) for g in guards)})')
    print(f'tool: failed_after_violation {s.get("failed_after_violation")}, '
          f'violations {s.get("violations_total")}, events_lost {s.get("events_lost")}, '
          f'would_stall_untimed {s.get("would_stall_untimed")}, '
          f'changed {s.get("verify", {}).get("pages_changed")}')
    print(f'pages of failed requests by owner: {dict(kinds)}')
    # (only with the queueing times: a fixed window overlaps anything)
    timed = bool(d['rq']) and all(int(r.split()[4]) for r in d['rq'])
    print(f'requests with a violated page in flight {sum(bool(r[5]) for r in rqs)}; '
          f'violated pages in them {sum(len(r[5]) for r in rqs)}; '
          f'of those again in a failed request in flight with it {twice if timed else "n/a"}; '
          f'writeback started on a dirty page {len(d["kw"])}')
    for end, sector, nr, err, owners, seen, start in sorted(rqs):
        print(f'rq {end:.6f} ({(end - start) * 1000:.1f} ms) sector {sector} +{nr} err {err} '
              f'owners {" ".join(map(str, owners))} violated {" ".join(map(str, seen)) or "-"}')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
