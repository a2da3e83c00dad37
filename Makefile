# uiwarp - a software iWARP stack.  `make help` lists the targets.
#
# The public targets first make sure the Debian packages they need are
# installed (`make deps`: building and installing; `make deps-test`: the test
# toolchain as well), then re-enter make so that what was just installed
# (ISA-L) is seen by the build.

VERSION    := 0.1.0
SOVERSION  := 0
PREFIX     ?= /usr/local
LIBDIR     ?= $(PREFIX)/lib
BINDIR     ?= $(PREFIX)/bin
INCLUDEDIR ?= $(PREFIX)/include
MANDIR     ?= $(PREFIX)/share/man
DOCDIR     ?= $(PREFIX)/share/doc/uiwarp
# libuiw-rdma.so, preloaded by uiw-run only (never linked): a private
# directory, off the loader's path, so it needs no SONAME version or ldconfig
COMPATDIR  ?= $(LIBDIR)/uiwarp
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
CC         ?= cc
FUZZ_CC    ?= clang
SAN        ?=
WERROR     ?= 1
FUZZ_TIME  ?= 20
FUZZ_LONG_TIME ?= 3600
V          ?= 0

# Build directory: one per sanitizer set, so builds never mix.
ifeq ($(SAN),)
O ?= build
else
O ?= build-san-$(subst $(comma),-,$(SAN))
endif
comma := ,

# Building and installing the library, the tools and the man pages (make all,
# make install, make demo): compiler, io_uring, ISA-L (CRC32C), libcrypto
# (random STags), libtirpc and rpcgen (the RPC layer), go-md2man (man pages
# from docs/*.md), pkg-config (libtirpc's flags), rdma-core's headers
# (libibverbs-dev, librdmacm-dev: the ABI libuiw-rdma reproduces)
BUILD_PACKAGES := make gcc libc6-dev pkg-config liburing-dev libisal-dev libssl-dev \
                  libtirpc-dev rpcsvc-proto go-md2man libibverbs-dev librdmacm-dev
# Tests on top of that (make check, check-tsan, fuzz, conformance): Check and
# subunit (the unit test binary), clang and its sanitizer runtimes (fuzz),
# clang-format, iproute2 and iptables (network namespace tests), valgrind,
# python3 (hostile peers), man-db and groff (the man page checks of install.sh),
# rdma-core's programs run on libuiw-rdma by compat.sh (ibverbs-utils,
# rdmacm-utils, perftest; qperf: dropin_cm.sh), tcpdump and tshark (rfc7306_wire.sh: RFC 7306
# traffic captured and decoded by Wireshark's dissector); the applications of
# apps.sh: fio, libfabric-bin (fi_pingpong), openmpi-bin and libopenmpi-dev (mpirun, mpicc),
# tgt and libiscsi-bin (iSER target and initiator)
TEST_PACKAGES  := check libsubunit-dev clang libclang-rt-14-dev clang-format iproute2 iptables \
                  valgrind python3 man-db groff-base ibverbs-utils rdmacm-utils perftest qperf time \
                  tcpdump tshark fio libfabric-bin openmpi-bin libopenmpi-dev tgt libiscsi-bin
DEB_PACKAGES   := $(BUILD_PACKAGES) $(TEST_PACKAGES)

HAVE_ISAL = $(shell test -f /usr/include/isa-l/crc.h && echo 1)

WARN := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wformat=2 \
        -Wno-format-nonliteral
ifeq ($(WERROR),1)
WARN += -Werror
endif

# libtirpc: ONC RPC's CLIENT/SVCXPRT and XDR for the RPC layer (rpcrdma/)
TIRPC_CFLAGS := $(shell pkg-config --cflags libtirpc 2>/dev/null || echo -I/usr/include/tirpc)
CPPFLAGS_ALL := -D_GNU_SOURCE -DUIW_VERSION=\"$(VERSION)\"

# Include paths by folder: the layers, bottom up, are common < mpa < ddp <
# rdmap < verbs-shim < rpcrdma < tools (rdma-compat sits on verbs-shim), and
# a source sees its own folder and the folders below it only, so an #include
# of a layer above does not compile.  tests/ (with progs/ and fuzz/) and
# bench/ see everything.  The folder is the source's directory if it has
# an INC_ of its own, else its top-level folder.  tests/sh/layers.sh checks
# the same on the #include lines themselves (headers too).
INC_common      := -Icommon
INC_mpa         := $(INC_common) -Impa
INC_ddp         := $(INC_mpa) -Iddp
INC_rdmap       := $(INC_ddp) -Irdmap
INC_verbs-shim  := $(INC_rdmap) -Iverbs-shim
INC_rdma-compat := $(INC_verbs-shim) -Irdma-compat
INC_rpcrdma     := $(INC_verbs-shim) -Irpcrdma $(TIRPC_CFLAGS)
# the example service: a program on rpcrdma/ with its rpcgen header
INC_rpcrdma/examples = $(INC_rpcrdma) -I$(GEN)
INC_tools        = $(INC_rpcrdma) -Itools -I$(GEN)
INC_tests        = $(INC_tools) -Itests
INC_bench        = $(INC_tests) -Ibench
# $(call inc_of,SOURCE)
inc_of = $(or $(INC_$(patsubst %/,%,$(dir $(1)))),$(INC_$(firstword $(subst /, ,$(1)))),\
	$(error $(1): its folder has no include path (INC_<folder> in the Makefile)))
