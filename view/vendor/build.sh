#!/usr/bin/env bash
# Rebuilds the viewer's vendored bundle from the npm registry at the
# versions pinned in package-lock.json:
#   three-uplot.min.js   three.js (+ OrbitControls) and uPlot, one classic script
#   uPlot.min.css        uPlot's stylesheet
#   LICENSES.txt         their licences
# `build.sh --check` rebuilds into a temporary folder and fails when the
# committed files differ (CI's drift check).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
check=false
[ "${1:-}" = "--check" ] && check=true
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp "$here/package.json" "$here/package-lock.json" "$here/entry.js" "$work/"
(cd "$work" && npm ci --no-audit --no-fund --silent)
out="$work/out"
mkdir -p "$out"
"$work/node_modules/.bin/esbuild" "$work/entry.js" --bundle --minify \
  --format=iife --target=es2020 --legal-comments=none \
  --log-level=warning --outfile="$out/three-uplot.min.js"
cp "$work/node_modules/uplot/dist/uPlot.min.css" "$out/uPlot.min.css"
{
  for p in three uplot; do
    v="$(node -p "require('$work/node_modules/$p/package.json').version")"
    echo "==== $p $v (npm), licence:"
    cat "$work/node_modules/$p/LICENSE"
    echo
  done
} >"$out/LICENSES.txt"
if $check; then
  status=0
  for f in three-uplot.min.js uPlot.min.css LICENSES.txt; do
    if ! cmp -s "$out/$f" "$here/$f"; then
      echo "view/vendor/$f differs from what build.sh makes from package-lock.json: run view/vendor/build.sh and commit" >&2
      status=1
    fi
  done
  exit $status
fi
cp "$out"/* "$here/"
echo "view/vendor: $(wc -c <"$here/three-uplot.min.js") bytes of three-uplot.min.js"
