# shellcheck shell=bash disable=SC2034,SC2154
# uiw-client-nocrc: uiw-client with --crc=off, three connections in a row.
# Without CRC siw's first-FPDU race showed in 3 of 8 runs (siw-vm.md): three
# rounds give uiw-ping's first_fpdu_delay_ms defence a real chance to fail.
# shellcheck disable=SC1091
. "$here/cases/uiw-client.host.sh"
desc="host uiw-ping -c --crc=off -> rping -s in the VM via hostfwd, 3 connections of -V -C 10"
ports="7202"
PORT=7202
ROUNDS=3
UIW_OPTS=(--crc=off)
WANT_CRC=0