CFLAGS_ALL   := -std=gnu11 -O2 -g -fPIC $(WARN) $(CFLAGS)
LDFLAGS_ALL  := $(LDFLAGS)
LIBS_PRIVATE := -luring -lcrypto -lpthread -ltirpc
ifneq ($(SAN),)
CFLAGS_ALL  += -fsanitize=$(SAN) -fno-omit-frame-pointer -fno-sanitize-recover=all
LDFLAGS_ALL += -fsanitize=$(SAN)
# sanitizer builds check the lock order (verbs-shim/uiw_lock.h) as well
CPPFLAGS_ALL += -DUIW_LOCK_CHECK
endif

LIB_SRCS := common/crc32c.c mpa/mpa_rr.c mpa/mpa_conn.c mpa/mpa_rx.c mpa/mpa_tx.c \
            ddp/ddp_hdr.c ddp/ddp_mem.c rdmap/rdmap_qp.c rdmap/rdmap_tx.c rdmap/rdmap_rx.c \
            rdmap/rdmap_term.c rdmap/rdmap_atomic.c \
            verbs-shim/uiw_version.c verbs-shim/uiw_lock.c verbs-shim/uiw_verbs.c verbs-shim/uiw_engine.c verbs-shim/uiw_cm.c verbs-shim/uiw_conn.c \
            $(wildcard rpcrdma/*.c)
TEST_SRCS := tests/check_main.c tests/test_crc32c.c tests/test_mpa_rr.c \
             tests/test_mpa_fpdu.c tests/test_mpa_loop.c tests/test_mpa_markers_err.c tests/test_util.c \
             tests/mpa_pair.c tests/memwire.c tests/rdmap_pair.c tests/test_rdmap_loop.c \
             tests/test_rdmap_err.c tests/test_rdmap_ext.c tests/test_verbs.c tests/test_verbs_proc.c \
             tests/test_verbs_api.c tests/test_rpcrdma_hdr.c tests/test_replay.c \
             tests/test_rpc.c tests/test_rpc_clnt.c tests/midop.c tests/test_midop.c tests/test_conn.c \
             tests/test_cm_channel.c
# every bench/<name>.c but the helper is a benchmark program uiw-bench-<name>
BENCH_NAMES := $(patsubst bench/%.c,%,$(filter-out bench/bench_util.c,$(wildcard bench/*.c)))
# installed tools: $(O)/bin/uiw-<name> is linked from tools/uiw-<name>.c (the
# main; <name> has no '-') and the parts it was split into, tools/uiw-<name>-*.c
TOOL_SRCS   := $(wildcard tools/uiw-*.c)
TOOL_MAINS  := $(foreach f,$(TOOL_SRCS),$(if $(findstring -,$(f:tools/uiw-%.c=%)),,$(f)))
TOOL_NAMES  := $(basename $(notdir $(TOOL_MAINS))) uiw-run
# libuiw-rdma: rdma-core's libibverbs/librdmacm API over uiwarp, preloaded by
# uiw-run (rdma-compat/uiw-run, a shell script); built against rdma-core's
# installed headers, which libuiw itself never includes
COMPAT_SRCS := $(wildcard rdma-compat/*.c)
COMPAT_OBJS  = $(COMPAT_SRCS:%.c=$(O)/obj/%.o)
COMPAT_SO    = $(O)/libuiw-rdma.so
# helper programs of the shell tests: tests/progs/<name>.c -> $(O)/tests/<name>
PROG_SRCS   := $(wildcard tests/progs/*.c)
# shell tests run by make check: exit 0 pass, 77 skip (reason on stdout), else fail
SH_TESTS    := $(sort $(wildcard tests/sh/*.sh))
# every tests/fuzz/fuzz_<name>.c is a libFuzzer target
FUZZ_NAMES  := $(patsubst tests/fuzz/fuzz_%.c,%,$(wildcard tests/fuzz/fuzz_*.c))
# test helpers the fuzz targets may use (pair setups); no Check dependency
FUZZ_HELPERS := tests/mpa_pair.c tests/memwire.c tests/rdmap_pair.c tests/test_util.c tests/midop.c

# ONC RPC protocol definitions compiled with rpcgen (see the rpcgen rules)
RPC_X      := $(wildcard rpcrdma/proto/*.x rpcrdma/examples/*.x)
RPC_XNAMES := $(basename $(notdir $(RPC_X)))
GEN         = $(O)/gen
GEN_HDRS    = $(RPC_XNAMES:%=$(GEN)/%.h)
GEN_OBJS    = $(RPC_XNAMES:%=$(O)/obj/gen/%_xdr.o) $(RPC_XNAMES:%=$(O)/obj/gen/%_clnt.o)
GEN_LIB     = $(O)/libuiwgen.a
# sources that include rpcgen headers: tools and examples
GEN_USERS  := $(TOOL_SRCS) $(wildcard rpcrdma/examples/*.c)
EXAMPLE_BINS = $(O)/examples/bulk_server $(O)/examples/bulk_client

LIB_OBJS   = $(LIB_SRCS:%.c=$(O)/obj/%.o)
TEST_OBJS  = $(TEST_SRCS:%.c=$(O)/obj/%.o)
LIB_A      = $(O)/libuiw.a
LIB_SO     = $(O)/libuiw.so.$(VERSION)
# uiw.pc is written by make install, for the prefix it installs into
CHECK_BIN  = $(O)/tests/check_uiw
BENCH_BINS = $(BENCH_NAMES:%=$(O)/bench/uiw-bench-%)
FUZZ_BINS  = $(FUZZ_NAMES:%=build-fuzz/fuzz_%)
TOOL_BINS  = $(TOOL_NAMES:%=$(O)/bin/%)
PROG_BINS  = $(PROG_SRCS:tests/progs/%.c=$(O)/tests/%)

# uiw.pc: libtirpc is public (rpc_rdma.h includes <rpc/rpc.h>: its Cflags and
# -ltirpc come with ours); the rest only for static linking (pkg-config --static)
PC_REQUIRES_PRIVATE := liburing libcrypto
PC_LIBS_PRIVATE     := -lpthread

ifeq ($(HAVE_ISAL),1)
CPPFLAGS_ALL += -DUIW_HAVE_ISAL
LIBS_PRIVATE += -lisal
PC_REQUIRES_PRIVATE += libisal
endif

# uiw.pc's libdir and includedir relative to ${prefix} when under PREFIX
PC_LIBDIR     = $(patsubst $(PREFIX)/%,$${prefix}/%,$(LIBDIR))
PC_INCLUDEDIR = $(patsubst $(PREFIX)/%,$${prefix}/%,$(INCLUDEDIR))

# man pages, generated from markdown by go-md2man (md2man below):
# section 1 docs/uiw-<tool>.md; sections 3 and 7 docs/man/<name>.<section>.md
MAN_37_SRCS := $(wildcard docs/man/*.[37].md)
MAN_PAGES  := $(TOOL_NAMES:%=$(O)/man/man1/%.1) \
              $(foreach f,$(MAN_37_SRCS),$(O)/man/man$(subst .,,$(suffix $(basename $(f))))/$(basename $(notdir $(f))))
# one .so page per exported function, pointing at the page that describes it
MAN_LINKS  := $(O)/man/man3/.links
PUBLIC_HDRS := verbs-shim/uiw_verbs.h rpcrdma/rpc_rdma.h

ifeq ($(V),0)
Q := @
else
Q :=
endif

.PHONY: all check check-tsan demo bench fuzz fuzz-long deps deps-test deps-deb format install \
        install-files uninstall deb deb-check \
        clean help conformance _build _check _check-tsan _demo _bench _fuzz _fuzz-long _conformance

all: deps
	@$(MAKE) --no-print-directory _build

check: deps-test
	@$(MAKE) --no-print-directory _check

# ThreadSanitizer build (build-san-thread/) of the Check suites and shell
# tests with threads: the engine's progress thread, clients and servers in
# one process, the tools.  Any report fails the step; tests/tsan.supp says
# what is suppressed and why.
check-tsan: deps-test
	@$(MAKE) --no-print-directory _check-tsan SAN=thread

demo: deps
	@$(MAKE) --no-print-directory _demo

# bench/compare is python3
bench: deps
	$(call apt_install,python3)
	@$(MAKE) --no-print-directory _bench

fuzz: deps-test
	@$(MAKE) --no-print-directory _fuzz

fuzz-long: deps-test
	@$(MAKE) --no-print-directory _fuzz FUZZ_TIME=$(FUZZ_LONG_TIME)

# Interop with Linux siw in a qemu VM (tests/conformance/README.md); installs
# and caches what it needs under build-vm/.
conformance: deps-test
	@$(MAKE) --no-print-directory _conformance

_conformance: _build $(CHECK_BIN)
	$(Q)UIW_BIN=$(O)/bin UIW_TESTBIN=$(O)/tests sh tests/conformance/run.sh

help:
	@echo "uiwarp $(VERSION) make targets:"
	@echo "  make demo        install what is missing, build, run uiw-perf on 127.0.0.1: Write/Read/Send"
	@echo "                   bandwidth and latency beside raw TCP from the same run"
	@echo "  make check       install what is missing (make deps-test), build, run the Check suites and"
	@echo "                   the shell tests in tests/sh/ (install.sh: make install into a temporary prefix)"
	@echo "  make check SAN=address,undefined   the same under ASan and UBSan"
	@echo "  make check-tsan  the engine-level suites (verbs*, rpc*) and ping/perf/rpc.sh under ThreadSanitizer"
	@echo "  make bench       CRC32C, MPA framing and RDMAP loop benchmarks (GB/s beside memcpy), then"
	@echo "                   bench/compare: uiwarp vs raw TCP, UCX and libfabric over loopback (~10 min;"
	@echo "                   COMPARE_ARGS=--quick ~2 min), report in docs/PERFORMANCE-compare.md"
	@echo "  make fuzz        build the libFuzzer targets with clang and run each FUZZ_TIME s (default 20)"
	@echo "  make fuzz-long   the same for FUZZ_LONG_TIME s each (default 3600)"
	@echo "  make conformance interop cases against Linux siw in a qemu VM (builds and caches the VM)"
	@echo "  make deps        install the Debian packages building and installing need (root):"
	@echo "                   $(BUILD_PACKAGES)"
	@echo "  make deps-test   make deps, then the packages of the tests (check, fuzz, conformance):"
	@echo "                   $(TEST_PACKAGES)"
	@echo "  make format      clang-format the sources"
	@echo "  make install     build, then install under PREFIX ($(PREFIX)), staged under DESTDIR if set:"
	@echo "                   libuiw.a, libuiw.so.$(VERSION) (+ .so.$(SOVERSION), .so links), libuiw-rdma.so in COMPATDIR (LIBDIR/uiwarp),"
	@echo "                   $(notdir $(PUBLIC_HDRS)) in INCLUDEDIR, uiw.pc (for this PREFIX) in"
	@echo "                   PKGCONFIGDIR, $(TOOL_NAMES) in BINDIR,"
	@echo "                   man pages (1, 3, 7) in MANDIR, API docs and examples in DOCDIR"
	@echo "  make uninstall   remove what make install put there (same PREFIX, DESTDIR)"
	@echo "  make deb         Debian packages libuiw0, libuiw-dev, uiwarp-tools in O/deb/ (dpkg-buildpackage,"
	@echo "                   debhelper), lintian-clean or failed"
	@echo "  make deb-check   make deb, then apt-get install them here, use them (pkg-config, man, uiw-ping"
	@echo "                   between two network namespaces) and purge them again (root)"
	@echo "  Variables: SAN=..., WERROR=0, V=1, O=builddir; PREFIX, DESTDIR, LIBDIR, BINDIR, INCLUDEDIR,"
	@echo "             MANDIR, DOCDIR, PKGCONFIGDIR"

# Installs only what is missing; never touches the network otherwise.
# $(call apt_install,PACKAGES)
define apt_install
	@missing=""; \
	for p in $(1); do \
		dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
		if [ "$$(id -u)" != 0 ]; then \
			echo "uiwarp: missing Debian packages:$$missing" >&2; \
			echo "uiwarp: run as root, or: sudo apt-get install -y$$missing" >&2; \
			exit 1; \
		fi; \
		echo "uiwarp: installing$$missing"; \
		export DEBIAN_FRONTEND=noninteractive; \
		apt-get update -qq >/dev/null && apt-get install -y -qq $$missing >/dev/null || \
			{ echo "uiwarp: apt-get install$$missing failed" >&2; exit 1; }; \
	fi
endef

deps:
	$(call apt_install,$(BUILD_PACKAGES))

deps-test: deps
	$(call apt_install,$(TEST_PACKAGES))

# the library, tools, examples, benchmarks, test helper programs and man
# pages; the Check binary (which needs the check package) is built by _check
_build: $(LIB_A) $(LIB_SO) $(COMPAT_SO) $(BENCH_BINS) $(TOOL_BINS) $(PROG_BINS) $(EXAMPLE_BINS) \
        $(MAN_PAGES) $(MAN_LINKS)

# ---- rpcgen: rpcrdma/proto/*.x (protocols the tools speak) and the example
# service rpcrdma/examples/*.x -> $(GEN)/NAME.h, NAME_xdr.c, NAME_clnt.c
# (client stubs), NAME_svc.c (dispatch routine only, rpcgen -m); the XDR
# routines and client stubs go into $(GEN_LIB), which tools link before
# libuiw.a.  Generated code is rpcgen's: compiled without our warnings.
$(GEN)/%.x: rpcrdma/proto/%.x
	@mkdir -p $(GEN)
	$(Q)cp $< $@
$(GEN)/%.x: rpcrdma/examples/%.x
	@mkdir -p $(GEN)
	$(Q)cp $< $@
$(GEN)/%.h: $(GEN)/%.x
	@$(if $(Q),echo "  RPCGEN  $@")
	$(Q)cd $(GEN) && rm -f $*.h && rpcgen -h -o $*.h $*.x
$(GEN)/%_xdr.c: $(GEN)/%.x $(GEN)/%.h
	$(Q)cd $(GEN) && rm -f $*_xdr.c && rpcgen -c -o $*_xdr.c $*.x
$(GEN)/%_clnt.c: $(GEN)/%.x $(GEN)/%.h
	$(Q)cd $(GEN) && rm -f $*_clnt.c && rpcgen -l -o $*_clnt.c $*.x
$(GEN)/%_svc.c: $(GEN)/%.x $(GEN)/%.h
	$(Q)cd $(GEN) && rm -f $*_svc.c && rpcgen -m -o $*_svc.c $*.x
$(O)/obj/gen/%.o: $(GEN)/%.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) -std=gnu11 -O2 -g -fPIC -w $(TIRPC_CFLAGS) -I$(GEN) $(CFLAGS) -c -o $@ $<
$(GEN_LIB): $(GEN_OBJS)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $^
# our sources that include generated headers wait for them
$(GEN_USERS:%.c=$(O)/obj/%.o): | $(GEN_HDRS)

$(O)/examples/bulk_server: $(O)/obj/rpcrdma/examples/bulk_server.o $(O)/obj/gen/bulk_svc.o $(GEN_LIB) $(LIB_A)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS_ALL) -o $@ $< $(O)/obj/gen/bulk_svc.o $(GEN_LIB) $(LIB_A) $(LIBS_PRIVATE)
$(O)/examples/bulk_client: $(O)/obj/rpcrdma/examples/bulk_client.o $(GEN_LIB) $(LIB_A)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS_ALL) -o $@ $< $(GEN_LIB) $(LIB_A) $(LIBS_PRIVATE)

$(O)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CPPFLAGS_ALL) $(call inc_of,$<) $(CPPFLAGS) $(CFLAGS_ALL) -MMD -MP -c -o $@ $<

$(LIB_A): $(LIB_OBJS)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $^

$(LIB_SO): $(LIB_OBJS) verbs-shim/libuiw.map
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -shared -Wl,-soname,libuiw.so.$(SOVERSION) \
		-Wl,--version-script=verbs-shim/libuiw.map -Wl,--no-undefined \
		$(LDFLAGS_ALL) -o $@ $(LIB_OBJS) $(LIBS_PRIVATE)
	$(Q)ln -sf libuiw.so.$(VERSION) $(O)/libuiw.so.$(SOVERSION)
	$(Q)ln -sf libuiw.so.$(SOVERSION) $(O)/libuiw.so

# libuiw-rdma: the objects and libuiw.a (PIC) in one preloadable library that
# needs nothing of uiwarp installed; only rdma-core's names are exported
# (rdma-compat/libuiw-rdma.map).  No SONAME version: nothing links to it.
$(COMPAT_SO): $(COMPAT_OBJS) $(LIB_A) rdma-compat/libuiw-rdma.map
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -shared -Wl,-soname,libuiw-rdma.so -Wl,--version-script=rdma-compat/libuiw-rdma.map \
		-Wl,--no-undefined -Wl,-z,now $(LDFLAGS_ALL) -o $@ $(COMPAT_OBJS) $(LIB_A) $(LIBS_PRIVATE)

$(O)/bin/uiw-run: rdma-compat/uiw-run
	@mkdir -p $(dir $@)
	$(Q)install -m 755 $< $@

# ---- man pages: markdown -> roff with go-md2man.  The first line of the
# source, "# NAME(SECTION)", becomes the .TH line; after rendering, the NAME
# line's " - " becomes " \- " (whatis/apropos and lexgrog), hyphenation is
# turned off after the .TH of section 3 pages (.TH turns it on again: a
# function name split at a line end is not found by "man 3 NAME | grep -w
# NAME"; pages with tables keep it, which their cells need), and characters
# outside ASCII become groff escapes \[uXXXX], so the page needs no preconv.
define md2man
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  MD2MAN  $@")
	$(Q)sed -e '1s/^# *\([^ (]*\)(\([1-9]\))$$/# \U\1\E \2 "" "uiwarp $(VERSION)" "uiwarp manual"/' $< | \
		go-md2man > $@.tmp && \
		perl -CSD -pe 'if ($$n) { $$n = 0 if s/ - / \\- /; } $$n = 1 if /^\.SH NAME/; $$_ .= ".nh\n" if /^\.TH \S+ 3 /; \
			s/([^\x00-\x7f])/sprintf("\\[u%04X]", ord $$1)/ge' $@.tmp > $@ && rm -f $@.tmp
endef
$(O)/man/man1/%.1: docs/%.md Makefile
	$(md2man)
$(O)/man/man3/%.3: docs/man/%.3.md Makefile
	$(md2man)
$(O)/man/man7/%.7: docs/man/%.7.md Makefile
	$(md2man)
# every function the shared library exports gets a page that sources the
# one describing it: clnt_rdma_* and svc_rdma_* rpc_rdma(3), uiw_* uiw_verbs(3)
$(MAN_LINKS): $(LIB_SO) $(O)/man/man3/uiw_verbs.3 $(O)/man/man3/rpc_rdma.3
	$(Q)if [ -f $@ ]; then for f in $$(cat $@); do rm -f $(dir $@)$$f.3; done; fi; \
	for f in $$(nm -D --defined-only $(LIB_SO) | awk '$$2 == "T" { sub(/@.*/, "", $$3); print $$3 }'); do \
		case $$f in clnt_rdma_*|svc_rdma_*) pg=rpc_rdma ;; *) pg=uiw_verbs ;; esac; \
		echo ".so man3/$$pg.3" > $(dir $@)$$f.3 || exit 1; echo $$f; \
	done > $@.tmp && mv $@.tmp $@

