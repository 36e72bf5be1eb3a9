# SPDX-License-Identifier: GPL-2.0
# sharness: BPF-LSM process-tree enforcer.
#
#   make            build build/sharnessd and build/sharnessctl
#   make test       unit tests natively, enforcement tests in a VM on 6.1 and 6.12
#   make demo       boot the VM, start the daemon, show a denied exec in the audit log
#   make bench      the enforcer's cost against Landlock and AppArmor, in a VM per kernel
#   make install    DESTDIR= PREFIX=/usr/local
#   make package    build/deb/sharness_VERSION_ARCH.deb (dpkg-buildpackage, from a copy)
#   make V=1        show full commands

.DELETE_ON_ERROR:
.SUFFIXES:

BUILD    ?= build
PREFIX   ?= /usr/local
DESTDIR  ?=
CC       ?= gcc
CLANG    ?= clang
BPFTOOL  ?= bpftool
PKG_CONFIG ?= pkg-config
KERNELS  ?= 6.1 6.12
ARCH     := x86

ifeq ($(V),1)
Q :=
msg = @true
else
Q := @
msg = @printf '  %-9s %s\n' "$(1)" "$(2)";
endif

# Evaluated lazily: pkg-config runs only once `make` needs it (after setup).
PKGS       = libbpf inih libsystemd libcrypto
PKG_CFLAGS = $(shell $(PKG_CONFIG) --cflags $(PKGS))
PKG_LIBS   = $(shell $(PKG_CONFIG) --libs $(PKGS)) -lelf -lz

# VERSION, and the commit it was built from where there is one.
SH_VERSION := $(shell cat VERSION)$(shell git rev-parse --short HEAD 2>/dev/null | sed 's/^/+g/')
WARN      := -Wall -Wextra -Werror
CFLAGS    ?= -O2 -g
ALL_CFLAGS = -std=gnu11 $(WARN) -Iinclude -I$(BUILD) $(PKG_CFLAGS) $(CFLAGS) -MMD -MP

# BPF_PROG() expands to a ctx argument most programs do not use.
BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) $(WARN) -Wno-unused-parameter -Iinclude -Ivmlinux

BPF_OBJ   := $(BUILD)/sharness.bpf.o
SKEL      := $(BUILD)/sharness.skel.h

# user/ by component; a folder may include from the folders before it in
# this list, never from one after it (daemon and ctl not from each other):
# each folder's objects see only those headers (INC_*), and tools/check-layout
# refuses an include that goes up, an include cycle, and a circle of
# modules taking symbols from each other. Objects go flat into $(BUILD):
# file names are unique across user/.
USER_DIRS    := lib policy enforcer daemon ctl
INC_lib      := -Iuser/lib
INC_policy   := $(INC_lib) -Iuser/policy
INC_enforcer := $(INC_policy) -Iuser/enforcer
INC_daemon   := $(INC_enforcer) -Iuser/daemon
INC_ctl      := $(INC_enforcer) -Iuser/ctl
INC_all      := $(INC_enforcer) -Iuser/daemon -Iuser/ctl
objs = $(addprefix $(BUILD)/,$(notdir $(1:.c=.o)))

