#!/bin/bash
# SPDX-License-Identifier: MIT
#
# run.sh [-l] [CASE...] - uiwarp conformance cases against Linux siw in a
# qemu VM (tests/conformance/README.md).
#
#   1. vm-build.sh builds or finds cached the VM (kernel, siw.ko stock and
#      param, initramfs) under build-vm/;
#   2. each case's needs() may skip it (the reason is printed);
#   3. one VM boot runs every remaining case in order: the host writes
#      build-vm/results/_vm/cmd.sh (a run_case line per case), the guest runs
#      cases/NAME.guest.sh for each while run.sh runs that case's host_run
#      (cases/NAME.host.sh) beside it; they meet through files in
#      build-vm/results/_vm/sync/;
#   4. after the VM powered off, each case's host_check (e.g. tshark on its
#      capture) runs, and one line per case is printed:
#      "NAME: PASS", "NAME: FAIL (reason)" or "NAME: SKIP(reason)",
#      then "conformance: N passed, N failed, N skipped".
#
# Without CASE arguments (or UIW_CONFORMANCE_CASES) every case runs: the
# fixed cases of ALL_CASES, then the interop-matrix cells of peer/matrix.txt
# (peer/cells.sh); -l
# lists them.  When the VM cannot be built or booted (no qemu, packages that
# cannot be installed, ...) every case is SKIP with the reason, never PASS.
# Exit status: 1 when any case FAILED, or, with UIW_REQUIRE_ALL=1 (set by
# .ci/run), when any case skipped or fewer cases ran than ALL_CASES; else 0.
#
# Environment: UIW_BIN (uiwarp tools, default build/bin), UIW_TESTBIN (test
# programs, default build/tests), UIW_VM_DIR (default build-vm),
# UIW_CASE_TIMEOUT (seconds per case in the VM, default 180),
# UIW_VM_READY_TIMEOUT (seconds for the boot, default 180).
#
# Started by `make conformance` as `sh run.sh`: it re-executes itself with
# bash.
if [ -z "${BASH_VERSION:-}" ]; then
	exec bash "$0" "$@"
