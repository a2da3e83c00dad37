#!/bin/bash
# SPDX-License-Identifier: MIT
#
# vm-build.sh - build (or find cached) everything the conformance VM needs:
#
#   1. host packages: qemu, busybox, kmod, the kernel headers/kbuild/source,
#      rdma-core and its tools, perftest, tcpdump, tshark, NFS (apt-get
#      install of whatever is missing; apt-get update only when something
#      must come from the registry);
#   2. the guest kernel: `apt-get download` of the linux-image package,
#      unpacked under build-vm/kernel/;
#   3. siw's source: only drivers/infiniband/sw/siw (and the top Makefile)
#      out of linux-source's tarball, its version checked against the image;
#   4. siw.ko twice, out of tree against the headers: "stock", and "param"
#      (tests/conformance/siw-params.sh: the compile-time MPA knobs as module
#      parameters with the same defaults); each checked for the image's
#      vermagic;
#   5. the initramfs: busybox, kmod, iproute2, rdma-core (with the userspace
#      siw provider and its driver file), rping, perftest, tcpdump, the NFS
#      tools, the libraries ldd lists, the RDMA/NFS/virtio/9p modules with
#      their dependencies, both siw.ko, and tests/conformance/guest/init.
#
# Every step is keyed by its inputs (package versions, file hashes, the
# step's own code); a step whose key matches its last build prints a
# "cached:" line and does nothing.  Outputs live under build-vm/ (override
# with UIW_VM_DIR); build-vm/vm.env names them for vm.sh.
#
# Kernel choice: linux-image-6.1.0-56-amd64 6.1.192-2 (the version
# the project's siw VM notes were verified with) when the registry or the
# machine has it; otherwise the candidate of linux-image-amd64's dependency.
# The headers must be at the image's version; kbuild and source at the same
# upstream release, the image's Debian revision or a later one (the archive
# keeps only the newest: see kernel_plan).  The versions used are printed
# ("siw built with: ...").
# UIW_VM_KABI / UIW_VM_KVER override the pin.
#
# Exit status: 0 built or cached; 2 the environment cannot do it (not root
# and packages missing, a package cannot be installed or downloaded): the
# reason is the last line on stderr, prefixed "vm-build: cannot:"; 1 any
# other failure.
#
# bash; needs root for apt-get.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
B=${UIW_VM_DIR:-$top/build-vm}
PIN_ABI=${UIW_VM_KABI:-6.1.0-56-amd64}
PIN_VER=${UIW_VM_KVER:-6.1.192-2}
export LC_ALL=C
export DEBIAN_FRONTEND=noninteractive
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

HOST_PKGS=(qemu-system-x86 busybox-static kmod iproute2 rdma-core ibverbs-providers
	rdmacm-utils ibverbs-utils perftest tcpdump tshark libibverbs-dev librdmacm-dev
	nfs-kernel-server nfs-common rpcbind cpio gzip xz-utils make gcc binutils util-linux fio)

# versions the project's siw VM notes were verified with: installed when a
# package is missing and the registry has a matching version (else its
# candidate); a package already installed is left as it is
declare -A PKG_PIN=([rdma-core]=44.0-2 [ibverbs-providers]=44.0-2 [rdmacm-utils]=44.0-2
	[ibverbs-utils]=44.0-2 [libibverbs-dev]=44.0-2 [librdmacm-dev]=44.0-2
	[perftest]='4.5+*' [tshark]='4.0.17-*')

say() { echo "vm-build: $*"; }
cached() { echo "vm-build: cached: $*"; }
die() { echo "vm-build: error: $*" >&2; exit 1; }
cannot() { echo "vm-build: cannot: $*" >&2; exit 2; }

# key WORDS...: a short hash of its arguments
key() { printf '%s\n' "$@" | sha256sum | cut -c1-16; }
# fn_hash NAME...: hash of these functions' code, so a changed recipe rebuilds
fn_hash() { declare -f "$@" | sha256sum | cut -c1-16; }
file_hash() { sha256sum "$@" | awk '{print $1}' | sha256sum | cut -c1-16; }
stamp_ok() { [ -f "$1/.key" ] && [ "$(cat "$1/.key")" = "$2" ]; }
stamp_set() { echo "$2" >"$1/.key"; }

installed_version() { dpkg-query -W -f='${Status} ${Version}\n' "$1" 2>/dev/null |
	awk '$3 == "installed" {print $4}'; }