$(CHECK_BIN): $(TEST_OBJS) $(LIB_A)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS_ALL) -o $@ $(TEST_OBJS) $(LIB_A) $$(pkg-config --libs check) $(LIBS_PRIVATE)

BENCH_HELPERS = $(O)/obj/bench/bench_util.o $(O)/obj/tests/memwire.o

$(O)/bench/uiw-bench-%: $(O)/obj/bench/%.o $(BENCH_HELPERS) $(LIB_A)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS_ALL) -o $@ $< $(BENCH_HELPERS) $(LIB_A) $(LIBS_PRIVATE)

# a tool's objects: its main and its parts (TOOL_SRCS); libraries only
# some tools need come from TOOL_LIBS, set for that tool's binary
$(foreach f,$(TOOL_MAINS),$(eval $(O)/bin/$(basename $(notdir $(f))): \
	$(patsubst %.c,$(O)/obj/%.o,$(f) $(wildcard $(basename $(f))-*.c))))
$(O)/bin/uiw-perf: TOOL_LIBS := -lm

$(O)/bin/uiw-%: $(GEN_LIB) $(LIB_A)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS_ALL) -o $@ $(filter %.o,$^) $(GEN_LIB) $(LIB_A) $(LIBS_PRIVATE) $(TOOL_LIBS)

