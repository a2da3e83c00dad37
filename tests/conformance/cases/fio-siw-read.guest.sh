# fio-siw-read (guest): fio-siw-send.guest.sh with --verb=read, a control: 2 MiB
# shellcheck shell=sh disable=SC1091,SC2034
# in 4 KiB blocks at depth 16 with --verify=md5; both jobs must end, err= 0.
VERB="read"
PORT=7543
. /share/_vm/cases/fio-siw-send.guest.sh
