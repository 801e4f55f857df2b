#!/bin/sh
# collscope ingest of many logs: worker processes convert them while the
# main process copies the first rank file whole and appends the others.
# Whatever path a rank takes (converted by a worker or by the main process,
# copied or merged row by row), the trace holds exactly the rows of its
# rank files: same span ids, same completions, pointing at their own spans.
. "$srcdir/tests/lib.sh"
gen=$B/bench/log_gen
[ -x "$gen" ] || skip "bench/log_gen not built"
ranks=5
per=20000
"$gen" -o "$T/a" -r $ranks -n $per > /dev/null || fail "log_gen failed"
want=$("$gen" --stat "$T"/a/logs/*.cslog | sed -n 's/^spans: //p')
[ "$want" -gt $((ranks * per)) ] || fail "log_gen wrote $want spans"

"$COLLSCOPE" ingest "$T/a" > "$T/a.out" 2>&1 || fail "ingest failed: $(cat "$T/a.out")"
db=$T/a/trace.db
expect_eq "spans in the trace" "$(q "$db" "SELECT count(*) FROM span")" "$want"
expect_eq "rank files" "$(ls "$T"/a/ranks/*.db | wc -l)" $ranks
expect_eq "integrity" "$(q "$db" "PRAGMA integrity_check")" "ok"
expect_eq "indexes" "$(q "$db" "SELECT group_concat(name, ' ') FROM (SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE 'span_%' ORDER BY name)")" \
  "span_comm_seq span_flagged span_rank_time"
expect_eq "meta kind" "$(q "$db" "SELECT value FROM meta WHERE key = 'kind'")" "job"
expect_eq "no source_log in the trace's meta" "$(q "$db" "SELECT count(*) FROM meta WHERE key = 'source_log'")" 0

# Per rank, the trace and the rank file agree row for row.
rows() { q "$1" "SELECT count(*), min(id), max(id), sum(id), sum(begin_ns % 1000003), sum(COALESCE(seq, 0)) FROM span WHERE rank = $2;
                 SELECT count(*), sum(span), sum(req), sum(end_ns % 1000003) FROM completions WHERE rank = $2;
                 SELECT count(*) FROM callsites WHERE rank = $2; SELECT count(*) FROM comms WHERE rank = $2"; }
for f in "$T"/a/ranks/*.db; do
  r=$(q "$f" "SELECT DISTINCT rank FROM span")
  [ "$(rows "$f" "$r" | head -n 1 | cut -d'|' -f1)" -gt "$per" ] || fail "rank $r: rank file rows: $(rows "$f" "$r")"
  expect_eq "rank $r: rows in trace and rank file" "$(rows "$db" "$r" | tr '\n' ' ')" "$(rows "$f" "$r" | tr '\n' ' ')"
done
expect_eq "ranks with spans" "$(q "$db" "SELECT count(DISTINCT rank) FROM span")" $ranks
expect_eq "span ids unique" "$(q "$db" "SELECT count(DISTINCT id) FROM span")" "$want"
done_n=$(q "$db" "SELECT count(*) FROM completions")
[ "$done_n" -gt 0 ] || fail "no completions"
expect_eq "completions pointing at a span of their own rank" \
  "$(q "$db" "SELECT count(*) FROM completions c JOIN span s ON s.id = c.span AND s.rank = c.rank")" "$done_n"
expect_eq "nonblocking starts completed" \
  "$(q "$db" "SELECT count(*) FROM span s JOIN ops o ON o.id = s.op
              LEFT JOIN completions c ON c.rank = s.rank AND c.req = s.req
              WHERE o.nonblocking AND s.req IS NOT NULL AND c.req IS NULL")" 0
"$COLLSCOPE" report "$T/a" > "$T/a.rep" 2>&1 || fail "report failed: $(cat "$T/a.rep")"

# A first rank file from another build cannot be the trace's base: the
# trace is built empty and every rank merged, with the same result.
mkdir "$T/b"
cp -r "$T/a/logs" "$T/a/ranks" "$T/b/"
first=$(ls "$T"/b/ranks/*.db | head -n 1)
q "$first" "UPDATE meta SET value = '0.0.0-other' WHERE key = 'tool_version'" > /dev/null
"$COLLSCOPE" ingest "$T/b" > "$T/b.out" 2>&1 || fail "ingest (merged base) failed: $(cat "$T/b.out")"
expect_eq "merged base: the trace's own tool version" \
  "$(q "$T/b/trace.db" "SELECT value FROM meta WHERE key = 'tool_version'")" "$(q "$db" "SELECT value FROM meta WHERE key = 'tool_version'")"
for r in $(seq 0 $((ranks - 1))); do
  expect_eq "merged base: rank $r" "$(rows "$T/b/trace.db" "$r" | tr '\n' ' ')" "$(rows "$db" "$r" | tr '\n' ' ')"
done

# A log that cannot be read, sorting first (converted by the main process),
# and a second one among the workers' share: both named, the rest kept.
mkdir "$T/c"
cp -r "$T/a/logs" "$T/c/"
printf 'garbage' > "$T/c/logs/aaa-1.cslog"
head -c 100 "$(ls "$T"/a/logs/*.cslog | head -n 1)" > "$T/c/logs/zzz-2.cslog"
"$COLLSCOPE" ingest "$T/c" > "$T/c.out" 2> "$T/c.err"
expect_eq "ingest with unreadable logs: exit status" $? 1
grep -q 'aaa-1.cslog' "$T/c.err" || fail "the first bad log is not named: $(cat "$T/c.err")"
grep -q 'zzz-2.cslog' "$T/c.err" || fail "the second bad log is not named: $(cat "$T/c.err")"
expect_eq "ingest with unreadable logs: spans kept" "$(q "$T/c/trace.db" "SELECT count(*) FROM span")" "$want"
# A worker killed while converting (test seam): the log it was on and the
# ones it had yet to do are named, with the signal; the others are kept;
# the rank files an earlier ingest made of the lost logs are not used.
third=$(ls "$T"/a/logs/*.cslog | sed -n 3p)
COLLSCOPE_TEST_KILL_CONVERT=$(basename "$third") "$COLLSCOPE" ingest --force "$T/a" > "$T/k.out" 2> "$T/k.err"
expect_eq "a worker killed: exit status" $? 1
lost=$(grep -c "not converted: the process converting it was killed by signal 9" "$T/k.err")
grep -q "skipping $third: not converted: the process converting it was killed by signal 9" "$T/k.err" ||
  fail "the log being converted is not named: $(cat "$T/k.err")"
[ "$lost" -ge 1 ] && [ "$lost" -lt $ranks ] || fail "lost logs: $lost: $(cat "$T/k.err")"
expect_eq "a worker killed: ranks kept" "$(q "$T/a/trace.db" "SELECT count(DISTINCT rank) FROM span")" $((ranks - lost))
expect_eq "a worker killed: its logs' old rank files are gone" "$(ls "$T"/a/ranks/*.db | wc -l)" $((ranks - lost))

# A log of a newer preload: calls this build has no op for are kept as op
# 0 ("none"), and the ingest says how many, naming the log. Rank 0's file
# is the trace's base, so its note must not come along into the trace.
"$gen" -o "$T/d" -r 2 -n 90 -u 7 > /dev/null || fail "log_gen -u failed"
"$COLLSCOPE" ingest "$T/d" > "$T/d.out" 2> "$T/d.err" || fail "ingest (unknown ops) failed: $(cat "$T/d.err")"
grep -q "7 spans of calls this collscope does not know" "$T/d.err" || fail "no word of the unknown ops: $(cat "$T/d.err")"
named=$(sed -n 's/^collscope: \(.*\.cslog\): 7 spans of calls.*/\1/p' "$T/d.err")
expect_eq "unknown ops: the log named is rank 0's" "$("$gen" --stat "$named" | grep -c "rank=0 ")" 1
expect_eq "unknown ops: spans kept as op 0" "$(q "$T/d/trace.db" "SELECT count(*) FROM span WHERE op = 0")" 7
expect_eq "unknown ops: spans in all" "$(q "$T/d/trace.db" "SELECT count(*) FROM span")" \
  "$("$gen" --stat "$T"/d/logs/*.cslog | sed -n 's/^spans: //p')"
expect_eq "unknown ops: no meta note left in the trace" "$(q "$T/d/trace.db" "SELECT count(*) FROM meta WHERE key = 'unknown_ops'")" 0
echo "ok: $ranks ranks, $want spans, $done_n completions"
pass