$(O)/tests/%: $(O)/obj/tests/progs/%.o $(LIB_A)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS_ALL) -o $@ $< $(LIB_A) $(LIBS_PRIVATE)

# A shell test's exit status: 0 passed; 78 not applicable to this build (a
# sanitizer build of a test that cannot run under one, said with the reason);
# 77 skipped because something it needs is missing or refused, which fails
# when UIW_REQUIRE_ALL=1 (.ci/run sets it: CI must not pass by skipping);
# anything else failed.
SH_VERDICT = if [ $$rc = 78 ]; then echo "uiwarp: n/a $$t (not applicable to this build)"; \
	elif [ $$rc = 77 ] && [ "$${UIW_REQUIRE_ALL:-0}" = 1 ]; then \
		echo "uiwarp: FAILED $$t (skipped, and UIW_REQUIRE_ALL=1 requires it to run)" >&2; fail=1; \
	elif [ $$rc = 77 ]; then echo "uiwarp: SKIPPED $$t"; \
	elif [ $$rc != 0 ]; then echo "uiwarp: FAILED $$t (exit $$rc)" >&2; fail=1; \
	else echo "uiwarp: passed $$t"; fi

# Check's own default is 4 s per test case without a timeout of its own:
# trivial cases (a table of decodes) ran out of it on a loaded 2-vCPU
# machine with sanitizers (forked children starved for seconds); a hang
# still fails, after this
CK_DEFAULT_TIMEOUT ?= 30

