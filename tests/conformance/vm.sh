#!/bin/bash
# SPDX-License-Identifier: MIT
#
# vm.sh - boot the conformance VM (qemu, software emulation) built by
# vm-build.sh.
#
# Sourced (by run.sh) it defines:
#   vm_boot SHARE LOGDIR SIW GUESTPORTS...
#       starts qemu in the background: the initramfs from build-vm/vm.env,
#       serial console to LOGDIR/console.log, qemu's own messages to
#       LOGDIR/qemu.log, SHARE as the 9p share "share" (the guest's /share),
#       user-mode networking (the guest is 10.0.2.15, the host 10.0.2.2) with
#       each GUESTPORT forwarded from a free 127.0.0.1 port (VM_FWD_<port> is
#       set to it).  SIW: stock | param | none (uiw.siw= on the kernel
#       command line); VM_SIWARGS, if set, are siw parameters (a=1,b=2).
#       qemu is launched with `exec`, so VM_PID is qemu's own PID.
#   vm_wait_ready SECS   0 when the guest printed UIW-VM-READY; 1 with
#                        VM_ERROR set otherwise (qemu died, error, timeout)
#   vm_wait_exit SECS    0 when qemu exited by itself within SECS
#   vm_kill              kill qemu (by its PID) if it still runs
#   vm_console_tail [N]  the last N lines of the console log
#
# Run directly, it boots one VM around a guest script, for debugging:
#   bash tests/conformance/vm.sh [--siw stock|param|none] [--siwargs a=1]
#                                [--timeout SECS] [--fwd GUESTPORT]... SCRIPT
# SCRIPT runs in the guest as /share/_vm/cmd.sh (busybox sh; /share/_vm has
# guest-lib.sh); the share is build-vm/results/_vm-debug/, kept afterwards.
# Without SCRIPT the guest powers off once ready (a boot test).
#
# Environment: UIW_VM_DIR (default build-vm), UIW_VM_MEM (MiB, default
# 2048), UIW_VM_SMP (default 2), UIW_VM_ACCEL (default tcg,thread=multi:
# /dev/kvm does not run a stock guest kernel on this machine kind).
#
# bash.

VM_HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
VM_TOP=$(cd "$VM_HERE/../.." && pwd)
VM_B=${UIW_VM_DIR:-$VM_TOP/build-vm}
VM_PID=
VM_ERROR=
VM_LOGDIR=

vm_port_free() { # PORT: nothing listens on 127.0.0.1/0.0.0.0:PORT
	! ss -Htln "sport = :$1" 2>/dev/null | grep -q .
}

vm_pick_port() { # a free TCP port in 20000..59999 that is not in $VM_USED
	local p n=0
	while :; do
		p=$((20000 + (RANDOM * 32768 + RANDOM) % 40000))
		case " $VM_USED " in *" $p "*) continue ;; esac
		if vm_port_free "$p"; then
			VM_USED="$VM_USED $p"
			echo "$p"
			return 0
		fi
		n=$((n + 1))
		[ "$n" -lt 200 ] || return 1
	done
}

vm_boot() {
	local share=$1 logdir=$2 siw=$3 net gp hp append
	shift 3
	# shellcheck disable=SC1091
	. "$VM_B/vm.env"
	VM_LOGDIR=$logdir
	mkdir -p "$logdir"
	append="console=ttyS0 quiet panic=-1 uiw.siw=$siw"
	[ -n "${VM_SIWARGS:-}" ] && append="$append uiw.siwargs=$VM_SIWARGS"
	for _ in 1 2 3; do
		VM_USED=
		net="user,id=n0,net=10.0.2.0/24,host=10.0.2.2"
		for gp in "$@"; do
			hp=$(vm_pick_port) || { VM_ERROR="no free host port"; return 1; }
			printf -v "VM_FWD_$gp" '%s' "$hp"
			export "VM_FWD_$gp"
			net="$net,hostfwd=tcp:127.0.0.1:$hp-10.0.2.15:$gp"
		done
		: >"$logdir/console.log"
		(
			exec qemu-system-x86_64 -nodefaults -no-user-config -display none -no-reboot \
				-accel "${UIW_VM_ACCEL:-tcg,thread=multi}" -cpu max \
				-smp "${UIW_VM_SMP:-2}" -m "${UIW_VM_MEM:-2048}" \
				-kernel "$UIW_VM_KERNEL" -initrd "$UIW_VM_INITRD" -append "$append" \
				-serial "file:$logdir/console.log" \
				-netdev "$net" -device virtio-net-pci,netdev=n0,romfile= \
				-fsdev "local,id=fs0,path=$share,security_model=none" \
				-device virtio-9p-pci,fsdev=fs0,mount_tag=share
		) </dev/null >"$logdir/qemu.log" 2>&1 &
		VM_PID=$!
		echo "$VM_PID" >"$logdir/qemu.pid"
		sleep 1
		if kill -0 "$VM_PID" 2>/dev/null; then
			return 0
		fi
		wait "$VM_PID" 2>/dev/null || true
		VM_PID=
		if grep -qi 'forward' "$logdir/qemu.log"; then
			continue # a port was taken in between: pick others
		fi
		break
	done
	VM_ERROR="qemu did not start: $(tail -n 3 "$logdir/qemu.log" | tr "\n" " " | sed "s/ *$//")"
	return 1
}