fi
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
B=${UIW_VM_DIR:-$top/build-vm}
export UIW_VM_DIR=$B
R=$B/results
UIW_BIN=${UIW_BIN:-$top/build/bin}
UIW_TESTBIN=${UIW_TESTBIN:-$top/build/tests}
case $UIW_BIN in /*) ;; *) UIW_BIN=$top/$UIW_BIN ;; esac
case $UIW_TESTBIN in /*) ;; *) UIW_TESTBIN=$top/$UIW_TESTBIN ;; esac
export UIW_BIN UIW_TESTBIN
CASE_TIMEOUT=${UIW_CASE_TIMEOUT:-180}
READY_TIMEOUT=${UIW_VM_READY_TIMEOUT:-180}

# every case, in the order one VM runs them (the param cases reload siw, so
# they come last; each case loads what it needs, so any subset works)
ALL_CASES=(siw-smoke uiw-client uiw-client-nocrc uiw-server uiw-server-nocrc
	ping-u2s-64 ping-u2s-65535 ping-s2u-64 ping-s2u-65535
	perftest-u2s-write perftest-u2s-read perftest-u2s-send
	perftest-s2u-write perftest-s2u-read perftest-s2u-send
	run-rping-u2s run-rping-u2s-65535 run-rping-s2u run-rping-s2u-65535
	run-pt-u2s-write run-pt-u2s-read run-pt-u2s-send
	run-pt-s2u-write run-pt-s2u-read run-pt-s2u-send
	fio-siw-send fio-siw-write fio-siw-read fio-u2s-send fio-s2u-send
	param-defaults param-crc)

# shellcheck source=vm.sh
. "$here/vm.sh"
# shellcheck source=lib.sh
. "$here/lib.sh"
# shellcheck source=peer/cells.sh
. "$here/peer/cells.sh"
cells_load # the interop matrix (peer/matrix.txt): one case per cell
ALL_CASES+=("${CELLS[@]}")
# the NFS server cases last: they bring nfsd up over the stock siw.ko, and
# no later case may reload siw under it
ALL_CASES+=(nfs-smoke nfscp-tcp rpcinfo-tcp nfscp-rdma rpcinfo-rdma nfs-rdma-ops)

declare -A RESULT
declare -A FIRST # a retried case: the result of its first try

case_field() { # NAME VAR: a variable a case file sets (desc, ports)
	(
		# shellcheck disable=SC1090
		. "$(case_file "$1")"
		eval "printf '%s' \"\${$2-}\""
	)
}

case_has() { # NAME FUNCTION: the case file defines FUNCTION
	(
		# shellcheck disable=SC1090
		. "$(case_file "$1")"
		declare -F "$2" >/dev/null
	)
}

list_cases() {
	local c
	for c in "${ALL_CASES[@]}"; do
		printf '%-18s %s\n' "$c" "$(case_field "$c" desc)"
	done
}

cleanup() {
	local rc=$?
	vm_kill
	exit "$rc"
}

main() {
	local cases=() c reason runnable=() ports=() t0 tb t1 n_pass=0 n_fail=0 n_skip=0 r retry
	if [ "${1-}" = -l ]; then
		list_cases
		return 0
	fi
	if [ $# -gt 0 ]; then
		cases=("$@")
	elif [ -n "${UIW_CONFORMANCE_CASES:-}" ]; then
		read -r -a cases <<<"$UIW_CONFORMANCE_CASES"
	else
		cases=("${ALL_CASES[@]}")
	fi
	for c in "${cases[@]}"; do
		[ -f "$(case_file "$c")" ] || { echo "run.sh: unknown case '$c' (-l lists them)" >&2; return 2; }
	done
	mkdir -p "$R"
	exec 8>"$B/.run.lock"
	flock 8
	trap cleanup EXIT
	trap 'exit 130' INT TERM
	t0=$SECONDS

	# 1. the VM
	echo "conformance: building the VM (tests/conformance/vm-build.sh)"
	reason=
	# UIW_VM_BUILD_CMD: another build command (tests/sh/ci_gate.sh makes the
	# build fail on purpose to see the skips fail the run)
	if ! ${UIW_VM_BUILD_CMD:-bash "$here/vm-build.sh"} >"$B/build.log" 2>&1; then
		reason=$(grep -E '^vm-build: (cannot|error):' "$B/build.log" | tail -n 1 | sed 's/^vm-build: [a-z]*: //' || true)
		[ -n "$reason" ] || reason="vm-build.sh failed: $(tail -n 1 "$B/build.log")"
	fi
	sed 's/^/  /' "$B/build.log"
	peers_build || true
	tb=$SECONDS
	if [ -z "$reason" ] && ! command -v qemu-system-x86_64 >/dev/null; then
		reason="qemu-system-x86_64 not installed"
	fi

	# 2. skips
	for c in "${cases[@]}"; do
		rm -rf "${R:?}/$c"
		if [ -n "$reason" ]; then
			RESULT[$c]="SKIP($reason)"
			continue
		fi
		rc=0
		r=$(
			# shellcheck disable=SC1090
			. "$(case_file "$c")"
			needs
		) || rc=$?
		if [ "$rc" = 0 ]; then
			runnable+=("$c")
			read -r -a p <<<"$(case_field "$c" ports)"
			ports+=("${p[@]}")
		elif [ "$rc" = 2 ]; then
			# our own code is broken (a peer does not compile): a failure
			RESULT[$c]="FAIL(${r:-needs() failed})"
		else
			RESULT[$c]="SKIP(${r:-needs() refused})"
		fi
	done

	# 3. one VM for every runnable case
	if [ "${#runnable[@]}" -gt 0 ]; then
		run_vm "${runnable[@]}" -- "${ports[@]}"
	fi
	# 3b. siw under emulation fails a perftest case now and then (a
	# TERMINATE claiming a CRC error on a stream whose CRCs check good:
	# docs/CONFORMANCE.md), and, as the initiator of a rejected connection,
	# once reset it itself and lost the Reject's private data when uiwarp's
	# FIN came right behind the Reply (s2u-reject*), and, with 100 Writes in
	# flight (s2u-write-100), sent one FPDU whose CRC32C is bad on the wire
	# (2026-11-28, once in three runs; uiwarp answered it with its TERMINATE
	# as it must): at most two failed
	# cases of those kinds are run once
	# more in a fresh VM; the first try stays in RESULTS/NAME.try1 and the
	# summary says so.  A case that fails twice fails.
	retry=()
	for c in "${runnable[@]}"; do
		case $c in perftest-* | run-pt-* | s2u-reject* | s2u-write-100) ;; *) continue ;; esac
		case ${RESULT[$c]:-} in PASS | SKIP*) ;; *) retry+=("$c") ;; esac
	done
	if [ "${#retry[@]}" -gt 0 ] && [ "${#retry[@]}" -le 2 ]; then
		ports=()
		for c in "${retry[@]}"; do
			FIRST[$c]=${RESULT[$c]:-FAIL (no result)}
			rm -rf "${R:?}/$c.try1"
			mv "$R/$c" "$R/$c.try1"
			unset "RESULT[$c]"
			read -r -a p <<<"$(case_field "$c" ports)"
			ports+=("${p[@]}")
		done
		echo "conformance: retrying once in a fresh VM: ${retry[*]}"
		run_vm "${retry[@]}" -- "${ports[@]}"
	fi
	t1=$SECONDS

	# 4. results
	echo "conformance: results (VM build/check $((tb - t0)) s, cases $((t1 - tb)) s; logs in $R/)"
	: >"$R/summary.txt"
	for c in "${cases[@]}"; do
		r=${RESULT[$c]:-FAIL (no result)}
		case $r in
		PASS) n_pass=$((n_pass + 1)) ;;
		SKIP*) n_skip=$((n_skip + 1)) ;;
		*) n_fail=$((n_fail + 1)) ;;
		esac
		if [ -n "${FIRST[$c]:-}" ]; then
			echo "$c: $r (retried; first try: ${FIRST[$c]}; its logs in $c.try1/)" | tee -a "$R/summary.txt"
		else
			echo "$c: $r" | tee -a "$R/summary.txt"
		fi
		if [ -d "$R/$c" ]; then
			echo "$r" >"$R/$c/result"
		fi
	done
	echo "conformance: $n_pass passed, $n_fail failed, $n_skip skipped"
	[ "$n_fail" = 0 ] || return 1
	# CI must not pass by skipping: with UIW_REQUIRE_ALL=1 (.ci/run) every
	# case exists in the run and ran
	if [ "${UIW_REQUIRE_ALL:-0}" = 1 ]; then
		if [ "$n_skip" != 0 ]; then
			echo "conformance: FAILED: $n_skip case(s) skipped, and UIW_REQUIRE_ALL=1 requires every case to run" >&2
			return 1
		fi
		if [ "$((n_pass + n_fail))" != "${#ALL_CASES[@]}" ]; then
			echo "conformance: FAILED: $((n_pass + n_fail)) of ${#ALL_CASES[@]} cases ran, and UIW_REQUIRE_ALL=1 requires all" >&2
			return 1
		fi
	fi
}

# run_vm CASE... -- GUESTPORT...: boot once, run the cases, fill RESULT
run_vm() {
	local cases=() ports=() c v share=$R vmdir=$R/_vm aborted="" t
	while [ "$1" != -- ]; do cases+=("$1"); shift; done
	shift
	ports=("$@")
	rm -rf "$vmdir"
	mkdir -p "$vmdir/sync" "$vmdir/cases"
	SYNC_DIR=$vmdir/sync
	cp "$here/guest/lib.sh" "$vmdir/guest-lib.sh"
	cp "$here"/cases/*.guest.sh "$vmdir/cases/"
	cells_guest_files "$vmdir" "${cases[@]}"
	{
		echo "# written by tests/conformance/run.sh; run by the guest's /init"
		echo "run_case() {"
		echo "	mkdir -p \"/share/\$1\""
		echo "	echo \"[\$(date +%H:%M:%S)] === \$1\""
		echo "	CASE=\$1 OUT=/share/\$1 timeout $CASE_TIMEOUT sh /share/_vm/cases/\$1.guest.sh >\"/share/\$1/guest.log\" 2>&1"
		echo "	rc=\$?"
		echo "	echo \$rc >\"/share/\$1/guest.rc\""
		echo "	[ -f \"/share/\$1/guest.result\" ] || echo \"FAIL: guest script ended (status \$rc) without a result\" >\"/share/\$1/guest.result\""
		echo "	echo \"[\$(date +%H:%M:%S)] \$1: \$(cat \"/share/\$1/guest.result\")\""
		echo "	: >\"/share/_vm/sync/\$1.done\""
		echo "}"
		for c in "${cases[@]}"; do echo "run_case $c"; done
	} >"$vmdir/cmd.sh"
	for c in "${cases[@]}"; do mkdir -p "$R/$c"; done

	echo "conformance: booting the VM for: ${cases[*]}"
	t=$SECONDS
	if ! vm_boot "$share" "$vmdir" stock "${ports[@]}"; then
		for c in "${cases[@]}"; do RESULT[$c]="SKIP(cannot run qemu: $VM_ERROR)"; done
		return 0
	fi
	if ! vm_wait_ready "$READY_TIMEOUT"; then
		vm_kill
		for c in "${cases[@]}"; do RESULT[$c]="SKIP(VM did not boot: $VM_ERROR)"; done
		return 0
	fi
	echo "conformance: VM ready after $((SECONDS - t)) s (qemu PID $VM_PID)"
	for c in "${cases[@]}"; do
		if [ -n "$aborted" ]; then
			RESULT[$c]="FAIL (not run: $aborted)"
			continue
		fi
		t=$SECONDS
		if case_has "$c" host_run; then
			run_host_part "$c"
		fi
		if ! hawait "$c.done" "$((CASE_TIMEOUT + 30))" >/dev/null; then
			if vm_alive; then
				aborted="the VM was stopped after $c timed out"
				RESULT[$c]="FAIL (no end within $((CASE_TIMEOUT + 30)) s: timed out in the VM)"
			else
				aborted="the VM ended during $c"
				RESULT[$c]="FAIL (the VM ended during the case: $(vm_console_tail 1))"
			fi
			vm_kill
		fi
		echo "conformance:   $c ran in $((SECONDS - t)) s"
	done
	if ! vm_wait_exit 60; then
		echo "conformance: the VM did not power off: killed" >&2
		vm_kill
	fi
	for c in "${cases[@]}"; do
		[ -z "${RESULT[$c]:-}" ] || continue
		RESULT[$c]=$(case_verdict "$c")
	done
}

# run_host_part NAME: the case's host_run, in its own process group, beside
# the guest part.  It may not outlive the guest part by more than
# HOST_GRACE s, nor the VM, nor the case timeout: then its whole process
# group is killed (host tools stuck in a teardown were seen), so the host
# never lags behind the guest into the next case.
HOST_GRACE=20
run_host_part() {
	local c=$1 hp end=$((SECONDS + CASE_TIMEOUT + 30)) done_at="" why=""
	set -m
	(
		CASE=$c
		OUT=$R/$c
		trap hbg_kill EXIT
		# shellcheck disable=SC1090
		. "$(case_file "$c")"
		host_run
	) </dev/null &
	hp=$!
	set +m
	while kill -0 "$hp" 2>/dev/null; do
		if [ -z "$done_at" ] && [ -f "$SYNC_DIR/$c.done" ]; then
			done_at=$SECONDS
		fi
		if [ -n "$done_at" ] && [ "$SECONDS" -ge $((done_at + HOST_GRACE)) ]; then
			why="still running $HOST_GRACE s after the guest part ended"
		elif ! vm_alive; then
			why="the VM ended"
		elif [ "$SECONDS" -ge "$end" ]; then
			why="still running after $((CASE_TIMEOUT + 30)) s"
		fi
		if [ -n "$why" ]; then
			kill -TERM -- "-$hp" 2>/dev/null || true
			sleep 2
			kill -KILL -- "-$hp" 2>/dev/null || true
			break
		fi
		sleep 0.2
	done
	wait "$hp" 2>/dev/null || true
	if [ -n "$why" ]; then
		echo "FAIL: the host part was killed: $why ($(cat "$R/$c/host.result" 2>/dev/null || echo 'no result yet'))" \
			>"$R/$c/host.result"
	elif [ ! -f "$R/$c/host.result" ]; then
		echo "FAIL: the host part (host_run) ended without a result" >"$R/$c/host.result"
	fi
}

# case_verdict NAME: PASS, FAIL (reason) or SKIP(reason) from the guest's
# result, the host's result and host_check
case_verdict() {
	local c=$1 g h k
	g=$(cat "$R/$c/guest.result" 2>/dev/null || echo "FAIL: no result from the guest")
	h=$(cat "$R/$c/host.result" 2>/dev/null || echo PASS)
	rm -f "$R/$c/check.result"
	(
		CASE=$c
		OUT=$R/$c
		# shellcheck disable=SC1090
		. "$(case_file "$c")"
		if declare -F host_check >/dev/null; then
			host_check
		fi
	) || true
	if [ -f "$R/$c/check.result" ]; then
		k=$(cat "$R/$c/check.result")
	elif case_has "$c" host_check; then
		k="FAIL: host_check ended without a result"
	else
		k=PASS
	fi
	local why=""
	for r in "$g" "$h" "$k"; do
		case $r in
		FAIL*) why="${why:+$why; }${r#FAIL: }" ;;
		esac
	done
	if [ -n "$why" ]; then
		echo "FAIL ($why)"
		return 0
	fi
	for r in "$g" "$h" "$k"; do
		case $r in
		SKIP*) echo "SKIP(${r#SKIP: })"; return 0 ;;
		esac
	done
	echo PASS
}

main "$@"
