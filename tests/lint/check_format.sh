#!/usr/bin/env bash
# Our C sources follow the root .clang-format. Fails listing the files that
# drift; `clang-format -i FILE` fixes them. Skips (77) without clang-format,
# except under CI=true where install-deps.sh provides it.
set -euo pipefail
cd "${EP_SOURCE_DIR:?}"
if ! command -v clang-format >/dev/null; then
  [ "${CI:-}" = true ] && { echo "clang-format missing under CI" >&2; exit 1; }
  echo "SKIP: clang-format not installed"; exit 77
fi
mapfile -t files < <(git ls-files 'user/*.[ch]' 'bpf/*.[ch]' 'tests/unit/*.[ch]' \
  'tests/targets/*.[ch]' 'tools/*.[ch]' 2>/dev/null || true)
if [ ${#files[@]} -eq 0 ]; then
  mapfile -t files < <(find user bpf tests/unit tests/targets tools -name '*.[ch]')
fi
bad=0
for f in "${files[@]}"; do
  if ! clang-format --dry-run --Werror "$f" >/dev/null 2>&1; then
    echo "not clang-formatted: $f" >&2
    bad=1
  fi
done
[ $bad -eq 0 ] && echo "${#files[@]} files clang-formatted"
exit $bad
