# stablepage-trace — see README.md. `make V=1` shows the commands.
# `make` builds the tool and the workload generator; `make bench-tools` the
# benchmarks' helpers. Out of tree: make OUTPUT=DIR. CFLAGS, CPPFLAGS and
# LDFLAGS are honoured (e.g. those of dpkg-buildflags).
OUTPUT ?= build
PREFIX ?= /usr/local
CLANG ?= clang
LLVM_STRIP ?= llvm-strip
BPFTOOL ?= bpftool
CC ?= gcc
VERSION := 0.1.0

# vmlinux/ has x86's types only, and the BPF programs read x86 syscall frames.
MACHINE := $(shell uname -m)
ARCH := $(if $(filter x86_64,$(MACHINE)),x86,$(MACHINE))
ifneq ($(ARCH),x86)
ifneq ($(filter-out clean deps,$(or $(MAKECMDGOALS),all)),)
$(error this machine is $(MACHINE): stablepage-trace builds on x86_64 only (ARCH=x86, vmlinux/x86))
endif
endif

ifeq ($(V),1)
Q :=
msg :=
else
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

CFLAGS ?= -O2 -g
USER_CFLAGS := $(CPPFLAGS) $(CFLAGS) -std=gnu11 -Wall -Wextra -Werror -Wno-missing-field-initializers \
	-MMD -MP -I$(OUTPUT) -Ibpf -Iuser -DSPT_VERSION='"$(VERSION)"'
BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Ivmlinux/$(ARCH) -Ibpf -MMD -MP \
	-Wall -Werror -Wno-unused-function
LIBBPF_LIBS := $(shell pkg-config --libs libbpf 2>/dev/null || echo -lbpf) -lelf -lz

USER_OBJS := $(addprefix $(OUTPUT)/, main.o options.o help.o plan.o points.o tracer.o tracer_loop.o \
	tracer_report.o apply_plan.o events.o summary.o hold_glue.o report.o report_json.o rows.o \
	resolve.o parse.o json.o prom.o \
	enforce.o remount.o mountspec.o probe.o features.o delta.o msg.o escape.o hold.o guardian.o \
	jsonread.o runfile.o html.o htmlreport.o htmltables.o hold_record.o privs.o verify.o \
	verify_read.o promdevs.o retire.o prune.o)
# The pure user-space parts: linked into the unit tests and the fuzz harnesses.
PURE_OBJS := report.o report_json.o rows.o parse.o json.o prom.o hold.o options.o help.o plan.o points.o resolve.o msg.o \
	escape.o delta.o jsonread.o runfile.o html.o htmlreport.o htmltables.o verify.o promdevs.o \
	retire.o mountspec.o
UNIT_OBJS := $(addprefix $(OUTPUT)/, unit_tests.o report_tests.o aging_tests.o mountspec_tests.o verify_tests.o \
	$(PURE_OBJS))

.PHONY: all clean deps demo test test-host unit install uninstall deb vmlinux bench bench-progs \
	bench-switch bench-verify bench-soak bench-grid vmtest matrix
# The product: the tool, the workload generator, the list of the tool's
# BPF programs (for the tests and benchmarks).
all: $(OUTPUT)/stablepage-trace $(OUTPUT)/wac $(OUTPUT)/attach-points.txt

# The benchmarks' helpers (bench/) and the lab's reproducer (lab/); the
# tests run the benchmarks' harnesses too.
BENCH_TOOLS := $(addprefix $(OUTPUT)/, progcost switchcost pausebench emptyprogs.bpf.o \
	waitstable-tramp.bpf.o soakcount soakspawn gridload)
.PHONY: bench-tools
bench-tools: $(BENCH_TOOLS)

.DELETE_ON_ERROR:

$(OUTPUT):
	$(Q)mkdir -p $@

# The tracer's BPF objects in bpf/, the benchmark's (loaded by progcost) in
# bench/, the lab's reproducer in lab/.
vpath %.bpf.c bpf bench lab

