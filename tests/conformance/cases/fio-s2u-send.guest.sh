# fio-s2u-send (guest): fio-siw-send.guest.sh with only fio's client (siw,
# shellcheck shell=sh disable=SC1091,SC2034
# --iodepth=16) to the host's uiw-run fio server at 10.0.2.2.
MODE=client
. /share/_vm/cases/fio-siw-send.guest.sh
