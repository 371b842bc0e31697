#!/usr/bin/env bash
# Every COLLIE_* environment variable the code reads (getenv / collie_env_* in src/, bench/ and
# tools/, os.environ in python/) must be in the list of known names in src/base/env.c —
# otherwise collie_init warns "unknown variable" about a variable collie itself reads.
# usage: check_env_names.sh REPO_ROOT
set -u
root=$1
used=$( { grep -rhoE '(getenv|collie_env_[a-z_]+)\("COLLIE_[A-Z0-9_]+"' "$root/src" "$root/tools" "$root/bench"
          grep -rhoE "environ(\.get)?[[(]['\"]COLLIE_[A-Z0-9_]+" "$root/python" 2>/dev/null
        } | grep -oE 'COLLIE_[A-Z0-9_]+' | sort -u)
missing=0
for name in $used; do
  grep -q "\"$name\"" "$root/src/base/env.c" || { echo "not in src/base/env.c's known list: $name"; missing=1; }
done
echo "$(echo "$used" | wc -w) COLLIE_* variables read by the code, all known: $([ $missing = 0 ] && echo yes || echo no)"
exit $missing