is_installed() { [ -n "$(installed_version "$1")" ]; }
# available PKG VERSION: the registry (or the machine) has that version
available() {
	[ "$(installed_version "$1")" = "$2" ] && return 0
	apt-cache madison "$1" 2>/dev/null | awk -F'|' '{gsub(/ /, "", $2); print $2}' | grep -qxF "$2"
}
candidate() { apt-cache policy "$1" 2>/dev/null | awk '$1 == "Candidate:" {print $2}'; }

APT_UPDATED=0
apt_update_once() {
	[ "$APT_UPDATED" = 1 ] && return 0
	[ "$(id -u)" = 0 ] || cannot "not root: cannot run apt-get update"
	say "apt-get update"
	apt-get update -qq >"$B/logs/apt-update.log" 2>&1 ||
		cannot "apt-get update failed (see $B/logs/apt-update.log)"
	APT_UPDATED=1
}

# ---- 1. kernel choice and host packages ---------------------------------

# the kernel series of an ABI name: 6.1.0-56-amd64 -> 6.1
series_of() { echo "$1" | sed -n 's/^\([0-9]*\.[0-9]*\)\..*/\1/p'; }

# The guest kernel is linux-image-ABI at VER.  Building siw needs, on the
# host, linux-headers-ABI at exactly VER (its -common package is pinned to it
# by the archive), and linux-kbuild-SERIES and linux-source-SERIES of the same
# upstream release (6.1.192): the archive moves those on by Debian revision
# (6.1.192-2 -> 6.1.192-3) and drops the old ones, and the headers only ask
# for kbuild >= VER.  So each of those two is taken at VER where the
# registry still has it, else at the newest revision of the same upstream
# release that is not older than VER; extract_siw checks the source's own
# Makefile against the image, and build_siw checks siw.ko's vermagic.
kernel_exact_pkgs() { echo "linux-headers-$1"; } # ABI
kernel_rel_pkgs() {                              # ABI: same upstream release
	local s
	s=$(series_of "$1")
	echo "linux-kbuild-$s linux-source-$s"
}

# upstream VER: 6.1.192-2 -> 6.1.192
upstream_of() { echo "${1%%-*}"; }

# rel_ok PKG VER V: V (a version of PKG) may stand in for VER
rel_ok() {
	[ "$(upstream_of "$3")" = "$(upstream_of "$2")" ] && dpkg --compare-versions "$3" ge "$2"
}

# rel_version PKG VER: the version of PKG to use with kernel VER (installed
# if it qualifies, else VER from the registry, else the newest qualifying
# registry version); nothing when none qualifies
rel_version() {
	local iv v
	iv=$(installed_version "$1")
	if [ -n "$iv" ] && rel_ok "$1" "$2" "$iv"; then
		echo "$iv"
		return 0
	fi
	if available "$1" "$2"; then
		echo "$2"
		return 0
	fi
	for v in $(apt-cache madison "$1" 2>/dev/null | awk -F'|' '{gsub(/ /, "", $2); print $2}' |
		sort -r -V); do
		if rel_ok "$1" "$2" "$v"; then
			echo "$v"
			return 0
		fi
	done
	return 1
}

# kernel_plan ABI VER: "PKG=VERSION" for every host package the siw build
# needs, or fails naming the package that has no usable version
kernel_plan() {
	local p v
	for p in $(kernel_exact_pkgs "$1"); do
		available "$p" "$2" || { echo "$p: no version $2" >&2; return 1; }
		echo "$p=$2"
	done
	for p in $(kernel_rel_pkgs "$1"); do
		v=$(rel_version "$p" "$2") ||
			{ echo "$p: no version of upstream $(upstream_of "$2") at or above $2" >&2; return 1; }
		echo "$p=$v"
	done
}

# everything for (ABI, VER) is already here: the host packages installed at
# usable versions and the image .deb downloaded
kernel_local() {
	local p iv
	for p in $(kernel_exact_pkgs "$1"); do
		[ "$(installed_version "$p")" = "$2" ] || return 1
	done
	for p in $(kernel_rel_pkgs "$1"); do
		iv=$(installed_version "$p")
		[ -n "$iv" ] && rel_ok "$p" "$2" "$iv" || return 1
	done
	[ -f "$B/debs/linux-image-$1_$2.deb" ]
}

kernel_in_registry() {
	available "linux-image-$1" "$2" && kernel_plan "$1" "$2" >/dev/null
}

