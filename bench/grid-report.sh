#!/bin/bash
# The tables of make bench-grid (bench/grid.sh) from its raw files, so a
# lab log's raw data can be tabulated again:
#   grid-report.sh PAIRS LOST STATS STATS_SECS < HEADER
# PAIRS: "DENSITY PATH WRITERS PAGES CONFIG RUN TRACED_OPS/S UNTRACED_OPS/S"
# per pair of windows; LOST: "DENSITY PATH WRITERS PAGES CONFIG RUN LOST" per
# run; STATS: "DENSITY PATH WRITERS PAGES CONFIG OPS/S VIOLATIONS
# PROG:NS_PER_RUN:RUNS..." per bpf_stats run; HEADER: lines printed first.
set -euo pipefail
[ $# = 4 ] || { echo "usage: grid-report.sh PAIRS LOST STATS STATS_SECS < HEADER" >&2; exit 2; }
pairs=$1 lost=$2 stats=$3 secs=$4
cat

echo
echo "Ratios, traced/untraced ops/s in alternating windows (geometric mean over all pairs):"
# The interval is the pairs' (Student t over their log ratios); RUNS gives
# the runs' own ratios, whose spread also holds the run-to-run effect.
awk -v lostfile="$lost" '
	BEGIN { while ((getline l < lostfile) > 0) { split(l, f, " ")
		k = f[1] " " f[2] " " f[3] " " f[4] " " f[5]
		if (f[7] != "-" && f[7] != "") lost[k] += f[7]; else if (!(k in lost)) lost[k] = "-" } }
	$7 > 0 && $8 > 0 {
		k = $1 " " $2 " " $3 " " $4 " " $5; r = log($7 / $8)
		if (!(k in n)) order[++nk] = k
		n[k]++; s[k] += r; ss[k] += r * r; rs[k, $6] += r; rn[k, $6]++
		if (!((k, $6) in seen)) { seen[k, $6] = 1; runs[k] = runs[k] " " $6 }
	}
	END {
		printf "%-6s %-5s %2s %5s %-6s %5s %7s %15s %15s %6s %s\n", "DENS", "PATH", "W", "PAGES",
			"CONFIG", "PAIRS", "RATIO", "CI95", "RUNS_MIN-MAX", "LOST", "BUDGET"
		for (i = 1; i <= nk; i++) {
			k = order[i]; m = s[k] / n[k]
			sd = n[k] > 1 ? sqrt((ss[k] - n[k] * m * m) / (n[k] - 1)) : 0
			z = 1.96; d = n[k] > 1 ? n[k] - 1 : 1
			t = z + (z^3 + z) / (4 * d) + (5 * z^5 + 16 * z^3 + 3 * z) / (96 * d^2)
			h = t * sd / sqrt(n[k]); lo = exp(m - h); hi = exp(m + h)
			split(k, f, " "); cfg = f[5]
			rmin = 1e9; rmax = 0; nr = split(runs[k], rl, " ")
			for (j = 1; j <= nr; j++) { v = exp(rs[k, rl[j]] / rn[k, rl[j]])
				if (v < rmin) rmin = v; if (v > rmax) rmax = v }
			# Budgets (issue 30): aggregate 0.98, streaming 0.95, the
			# default verify rate (16) 0.95; rates 1 and 256 state a cost.
			b = cfg == "quiet" ? 0.98 : cfg == "json" || cfg == "v16" ? 0.95 : 0
			verdict = b == 0 ? "-" : lo >= b ? "met" : hi < b ? "NOT met" : "unresolved"
			if (b) verdict = verdict " (" b ")"
			printf "%-6s %-5s %2s %5s %-6s %5d %7.4f %7.4f-%.4f %7.4f-%.4f %6s %s\n", f[1], f[2],
				f[3], f[4], cfg, n[k], exp(m), lo, hi, rmin, rmax, lost[k], verdict
		}
	}' "$pairs"
echo "BUDGET: met when the interval is above it, NOT met when below, unresolved when it holds it."
echo "none: the control, no tracer (both windows untraced). vN: -q --verify=N."

[ -s "$stats" ] || exit 0
echo
echo "Per program with kernel.bpf_stats_enabled, one ${secs} s run a point (ns/run as the kernel"
echo "counts it, with its ~50-60 ns accounting floor; runs over the whole tracer run):"
awk -v secs="$secs" '
	function prog(name,  i, f) { for (i = 8; i <= NF; i++) { split($i, f, ":")
		if (f[1] == name) { ns = f[2]; runs = f[3]; return ns } } runs = 0; return "-" }
	BEGIN { printf "%-6s %-5s %2s %5s %-6s %8s %6s %6s %6s %7s %7s %6s %6s %6s\n", "DENS", "PATH", "W",
		"PAGES", "CONFIG", "OPS/S", "VIOL/W", "DIRTY", "WAIT", "RQ_DONE", "PG/RQ", "V_ISS", "V_DONE",
		"V_BIO" }
	{
		dirty = prog("tp_writeback_dirty_folio"); wait_ns = prog("tp_folio_wait_writeback")
		rq = prog("tp_block_rq_complete"); rq_runs = runs
		iss = prog("tp_verify_rq_issue"); vdone = prog("tp_verify_rq_complete")
		bio = prog("tp_verify_bio_queue")
		ppr = rq_runs > 0 ? sprintf("%.1f", $6 * secs / rq_runs) : "-"
		printf "%-6s %-5s %2s %5s %-6s %8d %6.2f %6s %6s %7s %7s %6s %6s %6s\n", $1, $2, $3, $4,
			$5, $6, ($6 > 0 ? $7 / ($6 * secs) : 0), dirty, wait_ns, rq, ppr, iss, vdone, bio
	}' "$stats"
echo "VIOL/W: violations per page written (the run's violations over its ops); DIRTY, WAIT, RQ_DONE:"
echo "ns/run of tp_writeback_dirty_folio, tp_folio_wait_writeback, tp_block_rq_complete; PG/RQ:"
echo "pages written per completed request (approximate: completions of other devices count too);"
echo "V_ISS, V_DONE, V_BIO: --verify's programs."

echo
echo "The completed-request walk (tp_block_rq_complete, quiet): ns/run at each request size, per"
echo "page of the request as measured (PG/RQ above), and the slope between sizes ((ns2 - ns1) /"
echo "(pages2 - pages1), the marginal cost of a page):"
awk -v secs="$secs" '$5 == "quiet" && $1 != "sparse" {
		ns = "-"; runs = 0
		for (i = 8; i <= NF; i++) { split($i, f, ":")
			if (f[1] == "tp_block_rq_complete") { ns = f[2]; runs = f[3] } }
		k = $1 " " $2 " " $3; if (!(k in seen)) { seen[k] = 1; order[++nk] = k }
		np[k]++; pg[k, np[k]] = runs > 0 ? $6 * secs / runs : $4; t[k, np[k]] = ns
	}
	END {
		for (i = 1; i <= nk; i++) {
			k = order[i]; line = sprintf("%-17s", k)
			for (j = 1; j <= np[k]; j++) {
				per = t[k, j] == "-" ? 0 : t[k, j] / pg[k, j]
				line = line sprintf("  %6.1f pg %6s ns %6.1f/pg", pg[k, j], t[k, j], per)
				if (j > 1 && t[k, j] != "-" && t[k, j - 1] != "-") {
					slope = (t[k, j] - t[k, j - 1]) / (pg[k, j] - pg[k, j - 1])
					line = line sprintf(" (slope %5.1f)", slope)
				}
			}
			print line
		}
	}' "$stats"
