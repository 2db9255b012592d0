#!/bin/bash
# schedtrace.sh — record the scheduler's wake-ups and switches while a
# command runs, as ftrace's text, for `vlrealpipe schedtrace` (rp_sched.h).
#
#   calib/realpipe/schedtrace.sh OUT.txt [--force] -- COMMAND [ARGS...]
#
# e.g. (as root, from the repository root):
#   calib/realpipe/schedtrace.sh /tmp/run.trace -- ./vlrealpipe run --fps 56 \
#       --duration 12 --out /tmp/spans.csv --force
#   ./vlrealpipe schedtrace /tmp/run.trace --who vl-decode
#
# It needs root and tracefs (/sys/kernel/tracing or /sys/kernel/debug/tracing);
# it traces sched_waking, sched_wakeup and sched_switch on every CPU into a
# 64 MiB-per-CPU buffer (a 2-CPU machine keeps about a minute of a busy
# pipeline; the trace says when it lost events), and turns them off again
# however the command ends. It never overwrites OUT.txt without --force and
# never leaves a half-written one. Exit status: the command's, or 2 on bad use.
set -u
usage() { echo "usage: $0 OUT.txt [--force] -- COMMAND [ARGS...]" >&2; exit 2; }
[ $# -ge 3 ] || usage
OUT=$1; shift
FORCE=0
if [ "$1" = --force ]; then FORCE=1; shift; fi
[ "$1" = -- ] || usage
shift
if [ -e "$OUT" ] && [ "$FORCE" != 1 ]; then
  echo "$0: $OUT exists (--force to replace it)" >&2; exit 2
fi
T=
for d in /sys/kernel/tracing /sys/kernel/debug/tracing; do
  if [ -w "$d/trace" ]; then T=$d; break; fi
done
if [ -z "$T" ]; then
  echo "$0: no writable tracefs (run as root; mount -t tracefs nodev /sys/kernel/tracing)" >&2
  exit 2
fi
EVENTS="sched_waking sched_wakeup sched_switch"
for e in $EVENTS; do
  [ -e "$T/events/sched/$e/enable" ] || { echo "$0: this kernel has no sched:$e event" >&2; exit 2; }
done
off() {
  echo 0 > "$T/tracing_on"
  for e in $EVENTS; do echo 0 > "$T/events/sched/$e/enable"; done
}
trap off EXIT
echo 0 > "$T/tracing_on"
echo > "$T/trace"
echo 65536 > "$T/buffer_size_kb"
for e in $EVENTS; do echo 1 > "$T/events/sched/$e/enable"; done
echo 1 > "$T/tracing_on"
"$@"
rc=$?
echo 0 > "$T/tracing_on"
tmp=$(mktemp "$OUT.XXXXXX") || exit 2
if ! cat "$T/trace" > "$tmp"; then rm -f "$tmp"; exit 2; fi
mv -f "$tmp" "$OUT"
grep -q 'LOST' "$OUT" && echo "$0: the trace lost events (the buffer filled): run shorter" >&2
echo "$0: $(grep -c ': sched_' "$OUT") events -> $OUT" >&2
exit $rc