_check: _build $(CHECK_BIN)
	@echo "uiwarp: running unit tests ($(if $(SAN),SAN=$(SAN),no sanitizer))"
	$(Q)UIW_TEST_DATA=tests/data UIW_BENCH_DIR=$(O)/bench UIW_BIN=$(O)/bin \
		CK_DEFAULT_TIMEOUT=$${CK_DEFAULT_TIMEOUT:-$(CK_DEFAULT_TIMEOUT)} $(CHECK_BIN)
	$(Q)fail=0; for t in $(SH_TESTS); do \
		echo "uiwarp: $$t"; \
		UIW_BIN=$(O)/bin UIW_TESTBIN=$(O)/tests UIW_SAN="$(SAN)" sh $$t; rc=$$?; \
		$(SH_VERDICT); \
	done; exit $$fail

# suites and shell tests with threads; reports go to $(O)/tsan/report.<pid>
TSAN_SUITES := verbs verbs_api verbs_proc cm_channel rpc rpc_clnt
TSAN_SH     := tests/sh/ping.sh tests/sh/perf.sh tests/sh/rpc.sh tests/sh/midop.sh
TSAN_LOG     = $(abspath $(O))/tsan
ifneq ($(filter _check-tsan,$(MAKECMDGOALS)),)
ifneq ($(SAN),thread)
$(error _check-tsan needs SAN=thread: use make check-tsan)
endif
endif
_check-tsan: _build $(CHECK_BIN)
	@echo "uiwarp: running $(TSAN_SUITES) and $(notdir $(TSAN_SH)) under ThreadSanitizer"
	$(Q)rm -rf $(TSAN_LOG) && mkdir -p $(TSAN_LOG); \
	export TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1 suppressions=$(CURDIR)/tests/tsan.supp log_path=$(TSAN_LOG)/report"; \
	fail=0; \
	for s in $(TSAN_SUITES); do \
		CK_RUN_SUITE=$$s CK_TIMEOUT_MULTIPLIER=4 UIW_TEST_DATA=tests/data \
			CK_DEFAULT_TIMEOUT=$${CK_DEFAULT_TIMEOUT:-$(CK_DEFAULT_TIMEOUT)} $(CHECK_BIN) || \
			{ echo "uiwarp: FAILED suite $$s" >&2; fail=1; }; \
	done; \
	for t in $(TSAN_SH); do \
		echo "uiwarp: $$t"; \
		UIW_BIN=$(O)/bin UIW_TESTBIN=$(O)/tests UIW_SAN="$(SAN)" sh $$t; rc=$$?; \
		$(SH_VERDICT); \
	done; \
	for f in $(TSAN_LOG)/report.*; do \
		[ -e "$$f" ] || continue; cat "$$f" >&2; \
		echo "uiwarp: ThreadSanitizer report in $$f" >&2; fail=1; \
	done; exit $$fail