vm_alive() { [ -n "$VM_PID" ] && kill -0 "$VM_PID" 2>/dev/null; }

vm_wait_ready() { # SECS
	local end=$((SECONDS + $1)) log=$VM_LOGDIR/console.log
	while [ "$SECONDS" -lt "$end" ]; do
		if grep -q '^UIW-VM-READY' "$log" 2>/dev/null; then
			return 0
		fi
		if grep -q '^UIW-VM-ERROR' "$log" 2>/dev/null; then
			VM_ERROR="guest: $(grep -m1 '^UIW-VM-ERROR' "$log" | cut -c15-)"
			return 1
		fi
		if ! vm_alive; then
			VM_ERROR="qemu exited before the guest was ready: $(tail -n 2 "$VM_LOGDIR/qemu.log" | tr '\n' ' ')"
			return 1
		fi
		sleep 0.2
	done
	VM_ERROR="the guest was not ready after $1 s (see $log)"
	return 1
}

vm_wait_exit() { # SECS
	local end=$((SECONDS + $1))
	while vm_alive; do
		[ "$SECONDS" -lt "$end" ] || return 1
		sleep 0.2
	done
	[ -z "$VM_PID" ] || wait "$VM_PID" 2>/dev/null || true
	VM_PID=
	return 0
}

vm_kill() {
	if vm_alive; then
		kill "$VM_PID" 2>/dev/null || true
		vm_wait_exit 5 || kill -9 "$VM_PID" 2>/dev/null || true
	fi
	[ -z "$VM_PID" ] || wait "$VM_PID" 2>/dev/null || true
	VM_PID=
}

vm_console_tail() { tail -n "${1:-5}" "$VM_LOGDIR/console.log" 2>/dev/null; }

# ---- standalone use ------------------------------------------------------------

vm_main() {
	set -euo pipefail
	local siw=stock timeout=300 script="" share fwd=() t0
	while [ $# -gt 0 ]; do
		case $1 in
		--siw) siw=$2; shift 2 ;;
		--siwargs) export VM_SIWARGS=$2; shift 2 ;;
		--timeout) timeout=$2; shift 2 ;;
		--fwd) fwd+=("$2"); shift 2 ;;
		-h | --help) sed -n '2,/^# bash/p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; return 0 ;;
		*) script=$1; shift ;;
		esac
	done
	[ -f "$VM_B/vm.env" ] || { echo "vm.sh: no $VM_B/vm.env: run tests/conformance/vm-build.sh" >&2; return 1; }
	share=$VM_B/results/_vm-debug
	rm -rf "$share"
	mkdir -p "$share/_vm/sync"
	cp "$VM_HERE/guest/lib.sh" "$share/_vm/guest-lib.sh"
	[ -z "$script" ] || cp "$script" "$share/_vm/cmd.sh"
	trap vm_kill EXIT
	trap 'exit 130' INT TERM
	t0=$SECONDS
	vm_boot "$share" "$share/_vm" "$siw" "${fwd[@]}" || { echo "vm.sh: $VM_ERROR" >&2; return 1; }
	for p in "${fwd[@]}"; do
		v=VM_FWD_$p
		echo "vm.sh: 127.0.0.1:${!v} -> guest port $p"
	done
	if ! vm_wait_ready 180; then
		echo "vm.sh: $VM_ERROR" >&2
		return 1
	fi
	echo "vm.sh: ready after $((SECONDS - t0)) s (qemu PID $VM_PID); share $share"
	if ! vm_wait_exit "$timeout"; then
		echo "vm.sh: still running after $timeout s: killing qemu" >&2
		vm_kill
		return 1
	fi
	echo "vm.sh: powered off after $((SECONDS - t0)) s"
	vm_console_tail 3
	[ ! -f "$share/_vm/cmd.log" ] || { echo "--- cmd.log"; cat "$share/_vm/cmd.log"; }
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	vm_main "$@"
fi