# What the unit tests link: no BPF skeleton, so neither clang nor bpftool.
LIB_SRCS := $(wildcard user/lib/*.c user/policy/*.c) user/daemon/journal.c \
	    user/daemon/ratelimit.c user/ctl/learn_gen.c user/ctl/learn_out.c
# The loader (user/enforcer): built with the skeleton that embeds the BPF object.
LOADER_SRCS := $(wildcard user/enforcer/*.c)
LIB_OBJS    := $(call objs,$(LIB_SRCS))
COMMON_OBJS := $(LIB_OBJS) $(call objs,$(LOADER_SRCS))
D_SRCS   := $(filter-out user/daemon/journal.c user/daemon/ratelimit.c,$(wildcard user/daemon/*.c))
D_OBJS   := $(call objs,$(D_SRCS)) $(COMMON_OBJS)
CTL_SRCS := $(filter-out user/ctl/learn_gen.c user/ctl/learn_out.c user/ctl/oci_hook.c,$(wildcard user/ctl/*.c))
CTL_OBJS := $(call objs,$(CTL_SRCS)) $(COMMON_OBJS)

UNIT_SRCS  := $(wildcard tests/unit/test_*.c)
UNIT_BINS  := $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/unit/%)
VMT_SRCS   := $(wildcard tests/vm/*.c)
VMT_BINS   := $(VMT_SRCS:tests/vm/%.c=$(BUILD)/tests/vm/%)

# The Debian package (make package; see below).
DEB_VERSION := $(shell cat VERSION)
DEB_ARCH    := $(shell dpkg --print-architecture 2>/dev/null || echo amd64)
DEB         := $(BUILD)/deb/sharness_$(DEB_VERSION)_$(DEB_ARCH).deb
DEB_FILES    = $(shell git ls-files -co --exclude-standard 2>/dev/null)

.PHONY: all setup test unit deploy-test layout unit-security vmtest demo bench install clean vmlinux fuzz \
	man completion-test vm-accel-test hooks-test package package-test host-checks
all: $(BUILD)/sharnessd $(BUILD)/sharnessctl $(BUILD)/sharness-oci-hook

$(BUILD) $(BUILD)/tests/unit $(BUILD)/tests/vm:
	$(Q)mkdir -p $@

$(BPF_OBJ): bpf/sharness.bpf.c $(wildcard bpf/*.c bpf/lib/*.h include/*.h) vmlinux/vmlinux.h | $(BUILD)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -MMD -MP -MF $@.d -c $< -o $@

$(SKEL): $(BPF_OBJ)
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name sharness_bpf > $@

# The BPF object's digest: the build mark a restarted daemon compares
# before it resumes its predecessor's programs (user/enforcer/resume.c).
$(BUILD)/bpf_digest.h: $(BPF_OBJ)
	$(Q)echo "#define SH_BPF_DIGEST \"$$(sha256sum $< | cut -c1-64)\"" >$@
$(BUILD)/resume.o: $(BUILD)/bpf_digest.h

# The version, rewritten only when it changes (a new commit, a new VERSION).
$(BUILD)/version.h: FORCE | $(BUILD)
	$(Q)v='#define SH_VERSION "$(SH_VERSION)"'; \
		[ "$$(cat $@ 2>/dev/null)" = "$$v" ] || echo "$$v" >$@
$(BUILD)/util.o: $(BUILD)/version.h
.PHONY: FORCE
FORCE:

# User objects that include the skeleton depend on it; everything else
# gets its header dependencies from -MMD.
$(call objs,$(LOADER_SRCS)): $(SKEL)

define user_dir
$(BUILD)/%.o: user/$(1)/%.c | $(BUILD)
	$$(call msg,CC,$$@)
	$$(Q)$$(CC) $$(ALL_CFLAGS) $$(INC_$(1)) -c $$< -o $$@
endef
$(foreach d,$(USER_DIRS),$(eval $(call user_dir,$(d))))

$(BUILD)/sharnessd: $(D_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $^ $(PKG_LIBS) -o $@

$(BUILD)/sharnessctl: $(CTL_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $^ $(PKG_LIBS) -o $@

# The OCI hook: the control socket's client and jansson for the state.
$(BUILD)/sharness-oci-hook: $(BUILD)/oci_hook.o $(BUILD)/control.o $(BUILD)/util.o
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $^ $(shell $(PKG_CONFIG) --libs jansson) -o $@

$(BUILD)/tests/unit/%: tests/unit/%.c $(LIB_OBJS) | $(BUILD)/tests/unit
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(INC_all) $< $(LIB_OBJS) $(PKG_LIBS) $(shell $(PKG_CONFIG) --libs cmocka) -o $@

$(BUILD)/tests/vm/%: tests/vm/%.c | $(BUILD)/tests/vm
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $< -o $@

# Run inside a container whose root holds busybox alone (t_container).
$(BUILD)/tests/vm/memfd-hold: tests/vm/memfd-hold.c | $(BUILD)/tests/vm
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -static $< -o $@

# Fuzzing (libFuzzer, clang): the policy parser, control requests and the
# audit log's JSON. Each target runs FUZZ_SECONDS, after replaying the
# inputs in tests/fuzz/regressions/<target>/ (every crash found is kept
# there). A crash leaves its input in $(BUILD)/fuzz/ and fails the run.
FUZZ_SECONDS ?= 20
FUZZ_TARGETS := policy control json
FUZZ_CFLAGS  := -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
		-Iinclude $(INC_policy) -I$(BUILD) $(WARN)
FUZZ_SRCS_policy  := $(addprefix user/policy/,policy.c policy_load.c policy_parse.c policy_keys.c \
		       policy_paths.c policy_net.c policy_errors.c rules.c reslimit.c) \
		     user/lib/caps.c user/lib/util.c user/lib/glob.c user/lib/digest.c
FUZZ_SRCS_control := user/lib/control.c user/lib/util.c
FUZZ_SRCS_json    := user/lib/json.c user/lib/util.c

$(BUILD)/fuzz:
	$(Q)mkdir -p $@

$(BUILD)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c user/*/*.h user/*/*.c $(BUILD)/version.h | $(BUILD)/fuzz
	$(call msg,FUZZ-CC,$@)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) $< $(FUZZ_SRCS_$*) $(shell $(PKG_CONFIG) --libs inih libcrypto) -o $@

# The targets run side by side (make test: -j3 on two cores, so each
# gets two thirds of a core for FUZZ_SECONDS: 30 s of wall clock for the
# 60 CPU seconds the three had one after the other). fuzz-TARGET is not
# .PHONY: make would not look for its pattern rule; no such file exists.
fuzz: $(FUZZ_TARGETS:%=fuzz-%)
fuzz-%: $(BUILD)/fuzz/fuzz_%
	$(Q)t=$*; mkdir -p $(BUILD)/fuzz/corpus-$$t; \
	if ls tests/fuzz/regressions/$$t/* >/dev/null 2>&1; then \
		echo "  FUZZ-REG  $$t"; \
		$(BUILD)/fuzz/fuzz_$$t tests/fuzz/regressions/$$t/* >$(BUILD)/fuzz/$$t-reg.log 2>&1 || \
			{ tail -30 $(BUILD)/fuzz/$$t-reg.log; exit 1; }; \
	fi; \
	seeds=; [ $$t = policy ] && seeds="tests/unit/data policies"; \
	echo "  FUZZ      $$t ($(FUZZ_SECONDS)s)"; \
	$(BUILD)/fuzz/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -artifact_prefix=$(BUILD)/fuzz/$$t- \
		$(BUILD)/fuzz/corpus-$$t $$seeds >$(BUILD)/fuzz/$$t.log 2>&1 || \
		{ tail -40 $(BUILD)/fuzz/$$t.log; echo "fuzz: $$t crashed; add the input to tests/fuzz/regressions/$$t/"; exit 1; }; \
	echo "  FUZZ      $$t: $$(grep -E '^#[0-9]+.*DONE' $(BUILD)/fuzz/$$t.log | tail -1)"

# Installs every package the build, tests and VM need when one is missing.
setup:
	$(Q)tools/setup --check >/dev/null 2>&1 || tools/setup --kernels

# The tree's rules: SPDX lines, files and functions that stay small;
# user/'s folders included only downward, no include cycle, no circle of
# modules taking symbols from each other (from the objects); and the
# checks shown refusing trees made to break them.
layout: all
	$(Q)tools/check-layout --objects $(BUILD)
	$(Q)tools/check-layout --self-test

unit: $(UNIT_BINS)
	$(Q)set -e; for t in $(UNIT_BINS); do echo "  UNIT      $$t"; SH_TEST_DATA=tests/unit/data $$t; done

# The build a daemon of this tree must take over from with no moment
# unenforced (tests/vm/t_package.sh, its upgrade): the last release whose ring records
# were whole 4 KiB structs. Built from git history; without it, vmtest
# fails rather than skip the handover.
HANDOVER_FROM ?= aa09d13d44b7513ca409bfe2b0993b9326205641
PREV := $(BUILD)/prev

$(PREV)/sharnessd: | $(BUILD)
	$(call msg,PREV,$(HANDOVER_FROM))
	$(Q)rm -rf $(PREV) && mkdir -p $(PREV)/src
	$(Q)git archive $(HANDOVER_FROM) | tar -x -C $(PREV)/src
	$(Q)$(MAKE) --no-print-directory -C $(PREV)/src BUILD=build all >$(PREV)/build.log 2>&1 || \
		{ tail -20 $(PREV)/build.log; exit 1; }
	$(Q)cp $(PREV)/src/build/sharnessctl $(PREV)/sharnessctl
	$(Q)cp $(PREV)/src/build/sharnessd $(PREV)/sharnessd

# Enforcement tests: each kernel boots its own guest; the suite inside fails
# (never skips) when the programs did not attach.
# t_package installs build/deb's package into a root in the guest: built first.
vmtest: all $(VMT_BINS) $(PREV)/sharnessd $(DEB)
	$(Q)tools/vmtest $(BUILD) "$(KERNELS)" "$(TESTS)"

test: setup
	$(Q)$(MAKE) --no-print-directory all
	$(Q)$(MAKE) --no-print-directory layout
	$(Q)$(MAKE) --no-print-directory unit-security
	$(Q)$(MAKE) --no-print-directory unit
	$(Q)$(MAKE) --no-print-directory completion-test
	$(Q)$(MAKE) --no-print-directory -j3 --output-sync=target host-checks
	$(Q)$(MAKE) --no-print-directory -j3 fuzz FUZZ_SECONDS=30
	$(Q)$(MAKE) --no-print-directory vmtest

# Side by side: the accelerator probe mostly waits for guests that fail
# (seconds each), the package check is one core's work.
host-checks: vm-accel-test hooks-test package-test deploy-test

# deploy/'s manifests and engine settings, read as a cluster would (no
# cluster here: tests/host/deploy.py).
deploy-test: $(BUILD)/sharnessctl
	$(Q)tests/host/deploy.py $(BUILD)/sharnessctl

demo: setup
	$(Q)$(MAKE) --no-print-directory all
	$(Q)tools/vm --kernel 6.1 -- tools/demo $(BUILD)

# A benchmark, not a test: nothing fails on a figure (make test only builds
# its helpers, with the other tests/vm binaries). Tables, CSV and plots in
# $(BUILD)/bench/; BENCH_N iterations per operation, BENCH_ROUNDS rounds.
BENCH_N      ?= 2000
BENCH_ROUNDS ?= 7
bench: setup
	$(Q)$(MAKE) --no-print-directory all $(VMT_BINS)
	$(Q)KERNELS="$(KERNELS)" tools/bench $(BUILD) $(BENCH_N) $(BENCH_ROUNDS)

vmlinux:
	$(Q)tools/gen-vmlinux $(VMLINUX_BTF)

# Manual pages, written in scdoc (man/NAME.SECTION.scd).
SCDOC     ?= scdoc
MAN_SRCS  := $(wildcard man/*.scd)
MAN_PAGES := $(MAN_SRCS:man/%.scd=$(BUILD)/man/%)

$(BUILD)/man:
	$(Q)mkdir -p $@

$(BUILD)/man/%: man/%.scd | $(BUILD)/man
	$(call msg,SCDOC,$@)
	$(Q)$(SCDOC) <$< >$@

man: $(MAN_PAGES)

# The bash completion, driven as bash drives it (tests/host/completion.sh).
completion-test: $(BUILD)/sharnessctl
	$(Q)tests/host/completion.sh tools/completion/sharnessctl $(BUILD)/sharnessctl

# The LSM hook inventory against the programs in bpf/ (docs/hooks.md; the
# suite compares it with each guest kernel's BTF too).
hooks-test:
	$(Q)tools/hooks-inventory sources

# tools/vm's accelerator: KVM where a probe guest runs, emulation otherwise,
# each way taken (tests/host/vm-accel.sh).
vm-accel-test:
	$(Q)tests/host/vm-accel.sh

SERVICE_SED = -e 's|@SBINDIR@|$(PREFIX)/sbin|g' -e 's|@BINDIR@|$(PREFIX)/bin|g' \
	      -e 's|@DOCDIR@|$(PREFIX)/share/doc/sharness|g'

# Rewritten whenever PREFIX changes it: `make install PREFIX=/usr` after a
# plain `make` must not install a unit that names /usr/local.
$(BUILD)/sharnessd.service: tools/sharnessd.service.in FORCE | $(BUILD)
	$(Q)sed $(SERVICE_SED) $< >$@.tmp && \
		if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv $@.tmp $@; fi

install: all $(BUILD)/sharnessd.service man
	$(call msg,INSTALL,$(DESTDIR)$(PREFIX))
	$(Q)install -d $(DESTDIR)$(PREFIX)/sbin $(DESTDIR)$(PREFIX)/bin \
		$(DESTDIR)/etc/sharness/policies $(DESTDIR)$(PREFIX)/lib/systemd/system \
		$(DESTDIR)$(PREFIX)/share/sharness/policies $(DESTDIR)$(PREFIX)/share/doc/sharness \
		$(DESTDIR)$(PREFIX)/share/man/man5 $(DESTDIR)$(PREFIX)/share/man/man8 \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions
	$(Q)install -m 0755 $(BUILD)/sharnessd $(DESTDIR)$(PREFIX)/sbin/sharnessd
	$(Q)install -m 0755 $(BUILD)/sharnessctl $(DESTDIR)$(PREFIX)/bin/sharnessctl
	$(Q)install -d $(DESTDIR)$(PREFIX)/libexec/sharness $(DESTDIR)$(PREFIX)/share/containers/oci/hooks.d
	$(Q)install -m 0755 $(BUILD)/sharness-oci-hook $(DESTDIR)$(PREFIX)/libexec/sharness/sharness-oci-hook
	$(Q)install -m 0644 deploy/oci/sharness.json \
		$(DESTDIR)$(PREFIX)/share/containers/oci/hooks.d/sharness.json
	$(Q)install -m 0644 policies/*.policy $(DESTDIR)$(PREFIX)/share/sharness/policies/
	$(Q)install -m 0644 README.md $(DESTDIR)$(PREFIX)/share/doc/sharness/README.md
	$(Q)install -m 0644 $(BUILD)/sharnessd.service \
		$(DESTDIR)$(PREFIX)/lib/systemd/system/sharnessd.service
	$(Q)install -m 0644 $(filter %.5,$(MAN_PAGES)) $(DESTDIR)$(PREFIX)/share/man/man5/
	$(Q)install -m 0644 $(filter %.8,$(MAN_PAGES)) $(DESTDIR)$(PREFIX)/share/man/man8/
	$(Q)install -m 0644 tools/completion/sharnessctl \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions/sharnessctl

# The Debian package (debian/), built by dpkg-buildpackage from a copy of
# the tree in $(BUILD)/deb/src (the files git tracks and the new ones it
# does not ignore), so the build never writes into the work tree.

package: $(DEB)

$(DEB): $(wildcard $(DEB_FILES))
	$(call msg,DEB,$@)
	$(Q)rm -rf $(BUILD)/deb && mkdir -p $(BUILD)/deb/src
	$(Q)if git rev-parse --git-dir >/dev/null 2>&1; then \
		git ls-files -co --exclude-standard | while read -r f; do [ -e "$$f" ] && echo "$$f"; done | \
			tar -cf - -T -; \
	else tar --exclude=./$(BUILD) -cf - .; fi | tar -xf - -C $(BUILD)/deb/src
	$(Q)cd $(BUILD)/deb/src && dpkg-buildpackage -us -uc -b >../build.log 2>&1 || \
		{ tail -40 ../build.log; exit 1; }

# The package as built: lintian (no errors), every file and conffile where
# it belongs, and the maintainer scripts' choices (tests/host/package.sh).
package-test: $(DEB)
	$(Q)tests/host/package.sh $(DEB)

# The unit's exposure as systemd rates it: at most 5.0 (where the tool is).
unit-security: $(BUILD)/sharnessd.service
	$(Q)if ! command -v systemd-analyze >/dev/null; then \
		echo "  SKIP      unit-security: systemd-analyze not found"; exit 0; fi; \
	systemd-analyze security --offline=yes $< >$(BUILD)/unit-security.txt 2>&1 || true; \
	score=$$(sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p' $(BUILD)/unit-security.txt); \
	echo "  UNIT-SEC  sharnessd.service exposure $${score:-?} (at most 5.0)"; \
	[ -n "$$score" ] && awk -v s="$$score" 'BEGIN { exit !(s <= 5.0) }' || \
		{ cat $(BUILD)/unit-security.txt; exit 1; }

clean:
	$(call msg,CLEAN,$(BUILD))
	$(Q)rm -rf $(BUILD)

-include $(wildcard $(BUILD)/*.d $(BUILD)/tests/*/*.d $(BUILD)/*.bpf.o.d)