_demo: _build
	$(Q)UIW_BIN=$(O)/bin sh bench/demo.sh

# bench/compare installs ucx-utils, libfabric-bin and gnuplot-nox itself
# (their columns say n/a where that fails); COMPARE_ARGS=--quick for a short run
COMPARE_ARGS ?=
_bench: _build
	$(Q)$(O)/bench/uiw-bench-crc32c
	$(Q)$(O)/bench/uiw-bench-mpa_frame
	$(Q)$(O)/bench/uiw-bench-rdmap_loop
	$(Q)UIW_BIN=$(O)/bin python3 bench/compare --update-docs $(COMPARE_ARGS)

# libFuzzer targets: clang, ASan + UBSan, the library sources compiled in
# (in one command, so with the include paths of tests/: the layering is
# enforced by the regular build of the same sources).
FUZZ_CFLAGS := -std=gnu11 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
               -D_GNU_SOURCE $(INC_rpcrdma) $(if $(HAVE_ISAL),-DUIW_HAVE_ISAL)

build-fuzz/fuzz_%: tests/fuzz/fuzz_%.c $(LIB_SRCS) $(FUZZ_HELPERS) $(wildcard common/*.h mpa/*.h ddp/*.h rdmap/*.h rpcrdma/*.h tests/*.h)
	@mkdir -p build-fuzz
	@$(if $(Q),echo "  FUZZ    $@")
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -Itests -o $@ $< $(LIB_SRCS) $(FUZZ_HELPERS) $(if $(HAVE_ISAL),-lisal) -luring -lcrypto -lpthread -ltirpc

_fuzz: $(FUZZ_BINS)
	@for t in $(FUZZ_NAMES); do \
		echo "uiwarp: fuzzing $$t for $(FUZZ_TIME) s (seed corpus tests/fuzz/corpus/$$t)"; \
		mkdir -p build-fuzz/corpus/$$t; \
		build-fuzz/fuzz_$$t -max_total_time=$(FUZZ_TIME) -print_final_stats=1 \
			-artifact_prefix=build-fuzz/crash-$$t- \
			build-fuzz/corpus/$$t tests/fuzz/corpus/$$t 2>build-fuzz/$$t.log || \
			{ tail -n 40 build-fuzz/$$t.log; echo "uiwarp: fuzz target $$t FAILED" >&2; exit 1; }; \
		grep -E "stat::number_of_executed_units|Done" build-fuzz/$$t.log | tail -n 2; \
	done

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

# Installs what _build made; rebuilds nothing that is up to date (the test
# tests/sh/install.sh runs it with the O= of its own build).  uiw.pc is
# written here, for this PREFIX/LIBDIR/INCLUDEDIR: DESTDIR only stages.
# install-files copies without building or checking packages (debian/rules).
install: all
	@$(MAKE) --no-print-directory install-files

install-files:
	install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(PKGCONFIGDIR) \
		$(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man3 \
		$(DESTDIR)$(MANDIR)/man7 $(DESTDIR)$(DOCDIR)/examples $(DESTDIR)$(COMPATDIR)
	install -m 644 $(LIB_A) $(DESTDIR)$(LIBDIR)/
	install -m 755 $(LIB_SO) $(DESTDIR)$(LIBDIR)/
	install -m 644 $(COMPAT_SO) $(DESTDIR)$(COMPATDIR)/
	ln -sf libuiw.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libuiw.so.$(SOVERSION)
	ln -sf libuiw.so.$(SOVERSION) $(DESTDIR)$(LIBDIR)/libuiw.so
	install -m 644 $(PUBLIC_HDRS) $(DESTDIR)$(INCLUDEDIR)/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(PC_LIBDIR)|' -e 's|@INCLUDEDIR@|$(PC_INCLUDEDIR)|' \
		-e 's|@VERSION@|$(VERSION)|' -e 's|@REQUIRES_PRIVATE@|$(PC_REQUIRES_PRIVATE)|' \
		-e 's|@LIBS_PRIVATE@|$(PC_LIBS_PRIVATE)|' verbs-shim/uiw.pc.in > $(DESTDIR)$(PKGCONFIGDIR)/uiw.pc
	chmod 644 $(DESTDIR)$(PKGCONFIGDIR)/uiw.pc
	install -m 755 $(TOOL_BINS) $(DESTDIR)$(BINDIR)/
	sed 's|^UIW_RDMA_INSTALLED=.*|UIW_RDMA_INSTALLED=$(COMPATDIR)/libuiw-rdma.so|' rdma-compat/uiw-run \
		>$(DESTDIR)$(BINDIR)/uiw-run
	install -m 644 $(filter %.1,$(MAN_PAGES)) $(DESTDIR)$(MANDIR)/man1/
	install -m 644 $(filter %.3,$(MAN_PAGES)) $$(sed 's|.*|$(O)/man/man3/&.3|' $(MAN_LINKS)) \
		$(DESTDIR)$(MANDIR)/man3/
	install -m 644 $(filter %.7,$(MAN_PAGES)) $(DESTDIR)$(MANDIR)/man7/
	install -m 644 docs/API.md docs/RPC-API.md $(DESTDIR)$(DOCDIR)/
	install -m 644 docs/examples/*.c $(DESTDIR)$(DOCDIR)/examples/

uninstall:
	rm -f $(DESTDIR)$(LIBDIR)/libuiw.a $(DESTDIR)$(LIBDIR)/libuiw.so.$(VERSION) \
		$(DESTDIR)$(LIBDIR)/libuiw.so.$(SOVERSION) $(DESTDIR)$(LIBDIR)/libuiw.so \
		$(DESTDIR)$(COMPATDIR)/libuiw-rdma.so \
		$(addprefix $(DESTDIR)$(INCLUDEDIR)/,$(notdir $(PUBLIC_HDRS))) \
		$(DESTDIR)$(PKGCONFIGDIR)/uiw.pc $(addprefix $(DESTDIR)$(BINDIR)/,$(TOOL_NAMES)) \
		$(addprefix $(DESTDIR)$(MANDIR)/man1/,$(notdir $(filter %.1,$(MAN_PAGES)))) \
		$(addprefix $(DESTDIR)$(MANDIR)/man3/,$(notdir $(filter %.3,$(MAN_PAGES)))) \
		$(addprefix $(DESTDIR)$(MANDIR)/man7/,$(notdir $(filter %.7,$(MAN_PAGES))))
	for f in $$(cat $(MAN_LINKS) 2>/dev/null); do rm -f $(DESTDIR)$(MANDIR)/man3/$$f.3; done
	rm -rf $(DESTDIR)$(DOCDIR)
	-rmdir $(DESTDIR)$(COMPATDIR) 2>/dev/null

# ---- Debian packages (debian/): libuiw0, libuiw-dev, uiwarp-tools, built by
# dpkg-buildpackage in a copy of the source tree under $(DEB_OUT) (the tree
# and its build directories are left alone), then lintian, which fails the
# build on any error or warning.  deb-check installs them with apt-get and
# uses them (tests/deb/deb-check.sh).
DEB_TOOL_PACKAGES := build-essential dpkg-dev debhelper lintian
DEB_OUT = $(O)/deb

deps-deb: deps
	$(call apt_install,$(DEB_TOOL_PACKAGES))

deb: deps-deb
	$(Q)v=$$(dpkg-parsechangelog -l debian/changelog -S Version) && [ "$$v" = "$(VERSION)" ] || \
		{ echo "uiwarp: debian/changelog is at version $$v, the Makefile at $(VERSION)" >&2; exit 1; }
	$(Q)rm -rf $(DEB_OUT) && mkdir -p $(DEB_OUT)/uiwarp-$(VERSION)
	$(Q)tar -c --exclude=./.git --exclude=./build --exclude='./build-*' --exclude=./$(O) . | \
		tar -x -C $(DEB_OUT)/uiwarp-$(VERSION)
	@echo "uiwarp: dpkg-buildpackage in $(DEB_OUT)/uiwarp-$(VERSION) (log: $(DEB_OUT)/build.log)"
	$(Q)cd $(DEB_OUT)/uiwarp-$(VERSION) && dpkg-buildpackage -b -us -uc >../build.log 2>&1 || \
		{ tail -n 40 ../build.log; echo "uiwarp: dpkg-buildpackage failed" >&2; exit 1; }
	@echo "uiwarp: lintian"
	$(Q)lintian --fail-on error,warning $(DEB_OUT)/uiwarp_$(VERSION)_*.changes
	@ls -1 $(DEB_OUT)/*.deb

deb-check: deb deps-test
	$(Q)UIW_DEB_DIR=$(DEB_OUT) sh tests/deb/deb-check.sh

clean:
	rm -rf build build-san-* build-fuzz
	@echo "(build-vm/, the cached siw VM, is kept: rm -rf build-vm to rebuild it)"

# Objects and rpcgen output made through pattern chains are kept (not
# deleted as intermediates).  Not a bare .SECONDARY: that makes every target
# intermediate, the -MP stubs of headers included, so a header moved or
# deleted no longer rebuilt the objects that included it.
.PRECIOUS: $(O)/obj/%.o $(O)/obj/gen/%.o $(GEN)/%.x $(GEN)/%.h $(GEN)/%_xdr.c $(GEN)/%_clnt.c \
           $(GEN)/%_svc.c

# every object's header dependencies (-MMD): a header change rebuilds what
# includes it (libuiw-rdma's objects too: without them a changed uiw_verbs.h
# struct left it built against the old layout)
-include $(LIB_OBJS:.o=.d) $(TEST_OBJS:.o=.d) $(BENCH_NAMES:%=$(O)/obj/bench/%.d) \
         $(TOOL_SRCS:%.c=$(O)/obj/%.d) $(PROG_SRCS:%.c=$(O)/obj/%.d) $(COMPAT_OBJS:.o=.d) \
         $(wildcard $(O)/obj/rpcrdma/examples/*.d)
