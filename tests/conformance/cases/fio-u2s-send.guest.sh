# fio-u2s-send (guest): fio-siw-send.guest.sh with only fio's server (siw,
# shellcheck shell=sh disable=SC1091,SC2034
# --iodepth=1) on 10.0.2.15:7544, for the host's uiw-run fio client.
MODE=server
PORT=7544
. /share/_vm/cases/fio-siw-send.guest.sh
