# uiwarp - a software iWARP stack.  `make help` lists the targets.
#
# The public targets first make sure the Debian packages are installed
# (`make deps`), then re-enter make so that what was just installed (ISA-L)
# is seen by the build.

VERSION    := 0.1.0
SOVERSION  := 0
PREFIX     ?= /usr/local
LIBDIR     ?= $(PREFIX)/lib
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

DEB_PACKAGES := liburing-dev libisal-dev check libsubunit-dev libssl-dev pkg-config \
                clang libclang-rt-14-dev clang-format iproute2 iptables libtirpc-dev rpcsvc-proto \
                valgrind python3

HAVE_ISAL = $(shell test -f /usr/include/isa-l/crc.h && echo 1)

WARN := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wformat=2 \
        -Wno-format-nonliteral
ifeq ($(WERROR),1)
WARN += -Werror
endif

# libtirpc: ONC RPC's CLIENT/SVCXPRT and XDR for the RPC layer (rpcrdma/rpc_*.c)
TIRPC_CFLAGS := $(shell pkg-config --cflags libtirpc 2>/dev/null || echo -I/usr/include/tirpc)
CPPFLAGS_ALL := -D_GNU_SOURCE -DUIW_VERSION=\"$(VERSION)\" -Impa -Iddp -Irdmap -Iverbs-shim -Irpcrdma -Itests \
                $(TIRPC_CFLAGS) -I$(O)/gen
CFLAGS_ALL   := -std=gnu11 -O2 -g -fPIC $(WARN) $(CFLAGS)
LDFLAGS_ALL  := $(LDFLAGS)
LIBS_PRIVATE := -luring -lcrypto -lpthread -ltirpc
ifneq ($(SAN),)
CFLAGS_ALL  += -fsanitize=$(SAN) -fno-omit-frame-pointer -fno-sanitize-recover=all
LDFLAGS_ALL += -fsanitize=$(SAN)
endif