choose_kernel() {
	local abi ver why
	# 1. what the last run chose, or the pin, when nothing needs the registry
	if [ -f "$B/kernel.choice" ]; then
		read -r abi ver <"$B/kernel.choice"
		if kernel_local "$abi" "$ver"; then
			KABI=$abi KVER=$ver
			return 0
		fi
	fi
	if kernel_local "$PIN_ABI" "$PIN_VER"; then
		KABI=$PIN_ABI KVER=$PIN_VER
		return 0
	fi
	apt_update_once
	# 2. the pin, when the registry has the image and usable build packages
	if kernel_in_registry "$PIN_ABI" "$PIN_VER"; then
		KABI=$PIN_ABI KVER=$PIN_VER
		return 0
	fi
	say "pinned kernel $PIN_ABI $PIN_VER not usable: $(kernel_plan "$PIN_ABI" "$PIN_VER" 2>&1 >/dev/null |
		tr '\n' ' ')"
	# 3. the candidate
	abi=$(apt-cache depends linux-image-amd64 2>/dev/null |
		sed -n 's/^ *Depends: linux-image-\([0-9][^ ]*-amd64\)$/\1/p' | head -n1)
	[ -n "$abi" ] || cannot "no linux-image-amd64 candidate in the registry"
	ver=$(candidate "linux-image-$abi")
	say "candidate: $abi $ver"
	why=$(kernel_plan "$abi" "$ver" 2>&1 >/dev/null) ||
		cannot "kernel $abi $ver: $why (image, headers and source disagree)"
	KABI=$abi KVER=$ver
}

# pinned_version PKG: the newest registry version matching PKG_PIN[PKG]
pinned_version() {
	local pat=${PKG_PIN[$1]:-} v
	[ -n "$pat" ] || return 1
	for v in $(apt-cache madison "$1" 2>/dev/null | awk -F'|' '{gsub(/ /, "", $2); print $2}'); do
		# shellcheck disable=SC2254
		case $v in $pat) echo "$v"; return 0 ;; esac
	done
	return 1
}

install_host_packages() {
	local want=() p kp v
	for p in "${HOST_PKGS[@]}"; do
		is_installed "$p" && continue
		apt_update_once
		if v=$(pinned_version "$p"); then
			want+=("$p=$v")
		else
			[ -z "${PKG_PIN[$p]:-}" ] || say "$p: no version ${PKG_PIN[$p]} in the registry: taking the candidate"
			want+=("$p")
		fi
	done
	local plan
	plan=$(kernel_plan "$KABI" "$KVER") || cannot "kernel $KABI $KVER: no usable build packages"
	for kp in $plan; do
		[ "$(installed_version "${kp%%=*}")" = "${kp#*=}" ] || want+=("$kp")
	done
	if [ "${#want[@]}" = 0 ]; then
		cached "host packages (all installed)"
		return 0
	fi
	[ "$(id -u)" = 0 ] || cannot "not root: cannot install ${want[*]}"
	apt_update_once
	say "apt-get install ${want[*]}"
	if ! apt-get install -y -q --no-install-recommends --allow-downgrades "${want[@]}" \
		>"$B/logs/apt-install.log" 2>&1; then
		tail -n 5 "$B/logs/apt-install.log" >&2 || true
		cannot "apt-get install failed: ${want[*]} (see $B/logs/apt-install.log)"
	fi
}

# ---- 2. guest kernel -------------------------------------------------------

download_image() {
	local deb=$B/debs/linux-image-${KABI}_$KVER.deb tmp
	if [ -f "$deb" ]; then
		cached "linux-image-$KABI $KVER (.deb)"
		return 0
	fi
	apt_update_once
	tmp=$(mktemp -d "$B/debs/dl.XXXXXX")
	chmod 755 "$tmp"
	say "apt-get download linux-image-$KABI=$KVER"
	if ! (cd "$tmp" && apt-get download -q "linux-image-$KABI=$KVER") \
		>"$B/logs/apt-download.log" 2>&1; then
		rm -rf "$tmp"
		cannot "apt-get download linux-image-$KABI=$KVER failed (see $B/logs/apt-download.log)"
	fi
	mv "$tmp"/linux-image-"$KABI"_*.deb "$deb"
	rm -rf "$tmp"
}

