#!/bin/sh
# The preload carries only what runs in the application: no function of
# the analysis, the TUI, the merge or the store's readers is linked into
# any collscope-*.so (docs/design.md, "The layers"), and it exports only
# wrapped functions and the plugin structs, never a cs_ function.
. "$srcdir/tests/lib.sh"
command -v nm >/dev/null 2>&1 || skip "nm (binutils) not installed"
n=0
for so in "$COLLSCOPE_LIBDIR"/collscope-*.so; do
  [ -f "$so" ] || continue
  n=$((n + 1))
  name=$(basename "$so")
  nm "$so" > "$T/syms" 2>/dev/null || fail "nm $name"
  # Code of the upper layers, by the prefixes their files give their names.
  bad=$(grep -E ' [TtDdBbRr] (cs_an_|cs__an_|cs_analysis_|cs_report_|cs_diff_|cs_gates?_|cs_tui_|tui_|cs_store_analysis|cs_awriter|cs_store_merge|cs_store_create_from|cs_store_finish|cs_store_bulk|cs_store_group|cs_store_procs|cs_store_spans|cs_span_next|cs_store_rank_busy|cs_store_gpu_overlap|cs_store_open_scratch)' "$T/syms" | head -n 5)
  [ -z "$bad" ] || fail "$name carries code of the analysis, TUI or store readers: $bad"
  # Exported: only the wrapped API and plugin entry points.
  exp=$(nm -D --defined-only "$so" | awk '{print $3}' | grep -E '^_?cs_|^tui_' | head -n 5)
  [ -z "$exp" ] || fail "$name exports collscope internals: $exp"
  echo "ok: $name: $(wc -l < "$T/syms") symbols, none of the upper layers; exports $(nm -D --defined-only "$so" | wc -l) symbols"
done
[ "$n" -gt 0 ] || fail "no preload library in $COLLSCOPE_LIBDIR"
pass
