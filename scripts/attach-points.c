/*
 * Not compiled: make runs the C preprocessor over it to write
 * $(OUTPUT)/attach-points.txt, the names of the tool's BPF programs, one a
 * line, from the attach-point lists of bpf/stablepage.h. Each name comes out
 * as the word spt_prog=NAME. The tests and benchmarks read the list
 * (scripts/lib.bash: attach_points) instead of keeping names by hand.
 */
#include "stablepage.h"

#define SPT_PROG(prog, ...) spt_prog=prog
#define SPT_MKWRITE_PROGS(fn, ...) spt_prog=fentry_##fn spt_prog=fexit_##fn

SPT_TRACEPOINTS(SPT_PROG)
SPT_HOLD_POINTS(SPT_PROG)
SPT_VERIFY_POINTS(SPT_PROG)
SPT_FENTRY_FIXED_POINTS(SPT_PROG)
SPT_MKWRITE_FUNCS(SPT_MKWRITE_PROGS)
