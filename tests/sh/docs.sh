#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The README and the docs index stay true to the tree (issue 17: the README
# called rpcrdma/ "planned", missed four documents in its index and said
# install puts in two tools where it put four):
#   - every document in docs/ (docs/*.md) is linked from README.md;
#   - every link from README.md to a file of the repository names one that
#     exists;
#   - every top-level folder of the repository is in README's layout table;
#   - every tool in the build's bin/ has its page docs/TOOL.md (its man
#     page source) and is named in README.md;
#   - README.md says nothing is "planned".
# Exit 0 pass, 1 fail.  Env: UIW_BIN (build/bin).

set -u
ME=docs
# shellcheck source=tests/sh/common.inc
. "$(dirname "$0")/common.inc"

TOP=$(cd "$(dirname "$0")/../.." && pwd)
R=$TOP/README.md
BIN=${UIW_BIN:-build/bin}

n=0
for d in "$TOP"/docs/*.md; do
	b=$(basename "$d")
	n=$((n + 1))
	grep -q "(docs/$b)" "$R" || fail "docs/$b is not linked from README.md"
done
[ "$FAILS" = 0 ] && pass "all $n documents of docs/ are linked from README.md"

F0=$FAILS
# (path) links, not URLs or anchors
for l in $(grep -o '](\([^)#:]*\))' "$R" | sed 's/^](\(.*\))$/\1/' | sort -u); do
	[ -e "$TOP/$l" ] || fail "README.md links to $l, which does not exist"
done
[ "$FAILS" = "$F0" ] && pass "every README.md link names a file of the repository"

F0=$FAILS
for d in "$TOP"/*/; do
	b=$(basename "$d")
	case $b in build | build-*) continue ;; esac
	# only folders git knows (the checkout, not build output)
	git -C "$TOP" ls-files --error-unmatch "$b" >/dev/null 2>&1 || continue
	grep -q "^| [^|]*\`$b/\`" "$R" || fail "top-level folder $b/ is not in README.md's layout table"
done
[ "$FAILS" = "$F0" ] && pass "every top-level folder is in README.md's layout table"

F0=$FAILS
nt=0
for t in "$BIN"/uiw-*; do
	[ -x "$t" ] || continue
	b=$(basename "$t")
	nt=$((nt + 1))
	[ -f "$TOP/docs/$b.md" ] || fail "tool $b has no docs/$b.md"
	grep -q "$b" "$R" || fail "tool $b is not named in README.md"
done
[ "$nt" -ge 5 ] || fail "only $nt tools in $BIN (not built?)"
[ "$FAILS" = "$F0" ] && pass "all $nt tools have a page in docs/ and are named in README.md"

if grep -n -i 'planned' "$R" >"$TMP/planned"; then
	fail "README.md says 'planned': $(tr '\n' ' ' <"$TMP/planned")"
else
	pass "README.md says nothing is 'planned'"
fi
end_checks
