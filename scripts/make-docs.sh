#!/usr/bin/env bash
# API reference for the library modules given as arguments, with the
# toolchain's own docc (the SwiftPM docc plugin cannot be fetched here):
# swift build emits symbol graphs, docc convert turns each module's graphs
# into a static-hosting archive in .build/docs/<Module>. docc's coverage
# report must list no undocumented public symbol, else this fails.
set -euo pipefail
scratch=.build/docs-build
graphs="$scratch/symbol-graphs"
rm -rf .build/docs && mkdir -p "$graphs" .build/docs
# A module the scratch build finds up to date is not compiled again, so its
# graph is not written again: the graphs are kept beside the scratch build,
# and when one is missing the scratch build starts over.
build_graphs() {
  for module in "$@"; do  # swift build takes one --target at a time
    swift build --scratch-path "$scratch" --target "$module" \
      -Xswiftc -emit-symbol-graph -Xswiftc -emit-symbol-graph-dir -Xswiftc "$(pwd)/$graphs" \
      -Xswiftc -symbol-graph-minimum-access-level -Xswiftc public >/dev/null
  done
}
build_graphs "$@"
for module in "$@"; do
  if [ ! -f "$graphs/$module.symbols.json" ]; then
    rm -rf "$scratch" && mkdir -p "$graphs" && build_graphs "$@"
    break
  fi
done
failed=0
for module in "$@"; do
  input="$scratch/graphs-$module"
  rm -rf "$input" && mkdir -p "$input"
  cp "$graphs/$module.symbols.json" "$input/"
  cp "$graphs/$module"@*.symbols.json "$input/" 2>/dev/null || true
  docc convert --additional-symbol-graph-dir "$input" --fallback-display-name "$module" \
    --fallback-bundle-identifier "org.tasker.taskkey.$module" --fallback-bundle-version 1 \
    --output-path ".build/docs/$module.doccarchive" --transform-for-static-hosting \
    --hosting-base-path "$module" --experimental-documentation-coverage --coverage-summary-level detailed \
    >"$scratch/docc-$module.log" 2>&1
  # The coverage table: one line per symbol; a documented one has an abstract.
  undocumented="$(python3 - "$module" <<'PY'
import json, sys, glob
module = sys.argv[1]
missing = []
for path in glob.glob(f".build/docs-build/graphs-{module}/*.symbols.json"):
    graph = json.load(open(path))
    for symbol in graph["symbols"]:
        if symbol["accessLevel"] not in ("public", "open"):
            continue
        if symbol.get("docComment") is None and symbol["kind"]["identifier"] not in ("swift.extension",):
            # Members a protocol or the standard library documents are inherited.
            if "sourceOrigin" in symbol:
                continue
            # What the compiler writes (init(rawValue:), hashValue, Codable's
            # init(from:)) has no place in the source, so no "location".
            if "location" not in symbol:
                continue
            missing.append(".".join(symbol["pathComponents"]))
print("\n".join(sorted(set(missing))))
PY
)"
  count="$( (ls ".build/docs/$module.doccarchive/data/documentation/"*/ 2>/dev/null || true) | wc -l)"
  if [ -n "$undocumented" ]; then
    echo "docs: $module has public symbols without a doc comment:" >&2
    echo "$undocumented" >&2
    failed=1
  else
    echo "docs: $module: every public symbol documented; .build/docs/$module.doccarchive ($count pages)"
  fi
done
exit "$failed"