$(OUTPUT)/%.bpf.o: %.bpf.c | $(OUTPUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -MF $(@:.o=.d) -c $< -o $@
	$(Q)$(LLVM_STRIP) -g $@

$(OUTPUT)/%.skel.h: $(OUTPUT)/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< > $@.tmp && mv $@.tmp $@

# The loader embeds the BPF object through its skeleton.
$(addprefix $(OUTPUT)/, tracer.o tracer_loop.o tracer_report.o apply_plan.o events.o summary.o \
	hold_glue.o verify_read.o): \
	$(OUTPUT)/stablepage.skel.h
$(OUTPUT)/probe.o: $(OUTPUT)/probe.skel.h

$(OUTPUT)/%.o: user/%.c | $(OUTPUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(USER_CFLAGS) -c $< -o $@

$(OUTPUT)/%.o: tests/unit/%.c | $(OUTPUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(USER_CFLAGS) -c $< -o $@

$(OUTPUT)/stablepage-trace: $(USER_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $^ $(LIBBPF_LIBS) -lm -o $@

$(OUTPUT)/unit_tests: $(UNIT_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $^ -lm -o $@

# The workload generator (workload/) and the benchmark's helpers (bench/):
# one C file each.
$(OUTPUT)/%: workload/%.c | $(OUTPUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(USER_CFLAGS) $(LDFLAGS) -pthread $< $(TOOL_LIBS) -o $@

$(OUTPUT)/%: bench/%.c | $(OUTPUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(USER_CFLAGS) $(LDFLAGS) -pthread $< $(TOOL_LIBS) -o $@

$(OUTPUT)/progcost: TOOL_LIBS = $(LIBBPF_LIBS)
# The soak benchmark's independent count embeds its own BPF object.
$(OUTPUT)/soakcount: TOOL_LIBS = $(LIBBPF_LIBS)
$(OUTPUT)/soakcount: $(OUTPUT)/soakcount.skel.h

# The names of the tool's BPF programs, one a line, from the attach-point
# lists of bpf/stablepage.h (scripts/attach-points.c).
$(OUTPUT)/attach-points.txt: scripts/attach-points.c bpf/stablepage.h | $(OUTPUT)
	$(call msg,GEN,$@)
	$(Q)$(CC) -E -P -Ibpf $< -o $@.i
	$(Q)tr ' ' '\n' < $@.i | sed -n 's/^spt_prog=//p' > $@
	$(Q)rm -f $@.i
	$(Q)test -s $@ || { echo "$@: no program names" >&2; exit 1; }

unit: $(OUTPUT)/unit_tests

# libFuzzer harnesses (tests/fuzz/) of the parsers, escapers, JSON reader and
# report formatters, with ASan and UBSan, out of tree in $(OUTPUT)/fuzz.
# make fuzz runs each for FUZZ_SECONDS from its corpus (tests/fuzz/corpus/
# NAME: the inputs that once failed, run first); tests/fuzz.bats runs each
# for a few seconds. clang's fuzzer runtime is Debian's libclang-rt-N-dev.
FUZZ_SECONDS ?= 60
FUZZ_NAMES := parse options mountinfo escape json report summary
FUZZ_DIR := $(OUTPUT)/fuzz
FUZZ_BINS := $(addprefix $(FUZZ_DIR)/fuzz_, $(FUZZ_NAMES))
FUZZ_OBJS := $(addprefix $(FUZZ_DIR)/obj/, $(PURE_OBJS))
FUZZ_CFLAGS := -g -O1 -std=gnu11 -Wall -Wextra -Werror -Wno-missing-field-initializers \
	-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -MMD -MP \
	-I$(OUTPUT) -Ibpf -Iuser -Itests/fuzz -DSPT_VERSION='"$(VERSION)"'
# Debian's package of the fuzzer runtime for the clang installed (14 before there is one).
FUZZ_PACKAGES = libclang-rt-$(or $(shell $(CLANG) -dumpversion 2>/dev/null | cut -d. -f1),14)-dev

.PHONY: fuzz fuzz-build
fuzz-build:
	$(Q)scripts/install-deps.sh $(FUZZ_PACKAGES)
	$(Q)$(MAKE) --no-print-directory $(FUZZ_BINS)

fuzz: fuzz-build
	$(Q)tests/fuzz/run.sh $(FUZZ_DIR) $(FUZZ_SECONDS) $(FUZZ_NAMES)

$(FUZZ_DIR)/obj:
	$(Q)mkdir -p $@

$(FUZZ_DIR)/obj/%.o: user/%.c | $(FUZZ_DIR)/obj
	$(call msg,CC-FUZZ,$@)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

$(FUZZ_DIR)/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_OBJS)
	$(call msg,FUZZ,$@)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer $< $(FUZZ_OBJS) -lm -o $@

deps:
	$(Q)scripts/install-deps.sh

vmlinux:
	$(Q)scripts/gen-vmlinux.sh vmlinux/$(ARCH)/vmlinux.h

demo: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)scripts/demo.sh $(OUTPUT)

# Debian's packaging tools for make deb.
DEB_PACKAGES := debhelper lintian dpkg-dev
# Prometheus (the server and promtool), node_exporter, curl and ss (iproute2) for the metrics and
# fleet tests (their daemons are never started by the packages); mkfs.vfat for the guest's vfat
# tests; chromium (headless) renders the report page in tests/report.bats; stress-ng for the
# enforce safety tests' CPU and I/O hogs; the packaging tools for tests/package.bats; integritysetup
# (cryptsetup-bin), mdadm and dmsetup for the integrity lab's dm-integrity and md raid1, used in the
# guest only (mdadm's daemon is not started: install-deps).
TEST_PACKAGES := prometheus prometheus-node-exporter curl iproute2 dosfstools chromium stress-ng \
	cryptsetup-bin mdadm dmsetup $(DEB_PACKAGES) $(FUZZ_PACKAGES)

# Every test: the host kernel's suite, then the same suite in the 6.1 QEMU guest and the
# kernel-dependent suites in the 6.12 one (tests/all.sh, docs/semantics.md).
test:
	$(Q)scripts/install-deps.sh $(TEST_PACKAGES)
	$(Q)$(MAKE) --no-print-directory all unit bench-tools $(FUZZ_BINS)
	$(Q)tests/all.sh $(OUTPUT)

# The host part only (a quick run while developing).
test-host:
	$(Q)scripts/install-deps.sh $(TEST_PACKAGES)
	$(Q)$(MAKE) --no-print-directory all unit bench-tools $(FUZZ_BINS)
	$(Q)SPT_NO_VM=1 tests/all.sh $(OUTPUT)

# The suite again inside a QEMU guest on Debian's 6.1 kernel (VMTEST_KERNEL=6.12: its 6.12).
vmtest:
	$(Q)scripts/install-deps.sh $(TEST_PACKAGES)
	$(Q)$(MAKE) --no-print-directory all unit bench-tools
	$(Q)VMTEST_BUILD=$(OUTPUT) lab/vmtest.sh

# The seeds' matrix (profiles A-F x six filesystems x stable writes) on the guest's DIX disk,
# written to docs/matrix.md; at most 40 minutes (not run by make test).
matrix:
	$(Q)scripts/install-deps.sh $(TEST_PACKAGES)
	$(Q)$(MAKE) --no-print-directory all
	$(Q)VMTEST_BUILD=$(OUTPUT) VMTEST_TIMEOUT=2400 lab/vmtest.sh lab/matrix.sh $(OUTPUT) > $(OUTPUT)/matrix.log
	$(Q)sed -n 's/^md| //p' $(OUTPUT)/matrix.log > docs/matrix.md

bench:
	$(Q)scripts/install-deps.sh bpftrace time
	$(Q)$(MAKE) --no-print-directory all bench-tools
	$(Q)bench/bench.sh $(OUTPUT)

# Each tracepoint program of this tree against BASE's (a git revision, or a
# built .bpf.o), on the same events: make bench-progs BASE=HEAD~3
BASE ?= HEAD
bench-progs:
	$(Q)$(MAKE) --no-print-directory all bench-tools
	$(Q)bench/bench-progs.sh $(OUTPUT) $(BASE)

# What the tracer adds to each context switch (sched_switch), side by side.
bench-switch:
	$(Q)$(MAKE) --no-print-directory all bench-tools
	$(Q)bench/bench-switch.sh $(OUTPUT)

# What --verify costs at sampling rates 1, 16 and 256 (docs/performance.md).
bench-verify: all
	$(Q)bench/bench-verify.sh $(OUTPUT)

# The cost grid: violation density x request size x writers x write/mmap,
# quiet and json, --verify rates on the dense points; ratios in alternating
# windows, bpf_stats per program and the completion walk per page.
bench-grid:
	$(Q)$(MAKE) --no-print-directory all bench-tools
	$(Q)bench/grid.sh $(OUTPUT)

# The exporter left running for SOAK_SECONDS (600) while SOAK_WRITERS (64)
# writers and SOAK_SPAWNS (50000) short-lived ones write: counts against an
# independent count, RSS, map memory and rows over time (docs/performance.md).
bench-soak:
	$(Q)$(MAKE) --no-print-directory all bench-tools
	$(Q)bench/soak.sh $(OUTPUT)

# The tool and what a system needs around it: the man page, bash completion,
# the exporter's systemd unit and its /etc/default file (never overwritten:
# it is the administrator's), the alert rules and dashboard when present.
# Builds the tool only. Debian's paths: make install PREFIX=/usr
# systemdunitdir=/lib/systemd/system (debian/rules).
sbindir ?= $(PREFIX)/sbin
datadir ?= $(PREFIX)/share
mandir ?= $(datadir)/man
sysconfdir ?= /etc
bashcompdir ?= $(datadir)/bash-completion/completions
systemdunitdir ?= $(PREFIX)/lib/systemd/system
pkgdatadir := $(datadir)/stablepage-trace
DEPLOY_DATA := $(wildcard deploy/prometheus/* deploy/grafana/*)

install: $(OUTPUT)/stablepage-trace
	install -D -m 0755 $(OUTPUT)/stablepage-trace $(DESTDIR)$(sbindir)/stablepage-trace
	install -D -m 0644 man/stablepage-trace.8 $(DESTDIR)$(mandir)/man8/stablepage-trace.8
	install -D -m 0644 completion/stablepage-trace $(DESTDIR)$(bashcompdir)/stablepage-trace
	install -d $(DESTDIR)$(systemdunitdir)
	sed 's|/usr/sbin/stablepage-trace|$(sbindir)/stablepage-trace|' \
		deploy/systemd/stablepage-trace.service > $(DESTDIR)$(systemdunitdir)/stablepage-trace.service
	chmod 0644 $(DESTDIR)$(systemdunitdir)/stablepage-trace.service
	test -e $(DESTDIR)$(sysconfdir)/default/stablepage-trace || \
		install -D -m 0644 deploy/default/stablepage-trace $(DESTDIR)$(sysconfdir)/default/stablepage-trace
	for f in $(DEPLOY_DATA); do install -D -m 0644 $$f $(DESTDIR)$(pkgdatadir)/$${f#deploy/}; done

# Removes what install put there; /etc/default/stablepage-trace only when
# unchanged.
uninstall:
	rm -f $(DESTDIR)$(sbindir)/stablepage-trace $(DESTDIR)$(mandir)/man8/stablepage-trace.8 \
		$(DESTDIR)$(bashcompdir)/stablepage-trace $(DESTDIR)$(systemdunitdir)/stablepage-trace.service
	rm -rf $(DESTDIR)$(pkgdatadir)
	if cmp -s deploy/default/stablepage-trace $(DESTDIR)$(sysconfdir)/default/stablepage-trace; then \
		rm -f $(DESTDIR)$(sysconfdir)/default/stablepage-trace; \
	elif [ -e $(DESTDIR)$(sysconfdir)/default/stablepage-trace ]; then \
		echo "uninstall: $(DESTDIR)$(sysconfdir)/default/stablepage-trace was edited: kept"; \
	fi

# A Debian package built by Debian's tools (debian/) from a copy of the tree
# in $(OUTPUT)/deb/, so the tree itself stays clean; then lintian. The .deb
# lands in $(OUTPUT)/deb/.
# Rebuilt only when a file of the tree changed (the tests run make deb once).
DEB_FILE := $(OUTPUT)/deb/stablepage-trace_$(VERSION)_amd64.deb
DEB_INPUTS := $(wildcard $(shell git ls-files -co --exclude-standard 2>/dev/null))
deb:
	$(Q)scripts/install-deps.sh $(DEB_PACKAGES)
	$(Q)$(MAKE) --no-print-directory $(DEB_FILE)

$(DEB_FILE): $(DEB_INPUTS)
	$(Q)scripts/build-deb.sh $(OUTPUT)/deb

clean:
	$(Q)rm -rf $(OUTPUT)

.SECONDARY:

-include $(wildcard $(OUTPUT)/*.d $(FUZZ_DIR)/*.d $(FUZZ_DIR)/obj/*.d)