unpack_image() {
	local out=$B/kernel/$KABI k
	k=$(key "$KABI" "$KVER" "$(file_hash "$B/debs/linux-image-${KABI}_$KVER.deb")" "$(fn_hash unpack_image)")
	if stamp_ok "$out" "$k" && [ -f "$out/root/boot/vmlinuz-$KABI" ]; then
		cached "guest kernel $KABI unpacked"
		return 0
	fi
	say "unpacking linux-image-$KABI"
	rm -rf "$out"
	mkdir -p "$out"
	dpkg-deb -x "$B/debs/linux-image-${KABI}_$KVER.deb" "$out/root"
	[ -f "$out/root/boot/vmlinuz-$KABI" ] || die "no boot/vmlinuz-$KABI in the image package"
	[ -d "$out/root/lib/modules/$KABI" ] || die "no lib/modules/$KABI in the image package"
	depmod -b "$out/root" "$KABI"
	stamp_set "$out" "$k"
}

# ---- 3. siw source ---------------------------------------------------------

extract_siw() {
	local s tarball out k mk upstream
	s=$(series_of "$KABI")
	tarball=/usr/src/linux-source-$s.tar.xz
	[ -f "$tarball" ] || die "$tarball missing (linux-source-$s not installed?)"
	out=$B/siw-src/$KVER
	k=$(key "$KVER" "$(stat -c '%s %Y' "$tarball")" "$(fn_hash extract_siw)")
	if stamp_ok "$out" "$k" && [ -f "$out/siw/siw_main.c" ]; then
		cached "siw source $KVER"
		return 0
	fi
	say "extracting drivers/infiniband/sw/siw from $tarball"
	rm -rf "$out"
	mkdir -p "$out/x"
	tar -xJf "$tarball" -C "$out/x" --wildcards \
		"linux-source-$s/drivers/infiniband/sw/siw/*" "linux-source-$s/Makefile"
	mv "$out/x/linux-source-$s/drivers/infiniband/sw/siw" "$out/siw"
	mv "$out/x/linux-source-$s/Makefile" "$out/Makefile.top"
	rm -rf "$out/x"
	mk=$(awk -F' = ' '$1 == "VERSION" {v = $2} $1 == "PATCHLEVEL" {p = $2}
		$1 == "SUBLEVEL" {s = $2} END {print v "." p "." s}' "$out/Makefile.top")
	upstream=${KVER%%-*}
	[ "$mk" = "$upstream" ] ||
		die "linux-source says $mk, the image package is $KVER ($upstream)"
	stamp_set "$out" "$k"
}

# ---- 4. siw.ko -------------------------------------------------------------

build_siw() { # FLAVOR: stock | param
	local flavor=$1 out=$B/siw/$1 k hdr=/usr/src/linux-headers-$KABI extra="" want got
	[ -d "$hdr" ] || die "$hdr missing"
	[ "$flavor" = param ] && extra=$(file_hash "$here/siw-params.sh")
	k=$(key "$flavor" "$KABI" "$KVER" "$(installed_version "linux-headers-$KABI")" \
		"$(gcc --version | head -n1)" "$(cat "$B/siw-src/$KVER/.key")" "$extra" \
		"$(fn_hash build_siw)")
	if stamp_ok "$out" "$k" && [ -f "$out/siw.ko" ]; then
		cached "siw.ko ($flavor)"
		return 0
	fi
	say "building siw.ko ($flavor) against $hdr"
	rm -rf "$out"
	mkdir -p "$out"
	cp -r "$B/siw-src/$KVER/siw" "$out/src"
	if [ "$flavor" = param ]; then
		sh "$here/siw-params.sh" "$out/src"
	fi
	if ! make -C "$hdr" M="$out/src" CONFIG_RDMA_SIW=m -j"$(nproc)" modules \
		>"$out/build.log" 2>&1; then
		tail -n 20 "$out/build.log" >&2
		die "siw.ko ($flavor) build failed (see $out/build.log)"
	fi
	strip --strip-debug -o "$out/siw.ko" "$out/src/siw.ko"
	want=$(modinfo -F vermagic "$(find "$B/kernel/$KABI/root/lib/modules/$KABI" -name ib_core.ko | head -n1)")
	got=$(modinfo -F vermagic "$out/siw.ko")
	[ "$want" = "$got" ] || die "siw.ko vermagic '$got' differs from the image's '$want'"
	if [ "$flavor" = param ]; then
		modinfo -F parm "$out/siw.ko" | grep -q '^mpa_crc_required:' ||
			die "param build has no mpa_crc_required parameter"
	fi
	stamp_set "$out" "$k"
}

# ---- 5. initramfs ------------------------------------------------------------

# what the guest gets: programs (required, then optional), dlopen'd libraries
GUEST_BINS=(busybox kmod ip rdma ss rping ucmatose udaddy ibv_devices ibv_devinfo
	ibv_rc_pingpong ib_write_bw ib_write_lat ib_read_bw ib_read_lat ib_send_bw
	ib_send_lat tcpdump)
GUEST_OPT_BINS=(rpc.nfsd exportfs rpc.mountd rpcbind mount.nfs rpc.statd sm-notify
	iwpmd rdma-ndd fio)
# modules loaded at boot (in this order), then modules only copied
BOOT_MODS=(virtio_pci virtio_net 9pnet_virtio 9p crc32c_generic crc32c_intel libcrc32c
	ib_core ib_uverbs iw_cm ib_cm rdma_cm rdma_ucm)
EXTRA_MODS=(rpcrdma nfsd nfs nfsv3 nfsv4 af_packet)

guest_files() { # prints the host paths of every file the guest needs
	local n p f
	for n in "${GUEST_BINS[@]}"; do
		p=$(command -v "$n") || die "guest program $n not found on the host"
		echo "$p"
	done
	for n in "${GUEST_OPT_BINS[@]}"; do
		command -v "$n" || true
	done
	dpkg -L ibverbs-providers | grep -E '/libsiw-rdmav[0-9]+\.so$'
	dpkg -L ibverbs-providers | grep -E '^/etc/libibverbs\.d/siw\.driver$'
	for f in /usr/lib/x86_64-linux-gnu/libgcc_s.so.1 /etc/netconfig; do
		[ -e "$f" ] && echo "$f"
	done
}

elf_libs() { # FILE...: the shared libraries (and loader) they need, per ldd
	local f
	for f in "$@"; do
		file_is_elf "$f" || continue
		ldd "$f" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}'
	done | sort -u
}
file_is_elf() { [ "$(head -c 4 "$1" | od -An -c | tr -d ' ')" = '177ELF' ]; }

