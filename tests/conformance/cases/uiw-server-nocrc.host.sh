# shellcheck shell=bash disable=SC2034,SC2154
# uiw-server-nocrc: uiw-server with uiw-ping -s --crc=off: no CRC either way.
# shellcheck disable=SC1091
. "$here/cases/uiw-server.host.sh"
desc="rping -c in the VM -> host uiw-ping -s --crc=off at 10.0.2.2, 2 connections of -V -C 10"
ROUNDS=2
UIW_OPTS=(--crc=off)
WANT_REQ=0
WANT_REP=0