LIB_SRCS := mpa/mpa_crc32c.c mpa/mpa_rr.c mpa/mpa_conn.c mpa/mpa_rx.c mpa/mpa_tx.c \
            ddp/ddp_hdr.c ddp/ddp_mem.c rdmap/rdmap_qp.c rdmap/rdmap_tx.c rdmap/rdmap_rx.c \
            rdmap/rdmap_term.c \
            verbs-shim/uiw_version.c verbs-shim/uiw_verbs.c verbs-shim/uiw_engine.c \
            $(wildcard rpcrdma/*.c)
TEST_SRCS := tests/check_main.c tests/test_crc32c.c tests/test_mpa_rr.c \
             tests/test_mpa_fpdu.c tests/test_mpa_loop.c tests/test_util.c \
             tests/mpa_pair.c tests/memwire.c tests/rdmap_pair.c tests/test_rdmap_loop.c \
             tests/test_rdmap_err.c tests/test_verbs.c tests/test_verbs_proc.c \
             tests/test_verbs_api.c tests/test_rpcrdma_hdr.c tests/test_replay.c \
             tests/test_rpc.c tests/test_rpc_clnt.c tests/midop.c tests/test_midop.c
# every bench/<name>.c but the helper is a benchmark program uiw-bench-<name>
BENCH_NAMES := $(patsubst bench/%.c,%,$(filter-out bench/bench_util.c bench/uiw-%.c,$(wildcard bench/*.c)))
# installed tools: verbs-shim/tools/uiw-<name>.c and bench/uiw-<name>.c -> $(O)/bin/uiw-<name>
TOOL_SRCS   := $(wildcard verbs-shim/tools/uiw-*.c bench/uiw-*.c)
TOOL_NAMES  := $(basename $(notdir $(TOOL_SRCS)))
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
LIB_PC     = $(O)/uiw.pc
CHECK_BIN  = $(O)/tests/check_uiw
BENCH_BINS = $(BENCH_NAMES:%=$(O)/bench/uiw-bench-%)
FUZZ_BINS  = $(FUZZ_NAMES:%=build-fuzz/fuzz_%)
TOOL_BINS  = $(TOOL_NAMES:%=$(O)/bin/%)
PROG_BINS  = $(PROG_SRCS:tests/progs/%.c=$(O)/tests/%)

ifeq ($(HAVE_ISAL),1)
CPPFLAGS_ALL += -DUIW_HAVE_ISAL
LIBS_PRIVATE += -lisal
endif

ifeq ($(V),0)
Q := @
else
Q :=
endif

.PHONY: all check check-tsan demo bench fuzz fuzz-long deps format install clean help conformance \
        _build _check _check-tsan _demo _bench _fuzz _fuzz-long _conformance

all: deps
	@$(MAKE) --no-print-directory _build

check: deps
	@$(MAKE) --no-print-directory _check

# ThreadSanitizer build (build-san-thread/) of the Check suites and shell
# tests with threads: the engine's progress thread, clients and servers in
# one process, the tools.  Any report fails the step; tests/tsan.supp says
# what is suppressed and why.
check-tsan: deps
	@$(MAKE) --no-print-directory _check-tsan SAN=thread

demo: deps
	@$(MAKE) --no-print-directory _demo

bench: deps
	@$(MAKE) --no-print-directory _bench

fuzz: deps
	@$(MAKE) --no-print-directory _fuzz

fuzz-long: deps
	@$(MAKE) --no-print-directory _fuzz FUZZ_TIME=$(FUZZ_LONG_TIME)

# Interop with Linux siw in a qemu VM (tests/conformance/README.md); installs
# and caches what it needs under build-vm/.
conformance: deps
	@$(MAKE) --no-print-directory _conformance

_conformance: _build
	$(Q)UIW_BIN=$(O)/bin UIW_TESTBIN=$(O)/tests sh tests/conformance/run.sh

help:
	@echo "uiwarp $(VERSION) make targets:"
	@echo "  make demo        install what is missing, build, run uiw-perf on 127.0.0.1: Write/Read/Send"
	@echo "                   bandwidth and latency beside raw TCP from the same run"
	@echo "  make check       install, build, run the unit tests (Check framework)"
	@echo "  make check SAN=address,undefined   the same under ASan and UBSan"
	@echo "  make check-tsan  the engine-level suites (verbs*, rpc*) and ping/perf/rpc.sh under ThreadSanitizer"
	@echo "  make bench       CRC32C, MPA framing and RDMAP loop benchmarks (GB/s beside memcpy), then"
	@echo "                   bench/compare: uiwarp vs raw TCP, UCX and libfabric over loopback (~10 min;"
	@echo "                   COMPARE_ARGS=--quick ~2 min), report in docs/PERFORMANCE-compare.md"
	@echo "  make fuzz        build the libFuzzer targets with clang and run each FUZZ_TIME s (default 20)"
	@echo "  make fuzz-long   the same for FUZZ_LONG_TIME s each (default 3600)"
	@echo "  make conformance interop cases against Linux siw in a qemu VM (builds and caches the VM)"
	@echo "  make deps        install the Debian packages the build needs (root)"
	@echo "  make format      clang-format the sources"
	@echo "  make install     install libuiw, uiw_verbs.h and uiw.pc under PREFIX ($(PREFIX))"
	@echo "  Variables: SAN=..., WERROR=0, V=1, O=builddir"

# Installs only what is missing; never touches the network otherwise.
deps:
	@missing=""; \
	for p in $(DEB_PACKAGES); do \
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

_build: $(LIB_A) $(LIB_SO) $(LIB_PC) $(CHECK_BIN) $(BENCH_BINS) $(TOOL_BINS) $(PROG_BINS) \
        $(EXAMPLE_BINS)

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
	$(Q)$(CC) $(CPPFLAGS_ALL) $(CPPFLAGS) $(CFLAGS_ALL) -MMD -MP -c -o $@ $<

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

$(LIB_PC): verbs-shim/uiw.pc.in Makefile
	$(Q)sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
		-e 's|@VERSION@|$(VERSION)|' -e 's|@LIBS_PRIVATE@|$(LIBS_PRIVATE)|' $< > $@

$(CHECK_BIN): $(TEST_OBJS) $(LIB_A)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS_ALL) -o $@ $(TEST_OBJS) $(LIB_A) $$(pkg-config --libs check) $(LIBS_PRIVATE)

BENCH_HELPERS = $(O)/obj/bench/bench_util.o $(O)/obj/tests/memwire.o

$(O)/bench/uiw-bench-%: $(O)/obj/bench/%.o $(BENCH_HELPERS) $(LIB_A)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS_ALL) -o $@ $< $(BENCH_HELPERS) $(LIB_A) $(LIBS_PRIVATE)

$(O)/bin/%: $(O)/obj/verbs-shim/tools/%.o $(GEN_LIB) $(LIB_A)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS_ALL) -o $@ $< $(GEN_LIB) $(LIB_A) $(LIBS_PRIVATE)

$(O)/bin/%: $(O)/obj/bench/%.o $(LIB_A)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS_ALL) -o $@ $< $(LIB_A) $(LIBS_PRIVATE) -lm

$(O)/tests/%: $(O)/obj/tests/progs/%.o $(LIB_A)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS_ALL) -o $@ $< $(LIB_A) $(LIBS_PRIVATE)

_check: _build
	@echo "uiwarp: running unit tests ($(if $(SAN),SAN=$(SAN),no sanitizer))"
	$(Q)UIW_TEST_DATA=tests/data UIW_BENCH_DIR=$(O)/bench UIW_BIN=$(O)/bin $(CHECK_BIN)
	$(Q)fail=0; for t in $(SH_TESTS); do \
		echo "uiwarp: $$t"; \
		UIW_BIN=$(O)/bin UIW_TESTBIN=$(O)/tests UIW_SAN="$(SAN)" sh $$t; rc=$$?; \
		if [ $$rc = 77 ]; then echo "uiwarp: SKIPPED $$t"; \
		elif [ $$rc != 0 ]; then echo "uiwarp: FAILED $$t (exit $$rc)" >&2; fail=1; \
		else echo "uiwarp: passed $$t"; fi; \
	done; exit $$fail

# suites and shell tests with threads; reports go to $(O)/tsan/report.<pid>
TSAN_SUITES := verbs verbs_api verbs_proc rpc rpc_clnt
TSAN_SH     := tests/sh/ping.sh tests/sh/perf.sh tests/sh/rpc.sh tests/sh/midop.sh
TSAN_LOG     = $(abspath $(O))/tsan
ifneq ($(filter _check-tsan,$(MAKECMDGOALS)),)
ifneq ($(SAN),thread)
$(error _check-tsan needs SAN=thread: use make check-tsan)
endif
endif
_check-tsan: _build
	@echo "uiwarp: running $(TSAN_SUITES) and $(notdir $(TSAN_SH)) under ThreadSanitizer"
	$(Q)rm -rf $(TSAN_LOG) && mkdir -p $(TSAN_LOG); \
	export TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1 suppressions=$(CURDIR)/tests/tsan.supp log_path=$(TSAN_LOG)/report"; \
	fail=0; \
	for s in $(TSAN_SUITES); do \
		CK_RUN_SUITE=$$s CK_TIMEOUT_MULTIPLIER=4 UIW_TEST_DATA=tests/data $(CHECK_BIN) || \
			{ echo "uiwarp: FAILED suite $$s" >&2; fail=1; }; \
	done; \
	for t in $(TSAN_SH); do \
		echo "uiwarp: $$t"; \
		UIW_BIN=$(O)/bin UIW_TESTBIN=$(O)/tests UIW_SAN="$(SAN)" sh $$t; rc=$$?; \
		if [ $$rc = 77 ]; then echo "uiwarp: SKIPPED $$t"; \
		elif [ $$rc != 0 ]; then echo "uiwarp: FAILED $$t (exit $$rc)" >&2; fail=1; \
		else echo "uiwarp: passed $$t"; fi; \
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

# libFuzzer targets: clang, ASan + UBSan, the library sources compiled in.
FUZZ_CFLAGS := -std=gnu11 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
               -D_GNU_SOURCE -Impa -Iddp -Irdmap -Iverbs-shim -Irpcrdma $(TIRPC_CFLAGS) $(if $(HAVE_ISAL),-DUIW_HAVE_ISAL)

build-fuzz/fuzz_%: tests/fuzz/fuzz_%.c $(LIB_SRCS) $(FUZZ_HELPERS) $(wildcard mpa/*.h ddp/*.h rdmap/*.h rpcrdma/*.h tests/*.h)
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

install: all
	install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(LIBDIR)/pkgconfig
	install -m 644 $(LIB_A) $(DESTDIR)$(LIBDIR)/
	install -m 755 $(LIB_SO) $(DESTDIR)$(LIBDIR)/
	ln -sf libuiw.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libuiw.so.$(SOVERSION)
	ln -sf libuiw.so.$(SOVERSION) $(DESTDIR)$(LIBDIR)/libuiw.so
	install -m 644 verbs-shim/uiw_verbs.h $(DESTDIR)$(PREFIX)/include/
	install -d $(DESTDIR)$(PREFIX)/bin
	$(if $(TOOL_BINS),install -m 755 $(TOOL_BINS) $(DESTDIR)$(PREFIX)/bin/)
	install -m 644 $(LIB_PC) $(DESTDIR)$(LIBDIR)/pkgconfig/

clean:
	rm -rf build build-san-* build-fuzz
	@echo "(build-vm/, the cached siw VM, is kept: rm -rf build-vm to rebuild it)"

.SECONDARY:

-include $(LIB_OBJS:.o=.d) $(TEST_OBJS:.o=.d) $(BENCH_NAMES:%=$(O)/obj/bench/%.d) \
         $(TOOL_SRCS:%.c=$(O)/obj/%.d) $(PROG_SRCS:%.c=$(O)/obj/%.d)