# put HOST_PATH at the same path under ROOT (symlinks followed)
put() {
	local root=$1 p=$2
	mkdir -p "$root$(dirname "$p")"
	cp -L "$p" "$root$p"
}

guest_modules() { # module files (full paths in the unpacked image) to copy
	local kroot=$B/kernel/$KABI/root m deps
	deps=$(modinfo -F depends "$B/siw/stock/siw.ko" | tr ',' ' ')
	for m in "${BOOT_MODS[@]}" "${EXTRA_MODS[@]}" $deps; do
		modprobe -d "$kroot" -S "$KABI" --show-depends "$m" 2>/dev/null |
			awk '$1 == "insmod" {print $2}' || true
	done | sort -u
}

build_initramfs() {
	local out=$B/initramfs root files libs mods k kroot=$B/kernel/$KABI/root f m rel
	out=$B/initramfs
	root=$out/root
	local txt
	txt=$(guest_files)
	mapfile -t files <<<"$txt"
	txt=$(elf_libs "${files[@]}")
	mapfile -t libs <<<"$txt"
	txt=$(guest_modules)
	mapfile -t mods <<<"$txt"
	[ "${#mods[@]}" -gt 20 ] || die "only ${#mods[@]} modules found for the guest"
	k=$(key "$KABI" "$KVER" "$(cat "$B/siw/stock/.key" "$B/siw/param/.key")" \
		"$(for f in "${files[@]}" "${libs[@]}"; do stat -L -c '%n %s %Y' "$f"; done)" \
		"${mods[@]}" "$(file_hash "$here/guest/init")" \
		"$(fn_hash build_initramfs guest_files elf_libs put guest_modules)" \
		"${BOOT_MODS[*]}" "$(busybox --list-full | sha256sum)")
	if stamp_ok "$out" "$k" && [ -f "$out/initramfs.cpio.gz" ]; then
		cached "initramfs (${#files[@]} files, ${#libs[@]} libraries, ${#mods[@]} modules)"
		return 0
	fi
	say "building the initramfs (${#files[@]} files, ${#libs[@]} libraries, ${#mods[@]} modules)"
	rm -rf "$out"
	mkdir -p "$root"/usr/bin "$root"/usr/sbin "$root"/usr/lib "$root"/usr/lib64
	for d in bin sbin lib lib64; do ln -s "usr/$d" "$root/$d"; done
	mkdir -p "$root"/{dev,proc,sys,tmp,run,share,root,export,etc/uiw,var/lib/nfs,usr/lib/uiw}
	ln -s ../run "$root/var/run"
	for f in "${files[@]}" "${libs[@]}"; do put "$root" "$f"; done
	# kmod's names
	for n in modprobe insmod rmmod lsmod depmod modinfo; do
		ln -sf ../bin/kmod "$root/usr/sbin/$n"
	done
	# busybox applets wherever no real program is
	busybox --list-full | while read -r a; do
		[ -e "$root/$a" ] || [ -L "$root/$a" ] || ln -s /usr/bin/busybox "$root/$a"
	done
	# modules: the image's, at their paths, plus both siw.ko
	for m in "${mods[@]}"; do
		rel=${m#"$kroot"}
		mkdir -p "$root$(dirname "$rel")"
		cp "$m" "$root$rel"
	done
	for f in modules.order modules.builtin modules.builtin.modinfo; do
		cp "$kroot/lib/modules/$KABI/$f" "$root/lib/modules/$KABI/$f"
	done
	mkdir -p "$root/lib/modules/$KABI/extra"
	cp "$B/siw/stock/siw.ko" "$root/lib/modules/$KABI/extra/siw.ko"
	cp "$B/siw/param/siw.ko" "$root/usr/lib/uiw/siw-param.ko"
	depmod -b "$root" "$KABI"
	printf '%s\n' "${BOOT_MODS[@]}" >"$root/etc/uiw/modules.boot"
	printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' \
		>"$root/etc/passwd"
	printf 'root:x:0:\nnogroup:x:65534:\n' >"$root/etc/group"
	printf 'passwd: files\ngroup: files\nhosts: files\n' >"$root/etc/nsswitch.conf"
	printf '127.0.0.1 localhost\n10.0.2.15 uiwvm\n10.0.2.2 host\n' >"$root/etc/hosts"
	cat >"$root/etc/uiw/build.env" <<EOF
UIW_VM_KABI=$KABI
UIW_VM_KVER=$KVER
UIW_VM_SIW_STOCK=/lib/modules/$KABI/extra/siw.ko
UIW_VM_SIW_PARAM=/usr/lib/uiw/siw-param.ko
EOF
	install -m 755 "$here/guest/init" "$root/init"
	# the guest must run what it got: check every program's libraries resolve
	for f in "${files[@]}"; do
		file_is_elf "$f" || continue
		if chroot "$root" /lib64/ld-linux-x86-64.so.2 --list "$f" 2>&1 | grep -q 'not found'; then
			die "in the initramfs, $f misses a library"
		fi
	done
	(cd "$root" && find . -print0 | sort -z | cpio --null -o -H newc --quiet) |
		gzip -1 >"$out/initramfs.cpio.gz.tmp"
	mv "$out/initramfs.cpio.gz.tmp" "$out/initramfs.cpio.gz"
	stamp_set "$out" "$k"
	say "initramfs: $(du -h "$out/initramfs.cpio.gz" | cut -f1)"
}

# ---- main --------------------------------------------------------------------

main() {
	local t0=$SECONDS
	mkdir -p "$B/logs" "$B/debs"
	exec 9>"$B/.build.lock"
	flock 9
	choose_kernel
	say "guest kernel: linux-image-$KABI $KVER"
	install_host_packages
	command -v qemu-system-x86_64 >/dev/null || cannot "qemu-system-x86_64 not installed"
	say "host: $(for p in qemu-system-x86 rdma-core perftest tshark tcpdump busybox-static; do
		printf '%s %s, ' "$p" "$(installed_version "$p")"; done | sed 's/, $//')"
	say "siw built with: $(for p in $(kernel_exact_pkgs "$KABI") $(kernel_rel_pkgs "$KABI"); do
		printf '%s %s, ' "$p" "$(installed_version "$p")"; done | sed 's/, $//')"
	download_image
	echo "$KABI $KVER" >"$B/kernel.choice"
	unpack_image
	extract_siw
	build_siw stock
	build_siw param
	build_initramfs
	cat >"$B/vm.env.tmp" <<EOF
UIW_VM_KABI=$KABI
UIW_VM_KVER=$KVER
UIW_VM_KERNEL=$B/kernel/$KABI/root/boot/vmlinuz-$KABI
UIW_VM_INITRD=$B/initramfs/initramfs.cpio.gz
EOF
	mv "$B/vm.env.tmp" "$B/vm.env"
	say "done in $((SECONDS - t0)) s"
}

main "$@"
