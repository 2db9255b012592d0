#!/usr/bin/env bash
# validate.sh — `make validate` (issue 7): the simulator, calibrated from
# isolated op timings only, against the real threaded pipeline.
#
#  1. calibrate every op in isolation: vlcalib (tiny, CPU, one OpenBLAS thread),
#     vlcalib decode (the pipeline's own clip: H.264 640x360, GOP 30), vlcalib wakeup
#     (wake-up latency, and with --ring 4 the cores' speed-up with 1..4 threads busy
#     spinning, reported only), vlrealpipe corecal (the speed-up with 1..4 threads
#     running the pipeline's ops — the pipeline's four CPU threads: the scenario's
#     cpu.speedup), vlrealpipe wakecal (how long a woken thread, and a timed wait,
#     wait with 0, 1, 2+ of the pipeline's ops on the cores: the scenario's
#     cpu.wake_busy and cpu.timer_busy), and vlrealpipe mixcal (the same ops
#     timed on one thread in the order a frame meets them: rp_mix.h), and
#     vlrealpipe driftcal (the machine's speed per window while the cores repeat
#     the pipeline's work: the scenario's cpu.speed), and vlrealpipe stackcal
#     (where the scheduler puts a woken op, and how soon it moves one off a shared
#     core, with threads handing over as the pipeline's do: the scenario's
#     cpu.stack), and vlrealpipe coldcal (the op mix on one thread with
#     a sleep before each op: how much slower an op runs after its core idled, the
#     scenario's cpu.cold);
#  2. capacity from that calibration (vlrealpipe capacity: the bottleneck
#     resource's saturation rate from the mean service times);
#  3. at 30, 50, 70, 85 % of it (FPS varied, 8 streams; with RECAL, of the
#     capacity from the load point's own calibration): RUNS real runs and one
#     simulation of the scenario generated from the mix calibration + the load
#     point (the prediction), and one from vlcalib's back-to-back timings (shown
#     beside it, to say what timing the ops in their mix is worth); both replay
#     the real runs' stream phases (their workload: 8 streams' phases alone move
#     a simulated p50 by +-12 %), each run's in turn;
#     Every real run also logs its ops (vlrealpipe run --ops: each decode and
#     executor op's CPU time and CPU), reported as their wall over CPU time,
#     the share of two-op time spent on one CPU, and the same op's CPU time
#     beside an op on the other CPU over alone (rp_oplog_beside);
#     Each load point's mix calibration also gives the clip's content (each clip
#     frame's decode factor: gop.content); the report shows the same loads with
#     every frame alike (results-flat.csv);
#     and with a camera thread per stream instead of the pipeline's one source
#     thread (cpu.source: timer; results-perstream.csv);
#     Each compared run is also set against the same prediction on its own phases
#     alone (results-perrun.csv): the model's error run by run;
#     The same prediction is also made at the machine's speed during the runs (the
#     after-run probes' capacity over the calibrated, mean over the compared runs:
#     vlrealpipe scenario --speed-scale; results-probed.csv);
#     and at the machine BAND (5 %) slower and faster (results-slow.csv,
#     results-fast.csv): how far the calibration's few per cent move it;
#  4. validation/results.csv, validation/spread.csv, validation/overlap.csv and
#     overlap-sim.csv (the real and the simulated ops by the other ops beside them:
#     a diagnostic), stages.csv, batches.csv and gop-stages.csv (run 1 against
#     replication 0: a kept frame's segments, the encoder's batches, the segments
#     by the frame's place in the GOP), validation/REPORT.md,
#     validation/cdf.png (gnuplot), and the calibration used (validation/calib/).
# Knobs (environment): RUNS (3), DURATION (15 s of frames per run), WARMUP (2 s),
# SIM_S (120 s) x SIM_REPS (2 x RUNS: each run's phases twice) replications,
# GOP_ROWS (9: the report's table by GOP place shows places 0 .. GOP_ROWS - 1),
# RECAL (1: calibrate again just before each load point's runs, and take its
# capacity from that; 0: the first calibration throughout), PROBE_TOL (0.08),
# PROBE_ROUNDS (10) and TRIES (3): after each run a short mix calibration (mixcal
# --rounds PROBE_ROUNDS, about 3 s) gives the capacity the machine had then; a run
# whose after-run capacity is off the load point's calibrated one by more than
# PROBE_TOL (either way) is run again, up to TRIES times in all (the machine was
# not the one calibrated; validation/rejected.csv; a run whose last attempt still
# failed is left out of the comparison when another run of its load passed), WAKE_TOL (2) and
# WAKE_PROBE_S (0.5): after each run a short wakecal (--seconds WAKE_PROBE_S,
# about 2.5 s) gives how fast a woken thread ran with the cores idle then (the
# wake index: the geometric mean of its wake and timer class-0 quick p90s); a run
# whose index is off the load point's wakecal by more than a factor WAKE_TOL
# (either way) is run again too (on a shared VM the host's wake-ups switch between
# regimes minutes apart: at 06:00 UTC on 2026-12-02 a class-0 p90 of 0.2 ms in one
# calibration and 2.6 ms in the next), RECALS (2): a load point none of whose
# first run's attempts matched its calibration (taken in a spell the runs never
# saw) is calibrated again and its runs start over, up to RECALS calibrations,
# DRIFT_S (60) and DRIFT_WINDOW_MS (1000): driftcal's length and windows (DRIFT_S=0:
# no driftcal, the prediction at one speed; with it, the report also shows the
# same loads simulated at one speed, results-steady.csv), STACK_S (4): stackcal's
# seconds at each of its loads (0: no stackcal, and the prediction pools the cores;
# with it, the prediction places each job on a core, cpu.stack, and the report also
# shows the same loads with the cores pooled, results-pooled.csv, and with the
# share by load alone, not by the busy core's run too, results-norun.csv), TURN_S (6):
# turncal's seconds (with stackcal; 0: no turncal, and the jobs on one core turn
# after exponential waits, stackcal's switch_ms; with it, they turn at the
# scheduler's tick, cpu.stack.tick_ms, an op put beside a busy one running through
# with turncal's share at its length, cpu.stack.through, a woken op held beside a
# run younger than its protected slice, cpu.stack.protect (turncal measures it for
# TURN_S more), and the report also shows the same loads with the exponential
# turns, results-expturns.csv, without protection, results-noprotect.csv, and with
# held wake-ups bounded by the protected slice, results-slice.csv), COLD_S (30):
# coldcal's seconds (0: no coldcal; with it, the prediction says how much slower an
# op runs after its core idled, cpu.cold, and the report also shows the same loads
# without it, results-warm.csv), DUTY_S (2): dutycal's seconds per duty (4 rounds of 7
# duties; 0: no dutycal; with it, the report also shows the same loads with an op
# slower while the cores were idle much of the time lately, cpu.duty, results-duty.csv:
# reported, not the prediction), STALL_S (30): stallcal's seconds, just before
# each load point's runs (0: none; with it, the prediction says how often and how
# long the host leaves an idle core unrun, cpu.stalls, and the report also shows the
# same loads without it, results-nostalls.csv), POLL_S (120): before the load points,
# stallcal --periods POLL_PERIODS (0.1,0.15,0.2,0.3,0.5,1) for so long: the host's poll
# window, a core idle for less than which sees no spell (cpu.stalls.poll_ms, given to
# each load's stallcal; 0: none; the report also shows the same loads without it,
# results-nopoll.csv), BAND (0.05: the prediction also at the machine
# BAND slower and faster, results-slow.csv and results-fast.csv; 0: not), HISTORY (8): each experiment is kept in
# build/validate-history/<UTC stamp of its start>/ (its real runs' spans, the
# scenarios and the calibration files they read: about 40 MB), and the report
# sets the prediction against the last HISTORY kept ones, this one among them,
# each simulated again with this vlsim (calib/realpipe/history.sh; the mean error
# over validations is the model's bias, their spread the machine's;
# validation/history.csv; 0: kept, but no such section),
# CORE_TOL (0.10) and CORE_TRIES (3): corecal measures the speed-up of k threads
# round by round; when its rounds' two-thread speed-ups spread by more than a
# factor 1 + CORE_TOL (highest over lowest), the machine moved under it (on
# 2026-12-04 at 08:15 UTC one load point's rounds gave 1.78 to 2.26, and the
# median 1.78 made its scenario 10 % slower than the runs found the machine), so it
# is taken again, up to CORE_TRIES times, and the steadiest attempt is kept
# (validation/corecal-tries.csv), CORE_POOL (1): each load point's scenario, capacity
# and probes take the speed-up pooled over the rounds of every corecal of the run so
# far, the first and each load point's own (vlrealpipe corepool; its own alone in
# corecal-own.yaml, both in the report): the two vCPUs' true speed-up held at
# 1.97-2.06 over every 10 s of a 96 s series, while one calibration's 3 rounds gave
# 1.73-2.00 and the 20:47 run's 50 and 70 % points took 1.88 and 1.86 and predicted
# tails 10-20 % high (0: each load point's own, as until 2026-12-04 22:30), LOADS ("0.30 0.50 0.70 0.85"), NOTE (a line for the report, e.g. "taken on a
# loaded machine"), NICE (-19 when root, else 0: the
# calibration and the runs get a higher scheduling weight than other processes, so
# these perturb them less; on a quiet machine it changes nothing). Never part of
# `make test`.
set -euo pipefail
cd "$(dirname "$0")/../.."

RUNS=${RUNS:-3}
DURATION=${DURATION:-15}
WARMUP=${WARMUP:-2}
SIM_S=${SIM_S:-120}
SIM_REPS=${SIM_REPS:-$((2 * RUNS))}
RECAL=${RECAL:-1}
PROBE_TOL=${PROBE_TOL:-0.08}
PROBE_ROUNDS=${PROBE_ROUNDS:-10}
TRIES=${TRIES:-3}
WAKE_TOL=${WAKE_TOL:-2}
WAKE_PROBE_S=${WAKE_PROBE_S:-0.5}
RECALS=${RECALS:-2}
CORE_TOL=${CORE_TOL:-0.10}
CORE_TRIES=${CORE_TRIES:-3}
CORE_POOL=${CORE_POOL:-1}
DRIFT_S=${DRIFT_S:-60}
DRIFT_WINDOW_MS=${DRIFT_WINDOW_MS:-1000}
STACK_S=${STACK_S:-4}
RUN_BRIDGE_MS=0.05                  # stackcal's run bridge (calib/realpipe/rp_stack.h RP_STACK_BRIDGE_MS)
TURN_S=${TURN_S:-6}
COLD_S=${COLD_S:-30}
DUTY_S=${DUTY_S:-2}
STALL_S=${STALL_S:-30}
POLL_S=${POLL_S:-120}
POLL_PERIODS=${POLL_PERIODS:-0.1,0.15,0.2,0.3,0.5,1}
HISTORY=${HISTORY:-8}
BAND=${BAND:-0.05}                  # the prediction again at 1 -+ BAND x the machine's speed (0: not)
GOP_ROWS=${GOP_ROWS:-9}
LOADS=${LOADS:-"0.30 0.50 0.70 0.85"}
NOTE=${NOTE:-}
OUT=validation
WORK=build/validate
export OPENBLAS_NUM_THREADS=1
CORES=$(nproc)
if [ -z "${NICE:-}" ]; then [ "$(id -u)" = 0 ] && NICE=-19 || NICE=0; fi
# With autogroup scheduling (Linux's default) nice counts only within a session, so
# the experiment runs in a session of its own whose autogroup gets the nice value.
if [ "$NICE" != 0 ] && [ -w /proc/self/autogroup ]; then
  if [ -z "${VALIDATE_SESSION:-}" ] && command -v setsid >/dev/null; then
    VALIDATE_SESSION=1 NICE=$NICE exec setsid --wait "$0" "$@"
  fi
  echo "$NICE" > /proc/self/autogroup 2>/dev/null || true
fi
PRIO=(nice -n "$NICE")
"${PRIO[@]}" true 2>/dev/null || { echo "validate: cannot run at nice $NICE; using 0" >&2; PRIO=(nice -n 0); NICE=0; }
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)

for b in ./vlsim ./vlcalib ./vlrealpipe; do
  [ -x "$b" ] || { echo "validate: $b missing (make vlsim vlcalib vlrealpipe)" >&2; exit 2; }
done
command -v gnuplot >/dev/null || { echo "validate: gnuplot missing (make deps)" >&2; exit 2; }
rm -rf "$WORK"
mkdir -p "$WORK/calib" "$WORK/runs" "$OUT"
t_start=$(date +%s)
STAMP=$(date -u +%Y-%m-%dT%H%M%SZ)   # names this experiment's kept copy (build/validate-history/)
log() { echo "validate [$(( $(date +%s) - t_start )) s]: $*" >&2; }
# corecal_steady OUT WHERE [corecal args]: corecal into OUT, again while its rounds'
# two-thread speed-ups spread by more than 1 + CORE_TOL (up to CORE_TRIES attempts),
# keeping the steadiest; each attempt a row of $WORK/corecal-tries.csv.
corecal_spread() {
  awk '/min\.\.max of (the rounds. )?units/ { split($0, a, ": "); n = split(a[2], r, " ");
         if (n >= 2) { split(r[2], m, "\\.\\."); if (m[1] > 0) { printf "%.4f", m[2] / m[1]; exit } } }' "$1"
}
corecal_steady() {
  local out=$1 where=$2 best="" best_spread="" spread try
  shift 2
  for try in $(seq 1 "$CORE_TRIES"); do
    "${PRIO[@]}" ./vlrealpipe corecal "$@" --force --out "$out.try$try" > /dev/null
    spread=$(corecal_spread "$out.try$try")
    [ -n "$spread" ] || spread=1
    echo "$where,$try,$spread" >> "$WORK/corecal-tries.csv"
    if [ -z "$best" ] || awk -v a="$spread" -v b="$best_spread" 'BEGIN { exit !(a < b) }'; then
      best=$out.try$try best_spread=$spread
    fi
    awk -v a="$spread" -v t="$CORE_TOL" 'BEGIN { exit !(a <= 1 + t) }' && break
    if [ "$try" -lt "$CORE_TRIES" ]; then
      log "$where: corecal's rounds spread x $spread (over 1 + $CORE_TOL): the machine moved; again"
    else
      log "$where: corecal's rounds spread x $spread (over 1 + $CORE_TOL) at every attempt: keeping the steadiest, x $best_spread"
    fi
  done
  cp "$best" "$out"
  rm -f "$out".try*
}
# The wake index of a wakecal summary (its wake_index_ms: the geometric mean of the
# wake and timer families' class-0 quick p90s, ms); 0 when the file has none.
wake_index() {
  awk '/^wake_index_ms:/ { v = $2 } END { printf "%.4f\n", v + 0 }' "$1" 2>/dev/null || echo 0
}
# The host's steal so far (the machine's /proc/stat "cpu" line: its steal and its
# total jiffies, guest time left out since user time holds it): a vCPU runnable but
# not run, the host running others on it; 0 0 where the kernel has no such line.
steal_now() { awk '/^cpu / { t = 0; for (i = 2; i <= 9; i++) t += $i; print $9 + 0, t; f = 1 }
                   END { if (!f) print 0, 0 }' /proc/stat 2>/dev/null || echo 0 0; }
# The steal between two steal_now readings, in % of the CPUs' time (0 when none passed).
steal_pct() { awk -v a="$1" -v b="$2" 'BEGIN { split(a, x, " "); split(b, y, " "); d = y[2] - x[2]
                                              printf "%.2f\n", (d > 0 ? 100 * (y[1] - x[1]) / d : 0) }'; }
# How many kept runs were left out of the comparison (their check failed at every
# attempt, and another run of their load passed: used.csv says how many were used).
n_left_out() {
  awk -F, 'FILENAME ~ /used.csv$/ { none[$1] = $2 == "none"; next } $9 != 1 && !none[$1] { n++ } END { print n + 0 }' \
    "$WORK/used.csv" "$WORK/probe.csv"
}
# The machine right after a run of load point $L (in $D), against the point's
# calibration ($L_WAKE, $L_CORE, $L_CAP, $L_WIDX): cap_after and ratio, the capacity
# a short mix calibration gives with the point's own wake-up and speed-up;
# wake_after and wratio, the wake index of a short wakecal (a probe that fails,
# e.g. a class never seen, counts as off); ok 1 when both are within tolerance.
probe_after_run() {
  "${PRIO[@]}" ./vlrealpipe mixcal --rounds "$PROBE_ROUNDS" --force --out "$D/probe-tiny.yaml" \
    --decode-out "$D/probe-h264.yaml" > /dev/null
  cap_after=$(./vlrealpipe capacity --calib "$PWD/$D/probe-tiny.yaml" --decode-calib "$PWD/$D/probe-h264.yaml" \
    --wakeup "$L_WAKE" --cores-calib "$L_CORE" --cores "$CORES" | awk '/^capacity_fps_per_stream/ {print $2}')
  ratio=$(awk -v a="$cap_after" -v c="$L_CAP" 'BEGIN {printf "%.4f", a / c}')
  wake_after=0
  if "${PRIO[@]}" ./vlrealpipe wakecal --cores "$CORES" --seconds "$WAKE_PROBE_S" --force \
       --out "$D/probe-wake.yaml" > /dev/null 2>> "$D/probe-wake.log"; then
    wake_after=$(wake_index "$D/probe-wake.yaml")
  fi
  wratio=$(awk -v a="$wake_after" -v c="$L_WIDX" 'BEGIN {printf "%.4f", (c > 0 ? a / c : 0)}')
  ok=$(awk -v q="$ratio" -v t="$PROBE_TOL" -v w="$wratio" -v wt="$WAKE_TOL" \
    'BEGIN {d = q - 1; if (d < 0) d = -d; print (d <= t && w > 0 && w <= wt && w >= 1 / wt) ? 1 : 0}')
}

# ---- 1. calibration, every op in isolation ----
log "calibrating the tiny ops (vlcalib, CPU, 1 thread)"
"${PRIO[@]}" ./vlcalib --backend cpu --model tiny --threads 1 --force --out "$WORK/calib/cpu-tiny-1t.yaml" \
  --note "make validate: isolated CPU timings, one OpenBLAS thread" > "$WORK/calib/vlcalib.log"
log "calibrating H.264 decode of the pipeline's clip (vlcalib decode)"
"${PRIO[@]}" ./vlcalib decode --codec h264 --resolution 640x360 --fps 30 --gop 30 --bframes 0 --frames 60 \
  --passes 10 --force --out "$WORK/calib/h264-640x360.yaml" > "$WORK/calib/decode.log"
log "measuring thread wake-up latency (vlcalib wakeup)"
"${PRIO[@]}" ./vlcalib wakeup --busy "$CORES" --ring 4 --force --out "$WORK/calib/wakeup.yaml" > "$WORK/calib/wakeup.log"
# The share (%) of the kept frames' first-stage spans (after the warm-up) in these
# span files whose release came 5 ms or more after the frame's time (enqueue -
# arrive): the camera thread held up, as the host's spells do (rp_stall.h).
late_release() {
  awk -F, -v w="$WARMUP" '/^frame,/ && $5 == "decode" && $7 >= 1000 * w { n++; if ($8 - $7 >= 5) k++ }
    END { printf "%.3f", n ? 100 * k / n : 0 }' "$@"
}

log "measuring the wake-up by the ops running beside it (vlrealpipe wakecal)"
"${PRIO[@]}" ./vlrealpipe wakecal --cores "$CORES" --force --out "$WORK/calib/wakecal.yaml" > /dev/null
log "timing the same ops in the pipeline's op mix, one thread (vlrealpipe mixcal)"
"${PRIO[@]}" ./vlrealpipe mixcal --force --out "$WORK/calib/mix-tiny.yaml" --decode-out "$WORK/calib/mix-h264.yaml" \
  --calib "$WORK/calib/cpu-tiny-1t.yaml" --decode-calib "$WORK/calib/h264-640x360.yaml" > "$WORK/calib/mixcal.txt"
log "measuring the cores' speed-up for the pipeline's own work (vlrealpipe corecal)"
echo "where,attempt,spread" > "$WORK/corecal-tries.csv"
corecal_steady "$WORK/calib/corecal.yaml" first --threads 4
DRIFT=()
if [ "$DRIFT_S" != 0 ]; then
  log "measuring how the machine's speed moves, ${DRIFT_S} s (vlrealpipe driftcal)"
  "${PRIO[@]}" ./vlrealpipe driftcal --cores "$CORES" --seconds "$DRIFT_S" --window-ms "$DRIFT_WINDOW_MS" \
    --force --out "$WORK/calib/driftcal.yaml" > /dev/null
  DRIFT=(--drift-calib "$WORK/calib/driftcal.yaml")
fi
COLD=()
if [ "$COLD_S" != 0 ]; then
  log "measuring an op's slow-down after its core idled, ${COLD_S} s (vlrealpipe coldcal)"
  "${PRIO[@]}" ./vlrealpipe coldcal --seconds "$COLD_S" --force --out "$WORK/calib/coldcal.yaml" > /dev/null
  COLD=(--cold-calib "$WORK/calib/coldcal.yaml")
fi
if [ "$DUTY_S" != 0 ]; then
  log "measuring an op's slow-down when the cores idled lately, 28 x ${DUTY_S} s (vlrealpipe dutycal)"
  "${PRIO[@]}" ./vlrealpipe dutycal --cores "$CORES" --rounds 4 --seconds "$DUTY_S" --force \
    --out "$WORK/calib/dutycal.yaml" > /dev/null
fi
STACK=()
if [ "$STACK_S" != 0 ]; then
  log "measuring where a woken op lands, 4 x ${STACK_S} s (vlrealpipe stackcal)"
  "${PRIO[@]}" ./vlrealpipe stackcal --cores "$CORES" --seconds "$STACK_S" \
    --force --out "$WORK/calib/stackcal.yaml" > /dev/null
  STACK=(--stack-calib "$WORK/calib/stackcal.yaml")
fi
POLL=0                             # the host's poll window, ms (0: none measured or found)
if [ "$STALL_S" != 0 ] && [ "$POLL_S" != 0 ]; then
  log "measuring the host's poll window of a halted core, ${POLL_S} s (vlrealpipe stallcal --periods)"
  "${PRIO[@]}" ./vlrealpipe stallcal --seconds "$POLL_S" --periods "$POLL_PERIODS" --force \
    --out "$WORK/calib/stallpoll.yaml" > /dev/null
  POLL=$(sed -n 's/^# the poll window: .*poll_ms \([0-9.e+-]*\)$/\1/p' "$WORK/calib/stallpoll.yaml")
  POLL=${POLL:-0}
fi
POLLARG=()
[ "$POLL" = 0 ] || POLLARG=(--poll-ms "$POLL")
[ "$STACK_S" != 0 ] || TURN_S=0    # turns are a placed job's: nothing to turn without stackcal
STACK_EXP=("${STACK[@]}")          # the exponential turns (stackcal's switch_ms)
if [ "$TURN_S" != 0 ]; then
  log "measuring when a shared CPU turns, ${TURN_S} s (vlrealpipe turncal)"
  "${PRIO[@]}" ./vlrealpipe turncal --seconds "$TURN_S" --force --out "$WORK/calib/turncal.yaml" > /dev/null
  STACK+=(--turn-calib "$WORK/calib/turncal.yaml")
fi
ISO_TINY=$PWD/$WORK/calib/cpu-tiny-1t.yaml
ISO_DEC=$PWD/$WORK/calib/h264-640x360.yaml
TINY=$PWD/$WORK/calib/mix-tiny.yaml
DEC=$PWD/$WORK/calib/mix-h264.yaml
WAKE=$WORK/calib/wakeup.yaml
CORE=$WORK/calib/corecal.yaml
POOL=("$CORE")                     # the corecal files pooled so far (CORE_POOL)
WCAL=$WORK/calib/wakecal.yaml
cat "$WORK/calib/wakeup.log" "$CORE" "$WCAL" "$WORK/calib/mixcal.txt" >&2
[ "$DRIFT_S" = 0 ] || grep '^#' "$WORK/calib/driftcal.yaml" >&2
[ "$STACK_S" = 0 ] || cat "$WORK/calib/stackcal.yaml" >&2
[ "$TURN_S" = 0 ] || cat "$WORK/calib/turncal.yaml" >&2

# ---- 2. capacity ----
./vlrealpipe capacity --calib "$TINY" --decode-calib "$DEC" --wakeup "$WAKE" --cores-calib "$CORE" --cores "$CORES" | tee "$WORK/capacity.txt" >&2
./vlrealpipe capacity --calib "$ISO_TINY" --decode-calib "$ISO_DEC" --wakeup "$WAKE" --cores-calib "$CORE" --cores "$CORES" > "$WORK/capacity-iso.txt"
CAP=$(awk '/^capacity_fps_per_stream/ {print $2}' "$WORK/capacity.txt")

# ---- 3. the load points ----
echo "load,run,attempt,capacity_after,ratio,wake_after,wake_ratio,steal_pct" > "$WORK/rejected.csv"
: > "$WORK/probe.csv"
: > "$WORK/recal.csv"
: > "$WORK/used.csv"
: > "$WORK/speed-scale.csv"

# The prediction (PREDICT, the load point's stream phases) with every cpu.speed
# factor times $2, simulated and compared with the runs used as the prediction
# is: $D/scenario-$1.yaml, sim-$1.csv, rows-$1.csv. Reads the load loop's L, D,
# PREDICT, phases and used.
predict_at_speed() {
  ./vlrealpipe scenario "${PREDICT[@]}" "${phases[@]}" --speed-scale "$2" --out "$D/scenario-$1.yaml"
  ./vlsim run "$D/scenario-$1.yaml" --csv "$D/sim-$1.csv" -q 2> "$D/sim-$1.log"
  ./vlrealpipe compare --load "$L" --sim "$D/sim-$1.csv" --warmup "$WARMUP" --out "$D/rows-$1.csv" \
    "${used[@]}" > /dev/null
}

for L in $LOADS; do
  D="$WORK/runs/$L"
  mkdir -p "$D"
  # The cores' speed and the ops' times drift on a shared VM within minutes, so
  # each load point is calibrated again (still in isolation: mixcal, corecal and
  # the ring, no pipeline) just before its runs, and its FPS is that fraction of
  # the capacity this calibration gives: the load the point claims to be.
  # A load point whose first run never matched its calibration (every attempt off)
  # is calibrated again and its runs start over, up to RECALS calibrations.
  for cal in $(seq 1 "$RECALS"); do
    L_TINY=$TINY L_DEC=$DEC L_WAKE=$WAKE L_CORE=$CORE L_WCAL=$WCAL L_CAP=$CAP
    if [ "$RECAL" = 1 ]; then
      log "load $L: calibrating again just before its runs (vlcalib wakeup --ring 4, corecal, wakecal, mixcal)"
      "${PRIO[@]}" ./vlcalib wakeup --busy "$CORES" --ring 4 --ring-reps 3 --force --out "$D/wakeup.yaml" \
        > "$D/wakeup.log"
      corecal_steady "$D/corecal-own.yaml" "load $L" --threads 4 --rounds 3
      if [ "$CORE_POOL" = 1 ]; then
        ./vlrealpipe corepool "${POOL[@]}" "$D/corecal-own.yaml" --force --out "$D/corecal.yaml" > /dev/null
      else
        cp "$D/corecal-own.yaml" "$D/corecal.yaml"
      fi
      "${PRIO[@]}" ./vlrealpipe wakecal --cores "$CORES" --seconds 3 --force --out "$D/wakecal.yaml" > /dev/null
      "${PRIO[@]}" ./vlrealpipe mixcal --rounds 30 --force --out "$D/mix-tiny.yaml" --decode-out "$D/mix-h264.yaml" \
        > "$D/mixcal.txt"
      L_TINY=$PWD/$D/mix-tiny.yaml L_DEC=$PWD/$D/mix-h264.yaml L_WAKE=$D/wakeup.yaml L_CORE=$D/corecal.yaml
      L_WCAL=$D/wakecal.yaml
      ./vlrealpipe capacity --calib "$L_TINY" --decode-calib "$L_DEC" --wakeup "$L_WAKE" --cores-calib "$L_CORE" \
        --cores "$CORES" > "$D/capacity.txt"
      L_CAP=$(awk '/^capacity_fps_per_stream/ {print $2}' "$D/capacity.txt")
    fi
    # the host's spells of not running an idle core, as close to the runs as can be:
    # they come and go with the host's other work (rp_stall.h)
    STALLS=()
    if [ "$STALL_S" != 0 ]; then
      log "load $L: measuring the host's spells of not running an idle core, ${STALL_S} s (vlrealpipe stallcal)"
      "${PRIO[@]}" ./vlrealpipe stallcal --seconds "$STALL_S" "${POLLARG[@]}" --force --out "$D/stallcal.yaml" \
        > /dev/null
      STALLS=(--stall-calib "$D/stallcal.yaml")
    fi
    FPS=$(awk -v c="$L_CAP" -v l="$L" 'BEGIN {printf "%.4f", c * l}')
    L_WIDX=$(wake_index "$L_WCAL")
    spans=() used=() restart=0
    for r in $(seq 1 "$RUNS"); do
      for a in $(seq 1 "$TRIES"); do
        log "load $L (fps $FPS per stream): real run $r of $RUNS$([ "$a" -gt 1 ] && echo " (attempt $a)")"
        st0=$(steal_now)
        "${PRIO[@]}" ./vlrealpipe run --fps "$FPS" --duration "$DURATION" --warmup "$WARMUP" --seed "$r" \
          --wakeup "$L_WAKE" --cores "$CORES" --force --out "$D/spans-$r.csv" --ops "$D/ops-$r.csv" 2>> "$D/run.log"
        steal=$(steal_pct "$st0" "$(steal_now)")
        probe_after_run
        # every attempt of run 1 off: the calibration was taken in a spell the runs
        # never saw, so the point is calibrated again (up to RECALS calibrations)
        if [ "$ok" != 1 ] && [ "$a" = "$TRIES" ] && [ "$r" = 1 ] && [ "$RECAL" = 1 ] \
             && [ "$cal" -lt "$RECALS" ]; then
          restart=1
        fi
        if [ "$ok" = 1 ] || { [ "$a" = "$TRIES" ] && [ "$restart" = 0 ]; }; then
          # the run's CPU per frame (getrusage of its threads), from its summary line
          cpu=$(sed -n 's/.*cpu [0-9.]* s (\([0-9.]*\) ms per frame.*/\1/p' "$D/run.log" | tail -1)
          echo "$L,$r,$cap_after,$ratio,$a,${cpu:-0},$wake_after,$wratio,$ok,$steal" >> "$WORK/probe.csv"
          # the kept run's ops: wall over CPU time, two ops on one CPU (rp_oplog.h)
          grep 'ops after the warm-up' "$D/run.log" | tail -1 | sed "s/^/$L $r /" >> "$WORK/ops.txt"
          # and its ops' CPU beside an op on the other CPU over alone (rp_oplog_beside)
          grep 'ops beside an op on another CPU' "$D/run.log" | tail -1 | sed "s/^/$L $r /" >> "$WORK/beside.txt"
          break
        fi
        echo "$L,$r,$a,$cap_after,$ratio,$wake_after,$wratio,$steal" >> "$WORK/rejected.csv"
        if [ "$restart" = 1 ]; then
          log "load $L: no attempt of run 1 had the machine its calibration measured: calibrating it again"
          break
        fi
        log "load $L run $r: after it the capacity was $cap_after fps per stream ($ratio x the calibrated $L_CAP), the wake index $wake_after ms ($wratio x the calibrated $L_WIDX): again"
      done
      if [ "$restart" = 1 ]; then break; fi
      spans+=("$D/spans-$r.csv")
      [ "$ok" = 1 ] && used+=("$D/spans-$r.csv")
    done
    [ "$restart" = 1 ] || break
  done
  echo "$L,$cal" >> "$WORK/recal.csv"
  if [ "$RECAL" = 1 ]; then POOL+=("$D/corecal-own.yaml"); fi
  # A run kept at its last attempt although the machine check failed (the machine
  # was not the one calibrated) is left out of the comparison when another run of
  # the point passed; with none passed, every run is compared, and the report says so.
  if [ "${#used[@]}" = 0 ]; then
    used=("${spans[@]}")
    echo "$L,none" >> "$WORK/used.csv"
    log "load $L: no run had the machine its calibration measured: all ${#spans[@]} compared (the report says so)"
  else
    echo "$L,${#used[@]}" >> "$WORK/used.csv"
    [ "${#used[@]}" = "${#spans[@]}" ] ||
      log "load $L: $(( ${#spans[@]} - ${#used[@]} )) run(s) left out, the machine check failed at every attempt"
  fi
  echo "$L,$L_CAP,$FPS" >> "$WORK/fps.csv"
  log "load $L: simulating (calibration + load point only)"
  phases=()
  for f in "${used[@]}"; do phases+=(--phases-from "$f"); done
  # the prediction's scenario, from the calibration and the load point alone
  PREDICT=(--calib "$L_TINY" --decode-calib "$L_DEC" --wakeup "$L_WAKE" --cores-calib "$L_CORE" --wake-calib "$L_WCAL"
    "${DRIFT[@]}" "${STACK[@]}" "${COLD[@]}" "${STALLS[@]}" --fps "$FPS" --cores "$CORES" --warmup "$WARMUP"
    --sim-duration "$SIM_S" --sim-reps "$SIM_REPS")
  ./vlrealpipe scenario "${PREDICT[@]}" "${phases[@]}" --out "$D/scenario.yaml"
  ./vlsim run "$D/scenario.yaml" --csv "$D/sim.csv" --plot "$D/plot" --trace "$D/sim-spans.csv" -q 2> "$D/sim.log"
  # the same diagnostic of the simulator's own spans (replication 0: run 1's phases)
  ./vlrealpipe compare --load "$L" --sim "$D/sim.csv" --warmup "$WARMUP" --out "$D/rows-simself.csv" \
    --overlap "$D/sim-overlap.csv" "$D/sim-spans.csv" > /dev/null
  ./vlrealpipe scenario --calib "$ISO_TINY" --decode-calib "$ISO_DEC" --wakeup "$L_WAKE" --cores-calib "$L_CORE" --wake-calib "$L_WCAL" \
    "${DRIFT[@]}" "${STACK[@]}" "${COLD[@]}" --fps "$FPS" --cores "$CORES" --warmup "$WARMUP" --sim-duration "$SIM_S" \
    --sim-reps "$SIM_REPS" "${phases[@]}" --out "$D/scenario-iso.yaml"
  ./vlsim run "$D/scenario-iso.yaml" --csv "$D/sim-iso.csv" -q 2> "$D/sim-iso.log"
  ./vlrealpipe compare --load "$L" --sim "$D/sim-iso.csv" --warmup "$WARMUP" --out "$D/rows-iso.csv" \
    "${used[@]}" > /dev/null
  if [ "$DRIFT_S" != 0 ]; then     # the same prediction at one speed: what cpu.speed adds
    ./vlrealpipe scenario --calib "$L_TINY" --decode-calib "$L_DEC" --wakeup "$L_WAKE" --cores-calib "$L_CORE" \
      --wake-calib "$L_WCAL" "${STACK[@]}" "${COLD[@]}" --fps "$FPS" --cores "$CORES" --warmup "$WARMUP" --sim-duration "$SIM_S" \
      --sim-reps "$SIM_REPS" "${phases[@]}" --out "$D/scenario-steady.yaml"
    ./vlsim run "$D/scenario-steady.yaml" --csv "$D/sim-steady.csv" -q 2> "$D/sim-steady.log"
    ./vlrealpipe compare --load "$L" --sim "$D/sim-steady.csv" --warmup "$WARMUP" --out "$D/rows-steady.csv" \
      "${used[@]}" > /dev/null
  fi
  if [ "$COLD_S" != 0 ]; then      # the same prediction with warm cores throughout: what cpu.cold adds
    ./vlrealpipe scenario --calib "$L_TINY" --decode-calib "$L_DEC" --wakeup "$L_WAKE" --cores-calib "$L_CORE" \
      --wake-calib "$L_WCAL" "${DRIFT[@]}" "${STACK[@]}" --fps "$FPS" --cores "$CORES" --warmup "$WARMUP" --sim-duration "$SIM_S" \
      --sim-reps "$SIM_REPS" "${phases[@]}" --out "$D/scenario-warm.yaml"
    ./vlsim run "$D/scenario-warm.yaml" --csv "$D/sim-warm.csv" -q 2> "$D/sim-warm.log"
    ./vlrealpipe compare --load "$L" --sim "$D/sim-warm.csv" --warmup "$WARMUP" --out "$D/rows-warm.csv" \
      "${used[@]}" > /dev/null
  fi
  if [ "$DUTY_S" != 0 ]; then      # the same prediction with cpu.duty: reported, not the prediction
    ./vlrealpipe scenario --calib "$L_TINY" --decode-calib "$L_DEC" --wakeup "$L_WAKE" --cores-calib "$L_CORE" \
      --wake-calib "$L_WCAL" "${DRIFT[@]}" "${STACK[@]}" "${COLD[@]}" --duty-calib "$WORK/calib/dutycal.yaml" \
      --fps "$FPS" --cores "$CORES" --warmup "$WARMUP" --sim-duration "$SIM_S" \
      --sim-reps "$SIM_REPS" "${phases[@]}" --out "$D/scenario-duty.yaml"
    ./vlsim run "$D/scenario-duty.yaml" --csv "$D/sim-duty.csv" -q 2> "$D/sim-duty.log"
    ./vlrealpipe compare --load "$L" --sim "$D/sim-duty.csv" --warmup "$WARMUP" --out "$D/rows-duty.csv" \
      "${used[@]}" > /dev/null
  fi
  if grep -q 'content: {file:' "$D/scenario.yaml"; then   # every frame of the clip alike: what gop.content adds
    sed -e 's/, content: {file: [^}]*}//' -e 's/\.resid\.samples/.samples/g' "$D/scenario.yaml" > "$D/scenario-flat.yaml"
    ./vlsim run "$D/scenario-flat.yaml" --csv "$D/sim-flat.csv" -q 2> "$D/sim-flat.log"
    ./vlrealpipe compare --load "$L" --sim "$D/sim-flat.csv" --warmup "$WARMUP" --out "$D/rows-flat.csv" \
      "${used[@]}" > /dev/null
  fi
  # the same prediction with a camera thread per stream: what the one source thread does
  sed 's/source: one_thread/source: timer/' "$D/scenario.yaml" > "$D/scenario-perstream.yaml"
  ./vlsim run "$D/scenario-perstream.yaml" --csv "$D/sim-perstream.csv" -q 2> "$D/sim-perstream.log"
  if [ "$STALL_S" != 0 ]; then     # the same prediction without cpu.stalls: what the host's spells do
    sed 's/stalls: {per_s: [^}]*}[^}]*}, //' "$D/scenario.yaml" > "$D/scenario-nostalls.yaml"
    ./vlsim run "$D/scenario-nostalls.yaml" --csv "$D/sim-nostalls.csv" --trace "$D/sim-nostalls-spans.csv" -q \
      2> "$D/sim-nostalls.log"
    ./vlrealpipe compare --load "$L" --sim "$D/sim-nostalls.csv" --warmup "$WARMUP" --out "$D/rows-nostalls.csv" \
      "${used[@]}" > /dev/null
    # the frames released 5 ms late or more: the real runs', replication 0's with and without
    { echo "load,real,sim,nostalls"
      printf '%s,%s,%s,%s\n' "$L" "$(late_release "${used[@]}")" "$(late_release "$D/sim-spans.csv")" \
        "$(late_release "$D/sim-nostalls-spans.csv")"; } > "$D/late-release.csv"
    rm -f "$D/sim-nostalls-spans.csv"
    if [ "$POLL" != 0 ]; then      # the same with every idle core exposed: what the poll window does
      sed 's/\(stalls: {per_s: [^}]*}\), poll_ms: [0-9.e+-]*}/\1}/' "$D/scenario.yaml" > "$D/scenario-nopoll.yaml"
      ./vlsim run "$D/scenario-nopoll.yaml" --csv "$D/sim-nopoll.csv" -q 2> "$D/sim-nopoll.log"
      ./vlrealpipe compare --load "$L" --sim "$D/sim-nopoll.csv" --warmup "$WARMUP" --out "$D/rows-nopoll.csv" \
        "${used[@]}" > /dev/null
    fi
  fi
  ./vlrealpipe compare --load "$L" --sim "$D/sim-perstream.csv" --warmup "$WARMUP" --out "$D/rows-perstream.csv" \
    "${used[@]}" > /dev/null
  if [ "$STACK_S" != 0 ]; then     # the same prediction with the cores pooled: what cpu.stack does
    ./vlrealpipe scenario --calib "$L_TINY" --decode-calib "$L_DEC" --wakeup "$L_WAKE" --cores-calib "$L_CORE" \
      --wake-calib "$L_WCAL" "${DRIFT[@]}" "${COLD[@]}" --fps "$FPS" --cores "$CORES" --warmup "$WARMUP" \
      --sim-duration "$SIM_S" --sim-reps "$SIM_REPS" "${phases[@]}" --out "$D/scenario-pooled.yaml"
    ./vlsim run "$D/scenario-pooled.yaml" --csv "$D/sim-pooled.csv" -q 2> "$D/sim-pooled.log"
    ./vlrealpipe compare --load "$L" --sim "$D/sim-pooled.csv" --warmup "$WARMUP" --out "$D/rows-pooled.csv" \
      "${used[@]}" > /dev/null
  fi
  if [ "$STACK_S" != 0 ]; then     # the same prediction without the share by run: what cpu.stack.run does
    ./vlrealpipe scenario --calib "$L_TINY" --decode-calib "$L_DEC" --wakeup "$L_WAKE" --cores-calib "$L_CORE" \
      --wake-calib "$L_WCAL" "${DRIFT[@]}" "${STACK[@]}" --no-stack-run "${COLD[@]}" --fps "$FPS" --cores "$CORES" \
      --warmup "$WARMUP" --sim-duration "$SIM_S" --sim-reps "$SIM_REPS" "${phases[@]}" --out "$D/scenario-norun.yaml"
    ./vlsim run "$D/scenario-norun.yaml" --csv "$D/sim-norun.csv" -q 2> "$D/sim-norun.log"
    ./vlrealpipe compare --load "$L" --sim "$D/sim-norun.csv" --warmup "$WARMUP" --out "$D/rows-norun.csv" \
      "${used[@]}" > /dev/null
  fi
  if [ "$TURN_S" != 0 ]; then      # the same prediction with exponential turns: what the ticks do
    ./vlrealpipe scenario --calib "$L_TINY" --decode-calib "$L_DEC" --wakeup "$L_WAKE" --cores-calib "$L_CORE" \
      --wake-calib "$L_WCAL" "${DRIFT[@]}" "${STACK_EXP[@]}" "${COLD[@]}" --fps "$FPS" --cores "$CORES" --warmup "$WARMUP" \
      --sim-duration "$SIM_S" --sim-reps "$SIM_REPS" "${phases[@]}" --out "$D/scenario-expturns.yaml"
    ./vlsim run "$D/scenario-expturns.yaml" --csv "$D/sim-expturns.csv" -q 2> "$D/sim-expturns.log"
    ./vlrealpipe compare --load "$L" --sim "$D/sim-expturns.csv" --warmup "$WARMUP" --out "$D/rows-expturns.csv" \
      "${used[@]}" > /dev/null
    # and without the protected slices: every woken op takes its core at once
    ./vlrealpipe scenario --calib "$L_TINY" --decode-calib "$L_DEC" --wakeup "$L_WAKE" --cores-calib "$L_CORE" \
      --wake-calib "$L_WCAL" "${DRIFT[@]}" "${STACK[@]}" --no-protect "${COLD[@]}" --fps "$FPS" --cores "$CORES" \
      --warmup "$WARMUP" --sim-duration "$SIM_S" --sim-reps "$SIM_REPS" "${phases[@]}" --out "$D/scenario-noprotect.yaml"
    ./vlsim run "$D/scenario-noprotect.yaml" --csv "$D/sim-noprotect.csv" -q 2> "$D/sim-noprotect.log"
    ./vlrealpipe compare --load "$L" --sim "$D/sim-noprotect.csv" --warmup "$WARMUP" --out "$D/rows-noprotect.csv" \
      "${used[@]}" > /dev/null
    # and with a held wake-up waiting at most out the running job's protected slice
    sed 's/^cpu: {cores: \([0-9]*\),/cpu: {cores: \1, wake_held_until: slice,/' "$D/scenario.yaml" \
      > "$D/scenario-slice.yaml"
    ./vlsim run "$D/scenario-slice.yaml" --csv "$D/sim-slice.csv" -q 2> "$D/sim-slice.log"
    ./vlrealpipe compare --load "$L" --sim "$D/sim-slice.csv" --warmup "$WARMUP" --out "$D/rows-slice.csv" \
      "${used[@]}" > /dev/null
  fi
  # the same prediction at the machine's speed during the runs: each compared run's
  # after-run capacity over the calibrated one (the probe: mixcal alone, right after
  # the run; never the run's spans), their mean scaling every cpu.speed factor
  SCALE=$(awk -F, -v l="$L" -v none="$(awk -F, -v l="$L" '$1 == l {print $2}' "$WORK/used.csv")" \
    '$1 == l && (none == "none" || $9 == 1) { s += $4; n++ } END { printf "%.4f", n ? s / n : 1 }' "$WORK/probe.csv")
  echo "$L,$SCALE" >> "$WORK/speed-scale.csv"
  predict_at_speed probed "$SCALE"
  # how sharp the prediction is: the same at the machine BAND slower and faster
  if [ "$BAND" != 0 ]; then
    for side in slow fast; do
      BS=$(awk -v b="$BAND" -v s="$side" 'BEGIN { printf "%.4f", s == "slow" ? 1 - b : 1 + b }')
      predict_at_speed "$side" "$BS"
    done
  fi
  awk '/^# index/ {on = /frame end to end/; next} on && NF == 2' "$D/plot/cdf.dat" > "$D/sim-cdf.dat"
  ./vlrealpipe compare --load "$L" --sim "$D/sim.csv" --warmup "$WARMUP" --out "$D/rows.csv" \
    --spread "$D/spread-used.csv" --cdf "$D/real-cdf.dat" --overlap "$D/overlap.csv" \
    --sim-spans "$D/sim-spans.csv" --stages "$D/stages.csv" --batches "$D/batches.csv" \
    --gop-stages "$D/gop-stages.csv" "${used[@]}" \
    | tee -a "$WORK/summary.txt" >&2
  # each compared run alone against the same prediction with every replication
  # replaying that run's phases: the model's error run by run (a bias shows in
  # every run; a run whose machine drifted from the calibration stands out alone)
  echo "load,run,stage,metric,real_ms,sim_ms,rel_err" > "$D/rows-perrun.csv"
  for f in "${used[@]}"; do
    r=$(basename "$f" .csv)
    r=${r#spans-}
    ./vlrealpipe scenario "${PREDICT[@]}" --phases-from "$f" --out "$D/scenario-run$r.yaml"
    ./vlsim run "$D/scenario-run$r.yaml" --csv "$D/sim-run$r.csv" -q 2> "$D/sim-run$r.log"
    ./vlrealpipe compare --load "$L" --sim "$D/sim-run$r.csv" --warmup "$WARMUP" --out "$D/rows-run$r.csv" \
      "$f" > /dev/null
    awk -F, -v r="$r" 'NR > 1 { $1 = $1 "," r; print }' OFS=, "$D/rows-run$r.csv" >> "$D/rows-perrun.csv"
  done
  # every run's own figures (the spread), those left out too, and every run pooled:
  # the comparison's own when none was left out
  if [ "${#used[@]}" = "${#spans[@]}" ]; then
    cp "$D/spread-used.csv" "$D/spread.csv"
    cp "$D/rows.csv" "$D/rows-all.csv"
  else
    ./vlrealpipe compare --load "$L" --sim "$D/sim.csv" --warmup "$WARMUP" --out "$D/rows-all.csv" \
      --spread "$D/spread.csv" "${spans[@]}" > /dev/null
  fi
done

# ---- 4. outputs (each built beside, then moved into place) ----
# The per-load CSVs NAME of every load point as one: the first one's header, then rows.
# One load's row of the ops table: its runs' op logs (after the warm-up) against
# its mix calibration, CPU per op over the mix's mean for the same shape (decode:
# the GOP's I- and P-frames weighted as a stream meets them).
ops_vs_mix() {
  local L=$1 mix=$2 gop tok
  shift 2
  gop=$(grep -o 'gop: {length: [0-9]*' "$WORK/runs/$L/scenario.yaml" | grep -o '[0-9]*$')
  tok=$(grep -o 'keep_tokens: [0-9]*' "$WORK/runs/$L/scenario.yaml" | grep -o '[0-9]*$')
  awk -F, -v L="$L" -v mix="$mix" -v gop="${gop:-30}" -v tok="${tok:-16}" -v w="$WARMUP" '
    BEGIN { while ((getline line < mix) > 0) { split(line, f, " ")
              if (f[1] == "decode_video" && f[2] == "I-frame") m["d"] += f[4] / gop
              if (f[1] == "decode_video" && f[2] == "P-frame") m["d"] += f[4] * (gop - 1) / gop
              if (f[1] == "encode" && f[2] == "batch") m["e" f[3]] = f[5]
              if (f[1] == "prefill" && f[3] == "tokens") m["p" f[2]] = f[5] } }
    $1 != "kind" && $5 > 1000 * w { k = $1 == "decode" ? "d" : $1 == "encode" ? "e" $2 : $1 == "prefill" ? "p" $2 : ""
              if (k != "") { n[k]++; c[k] += $7 } }
    function cell(k, mk) { return n[k] > 0 && m[mk] > 0 ? sprintf("%.3f (%d)", c[k] / n[k] / m[mk], n[k]) : "-" }
    END { printf "| %s | %s | %s | %s | %s | %s |\n", L, cell("d", "d"), cell("e1", "e1"), cell("e2", "e2"),
            cell("e3", "e3"), cell("p1", "p" tok) }' "$@"
}

join_loads() {
  local first=1
  for L in $LOADS; do
    if [ $first = 1 ]; then cat "$WORK/runs/$L/$1"; else tail -n +2 "$WORK/runs/$L/$1"; fi
    first=0
  done
}
join_loads rows.csv > "$WORK/results.csv"
join_loads rows-iso.csv > "$WORK/results-iso.csv"
join_loads rows-probed.csv > "$WORK/results-probed.csv"
[ "$BAND" = 0 ] || join_loads rows-slow.csv > "$WORK/results-slow.csv"
[ "$BAND" = 0 ] || join_loads rows-fast.csv > "$WORK/results-fast.csv"
[ "$DRIFT_S" = 0 ] || join_loads rows-steady.csv > "$WORK/results-steady.csv"
[ "$STACK_S" = 0 ] || join_loads rows-pooled.csv > "$WORK/results-pooled.csv"
[ "$STACK_S" = 0 ] || join_loads rows-norun.csv > "$WORK/results-norun.csv"
[ "$TURN_S" = 0 ] || join_loads rows-expturns.csv > "$WORK/results-expturns.csv"
[ "$TURN_S" = 0 ] || join_loads rows-noprotect.csv > "$WORK/results-noprotect.csv"
[ "$TURN_S" = 0 ] || join_loads rows-slice.csv > "$WORK/results-slice.csv"
[ "$COLD_S" = 0 ] || join_loads rows-warm.csv > "$WORK/results-warm.csv"
[ "$DUTY_S" = 0 ] || join_loads rows-duty.csv > "$WORK/results-duty.csv"
[ "$STALL_S" = 0 ] || join_loads rows-nostalls.csv > "$WORK/results-nostalls.csv"
[ "$STALL_S" = 0 ] || join_loads late-release.csv > "$WORK/late-release.csv"
[ "$POLL" = 0 ] || join_loads rows-nopoll.csv > "$WORK/results-nopoll.csv"
FLAT=1                            # every load point's scenario had the clip's content
for L in $LOADS; do if [ ! -f "$WORK/runs/$L/rows-flat.csv" ]; then FLAT=0; fi; done
[ "$FLAT" = 0 ] || join_loads rows-flat.csv > "$WORK/results-flat.csv"
join_loads rows-perstream.csv > "$WORK/results-perstream.csv"
join_loads rows-perrun.csv > "$WORK/results-perrun.csv"
join_loads spread.csv > "$WORK/spread.csv"
join_loads spread-used.csv > "$WORK/spread-used.csv"
join_loads rows-all.csv > "$WORK/results-allruns.csv"
join_loads overlap.csv > "$WORK/overlap.csv"
join_loads sim-overlap.csv > "$WORK/overlap-sim.csv"
join_loads stages.csv > "$WORK/stages.csv"
join_loads gop-stages.csv > "$WORK/gop-stages.csv"
join_loads batches.csv > "$WORK/batches.csv"

# Keep this experiment where the next ones can be set against it again: the
# real runs' spans, the scenarios and what they read, probe.csv (not the
# simulations' own outputs, the op logs or the plots: they are made again).
KEPT=build/validate-history/$STAMP
mkdir -p "$KEPT.partial"
tar -C "$WORK" -cf - --exclude='sim*.csv' --exclude='sim*.log' --exclude='ops-*.csv' --exclude=plot \
  --exclude='*-cdf.dat' runs calib probe.csv | tar -C "$KEPT.partial" -xf -
mv "$KEPT.partial" "$KEPT"
log "kept this experiment in $KEPT ($(du -sh "$KEPT" | cut -f1))"
if [ "$HISTORY" != 0 ]; then
  log "setting the prediction against the last $HISTORY kept experiments (calib/realpipe/history.sh)"
  calib/realpipe/history.sh -s -n "$HISTORY" -o "$WORK/history.csv" -f > "$WORK/history.md" 2> "$WORK/history.log" \
    || { cat "$WORK/history.log" >&2; echo "validate: history.sh failed" >&2; exit 1; }
fi

# the CDF plot: real (points) vs predicted (lines) per load
{
  echo "set terminal pngcairo size 1000,650 noenhanced"
  echo "set output '$WORK/cdf.png'"
  echo "set title 'End-to-end frame latency: real pipeline (points) vs simulator (lines)'"
  echo "set xlabel 'frame latency (ms, log scale)'; set ylabel 'fraction of frames at or below'"
  echo "set logscale x; set key bottom right; set grid"
  echo "set yrange [0:1.01]"
  printf "plot "
  k=1; sep=""
  for L in $LOADS; do
    printf "%s'%s' using 1:2 with points pt 7 ps 0.3 lc %d title 'real, load %s', " \
      "$sep" "$WORK/runs/$L/real-cdf.dat" "$k" "$L"
    printf "'%s' using 1:2 with lines lw 2 lc %d title 'sim, load %s'" "$WORK/runs/$L/sim-cdf.dat" "$k" "$L"
    sep=", "; k=$((k + 1))
  done
  echo
} > "$WORK/cdf.gp"
gnuplot "$WORK/cdf.gp"

# The end-to-end rows of a results file, with the range of the single real runs
# (spread.csv: each run's p50, p95, p99, drop %) beside them: a prediction
# inside that range is as close as one real run is to another; and the real
# value's own standard error from its runs (their values' sd / sqrt(runs), as a
# share of the pooled value; drop rate in points): a target tighter than it
# cannot be told from the real runs' noise.
frame_table() {
  echo "| load | metric | real ms | sim ms | rel err | within target | real's SE (runs) | single runs' range | sim within it |"
  echo "|---|---|---|---|---|---|---|---|---|"
  awk -F, 'FNR == NR { if (FNR > 1) for (c = 4; c <= 7; c++) { k = $1 "," c; n[k]++; s[k] += $c; ss[k] += $c * $c
             if (!(k in lo) || $c + 0 < lo[k]) lo[k] = $c + 0; if (!(k in hi) || $c + 0 > hi[k]) hi[k] = $c + 0 }
           next }
           FNR > 1 && $2 == "frame" {
      tol = $3 == "p99" ? 0.10 : $3 == "drop_rate" ? 1.0 : 0.05;
      c = $3 == "p50" ? 4 : $3 == "p95" ? 5 : $3 == "p99" ? 6 : 7; k = $1 "," c;
      e = $6 < 0 ? -$6 : $6;
      se = "-"
      if (n[k] > 1) { m = s[k] / n[k]; v = (ss[k] - n[k] * m * m) / (n[k] - 1); if (v < 0) v = 0
                      v = sqrt(v / n[k])
                      se = $3 == "drop_rate" ? sprintf("%.2f pt", v) : ($4 > 0 ? sprintf("%.1f %%", 100 * v / $4) : "-") }
      printf "| %s | %s | %.3f | %.3f | %s | %s | %s | %.3f to %.3f | %s |\n", $1, $3, $4, $5,
             $3 == "drop_rate" ? sprintf("%+.2f pt", $6) : sprintf("%+.1f %%", 100 * $6),
             e <= tol ? "yes" : "**no**", se, lo[k], hi[k], ($5 >= lo[k] && $5 <= hi[k]) ? "yes" : "no" }' \
    "$WORK/spread-used.csv" "$1"
}

# One table row per load of a CSV load,item,real,sim,...: "real / sim" cells in
# the file's order, each number printed with FMT.
real_sim_rows() {
  awk -F, -v fmt="$2" 'NR > 1 { if (!($1 in row)) order[++n] = $1
                                row[$1] = row[$1] sprintf(" " fmt " / " fmt " |", $3, $4) }
           END { for (i = 1; i <= n; i++) printf "| %s |%s\n", order[i], row[order[i]] }' "$1"
}

elapsed=$(( $(date +%s) - t_start ))
{
  echo "# Validation: the simulator against the real pipeline"
  echo
  [ -n "$NOTE" ] && { echo "**$NOTE**"; echo; }
  echo "Written by \`make validate\` (calib/realpipe/validate.sh) on $(date -u +%Y-%m-%dT%H:%M:%SZ),"
  echo "$CORES CPUs ($(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')); load average (1, 5, 15 min)"
  echo "$LOAD_BEFORE before, $(cut -d' ' -f1-3 /proc/loadavg) after; ${elapsed} s in all; calibration and"
  echo "real runs at nice $NICE. Wake-up latency"
  echo "(vlcalib wakeup, idle cores, then every core busy) and the cores' speed-up with 1..4"
  echo "threads busy, by threads spinning on the clock (vlcalib wakeup --ring 4; reported, not"
  echo "used) and by threads running the pipeline's ops (vlrealpipe corecal; the scenario's"
  echo "cpu.speedup):"
  echo
  echo '```'
  grep -v '^#' "$WORK/calib/wakeup.yaml"
  cat "$CORE"
  echo '```'
  echo
  echo "How long a thread waits to run with 0, 1, 2+ of the pipeline's ops on the cores"
  echo "(vlrealpipe wakecal, apart from the pipeline: cores + 1 workers on one queue, the ops"
  echo "released at Poisson times at 20-80 % of the cores): wake, a job handed to a sleeping"
  echo "worker, by the ops running at the handoff; timer, how late the release thread's timed"
  echo "wait woke, by the ops running when it was due. Each cell: the share held till the first"
  echo "running op's end (the scenario's cpu.wake_held / timer_held), then the other, quick"
  echo "waits' mean ms and p90 (cpu.wake_busy / timer_busy draw from their samples); the wake"
  echo "index (the after-run probe's yardstick) is the geometric mean of the two class-0 p90s:"
  echo "| calibration | wake 0 | wake 1 | wake 2+ | timer 0 | timer 1 | timer 2+ | wake index ms |"
  echo "|---|---|---|---|---|---|---|---|"
  for w in "$WCAL" $( [ "$RECAL" = 1 ] && for L in $LOADS; do echo "$WORK/runs/$L/wakecal.yaml"; done ); do
    lab=$(basename "$(dirname "$w")"); [ "$lab" = calib ] && lab=first || lab="load $lab"
    awk -v lab="$lab" '
      function cells(line,   m, p, h, i, out) {
        match(line, /mean_ms: \[[^]]*\]/); m = substr(line, RSTART + 10, RLENGTH - 11)
        match(line, /p90_ms: \[[^]]*\]/);  p = substr(line, RSTART + 9, RLENGTH - 10)
        match(line, / held: \[[^]]*\]/);   h = substr(line, RSTART + 8, RLENGTH - 9)
        split(m, mm, ", "); split(p, pp, ", "); split(h, hh, ", "); out = ""
        for (i = 1; i <= 3; i++) out = out sprintf(" %.0f %%; %.3f (%.3f) |", 100 * hh[i], mm[i], pp[i])
        return out }
      /^wake_busy:/ { w = cells($0) } /^timer_busy:/ { t = cells($0) }
      END { printf "| %s |%s%s %s |\n", lab, w, t, idx }' idx="$(wake_index "$w")" "$w"
  done
  echo
  echo "The ops timed in the pipeline's op mix on one thread (vlrealpipe mixcal; iso: vlcalib's"
  echo "back-to-back timings of the same shapes, ratio = mix / iso):"
  echo
  echo '```'
  cat "$WORK/calib/mixcal.txt"
  echo '```'
  echo
  echo "Capacity, from the mix calibration alone (vlrealpipe capacity), and from the"
  echo "back-to-back one:"
  echo
  echo "The simulator ran on scenarios generated from the calibration alone"
  echo "(validation/calib/), never from the pipeline's spans."
  echo
  echo '```'
  cat "$WORK/capacity.txt"
  echo "# from vlcalib's back-to-back timings instead:"
  grep -v '^# means' "$WORK/capacity-iso.txt" | sed 's/^capacity_fps_per_stream/# capacity_fps_per_stream/'
  echo '```'
  echo
  echo "Real: $RUNS runs per load of ${DURATION} s of frames (first ${WARMUP} s not measured),"
  echo "pooled; simulated: $SIM_REPS replications x ${SIM_S} s, replaying the real runs' stream"
  echo "phases in turn (the workload they were given: vlrealpipe scenario --phases-from)."
  echo "rel_err = (sim - real) / real;"
  echo "for drop_rate the columns are percentages and rel_err is sim - real in points."
  echo "Target: frame p50 and p95 within 5 %, p99 within 10 %, drop rate within 1 point."
  echo
  echo "## End to end (frame)"
  echo
  frame_table "$WORK/results.csv"
  echo
  nout=$(n_left_out)
  nonepass=$(awk -F, '$2 == "none" { printf "%s%s", n++ ? ", " : "", $1 }' "$WORK/used.csv")
  if [ -n "$nonepass" ]; then
    echo "**No run at load $nonepass had the machine its calibration measured (every attempt"
    echo "failed the check below): those rows compare runs on another machine than the one"
    echo "calibrated.**"
    echo
  fi
  if [ "$nout" != 0 ]; then
    echo "Every real run pooled, those whose check failed at every attempt too (validation/"
    echo "results-allruns.csv; the table above leaves them out where another run of the load passed):"
    echo
    frame_table "$WORK/results-allruns.csv"
    echo
  fi
  echo "## What a model exactly right could reach here"
  echo
  echo "The real runs of a load point, a minute apart, differ from one another, so the pooled"
  echo "real figure is itself uncertain: its standard error is the sd of the compared runs'"
  echo "own figures over the square root of their number (relative to their mean; the drop"
  echo "rate in points). A model that predicted the machine's true figure exactly would land"
  echo "within a target of +-tol with the chance erf(tol / (sqrt(2) SE)) (calib/realpipe/"
  echo "floor.awk, the normal approximation; with 2-3 runs the sd is rough and more often too"
  echo "small than too large, so these chances lean optimistic). Where they are far below 1,"
  echo "the target cannot be told from the real runs' noise, however good the model:"
  echo
  awk -f calib/realpipe/floor.awk "$WORK/spread-used.csv"
  echo
  if [ "$HISTORY" != 0 ]; then
    echo "## Across validations: the model's bias and the machine's spread"
    echo
    echo "One validation's error is the model's and that hour's machine's together. The last"
    echo "$(awk -F, 'NR > 1 && !($1 in v) { v[$1]; n++ } END { print n }' "$WORK/history.csv") experiments kept on this machine (build/validate-history/, this one last),"
    echo "each simulated again with this vlsim on the scenario written then, against its own"
    echo "real runs (calib/realpipe/history.sh; every stage in validation/history.csv): the mean"
    echo "error of a figure over them is the model's bias, their SD the machine's spread; then"
    echo "each stage's percentiles, mean +- SD of the error (where in the pipeline a bias sits)."
    echo
    cat "$WORK/history.md"
    echo
  fi
  echo "## The same loads predicted from vlcalib's back-to-back timings"
  echo
  echo "The same real runs against the simulator on the scenario written from the"
  echo "isolated back-to-back calibration (vlcalib, vlcalib decode) instead of the mix:"
  echo
  frame_table "$WORK/results-iso.csv"
  echo
  echo "## The same loads at the machine's speed during the runs"
  echo
  echo "The load point's calibration is taken a minute or two before its runs, and the"
  echo "machine moves in between (the runs are kept within ${PROBE_TOL} of it, below). The"
  echo "probe right after each run (mixcal alone, no pipeline) measured the capacity the"
  echo "machine had then; the same prediction with every cpu.speed factor times the mean"
  echo "of the compared runs' after-run capacity over the calibrated (vlrealpipe scenario"
  echo "--speed-scale; validation/results-probed.csv) says how much of the error above is"
  echo "the machine having moved since its calibration. Scale by load: $(awk -F, '{printf "%s%s x %s", n++ ? ", " : "", $1, $2}' "$WORK/speed-scale.csv")."
  echo
  frame_table "$WORK/results-probed.csv"
  echo
  if [ "$BAND" != 0 ]; then
    echo "## How sharp the prediction is: the same loads at the machine $(awk -v b="$BAND" 'BEGIN { printf "%g", 100 * b }') % slower and faster"
    echo
    echo "The machine's speed is known to a few per cent at best: the after-run probes above"
    echo "move by up to ${PROBE_TOL} within a load point, and the runs' own CPU per frame (getrusage,"
    echo "the spread table below) differs from the calibration's work per frame by as much."
    echo "The same prediction with every cpu.speed factor times 1 - $BAND and 1 + $BAND (vlrealpipe"
    echo "scenario --speed-scale): near the knee a few per cent of speed move the percentiles"
    echo "far more than the target allows, and a real figure outside the band is the model's"
    echo "error, not the calibration's (BAND=0: not run)."
    echo
    echo "| load | metric | real ms | sim, slower | sim | sim, faster | real within the band |"
    echo "|---|---|---|---|---|---|---|"
    awk -F, 'FNR == 1 { f++ } FNR > 1 && $2 == "frame" && $3 != "drop_rate" {
               k = $1 "," $3; if (f == 1) { order[++n] = k; lo[k] = $1; me[k] = $3; real[k] = $4 }
               sim[k, f] = $5 }
             END { for (i = 1; i <= n; i++) { k = order[i]
                     a = sim[k, 2] < sim[k, 3] ? sim[k, 2] : sim[k, 3]; b = sim[k, 2] < sim[k, 3] ? sim[k, 3] : sim[k, 2]
                     if (sim[k, 1] < a) a = sim[k, 1]; if (sim[k, 1] > b) b = sim[k, 1]
                     printf "| %s | %s | %.3f | %.3f | %.3f | %.3f | %s |\n", lo[k], me[k], real[k], sim[k, 2], sim[k, 1],
                            sim[k, 3], (real[k] >= a && real[k] <= b) ? "yes" : "no" } }' \
      "$WORK/results.csv" "$WORK/results-slow.csv" "$WORK/results-fast.csv"
    echo
  fi
  if [ "$DRIFT_S" != 0 ]; then
    echo "## The same loads at one speed"
    echo
    echo "The prediction's scenario says how the machine's speed moved (cpu.speed: vlrealpipe"
    echo "driftcal, ${DRIFT_S} s before the load points, $CORES threads repeating the pipeline's"
    echo "work, the units done per ${DRIFT_WINDOW_MS} ms window over their mean):"
    echo
    grep '^# ' "$WORK/calib/driftcal.yaml" | sed 's/^# /    /'
    echo
    echo "The same real runs against the same scenario without it (the cores at one speed):"
    echo
    frame_table "$WORK/results-steady.csv"
    echo
  fi
  if [ "$COLD_S" != 0 ]; then
    echo "## The same loads with warm cores"
    echo
    echo "The prediction's scenario says how much slower an op runs when its core was idle"
    echo "before it (cpu.cold: vlrealpipe coldcal, ${COLD_S} s before the load points, one thread"
    echo "running the pipeline's op mix with a sleep of a random gap before each op; mixcal"
    echo "times the ops back to back, its caches always warm):"
    echo
    grep '^# \|^cold' "$WORK/calib/coldcal.yaml" | sed 's/^# /    /; s/^cold/    cold/'
    echo
    echo "The same real runs against the same scenario without it (every op as fast as back"
    echo "to back):"
    echo
    frame_table "$WORK/results-warm.csv"
    echo
  fi
  if [ "$STALL_S" != 0 ]; then
    echo "## The same loads without the host's stalls"
    echo
    echo "An idle core of the VM halts and the host gives its CPU to others; to wake a thread"
    echo "there it must run the core again, and now and then does so 5 to 100 ms late. Every"
    echo "thread woken onto that core in the spell waits for its end together (the camera thread"
    echo "releases the frames due meanwhile at once). vlrealpipe stallcal measures the spells"
    echo "apart from the pipeline, ${STALL_S} s just before each load point's runs (rp_stall.h: one"
    echo "thread pinned to each CPU sleeping to times 1 ms apart; a wake 5 ms late or more is a"
    echo "spell; the prediction's cpu.stalls):"
    echo
    for L in $LOADS; do
      echo "    load $L:"
      grep '^# spells\|^stalls' "$WORK/runs/$L/stallcal.yaml" | sed 's/^# /      /; s/^stalls/      stalls/'
    done
    echo
    if [ "$STALL_S" != 0 ] && [ "$POLL_S" != 0 ]; then
      echo "A core idle only a moment is not exposed: the host polls a halted core a while (KVM's"
      echo "halt polling) before it gives its CPU away. vlrealpipe stallcal --periods $POLL_PERIODS,"
      echo "${POLL_S} s before the load points (the sleeps in turn, a second each; the window put"
      echo "between the two sleeps where the rate rises, by a likelihood ratio test; each load's"
      echo "stallcal then writes it as cpu.stalls.poll_ms):"
      echo
      grep '^# ' "$WORK/calib/stallpoll.yaml" | sed -n '/sleep_ms/,$p' | sed 's/^# /    /'
      echo
    fi
    echo "The frames (after the warm-up) released 5 ms or more after their time, %: the real"
    echo "runs, and replication 0 of the prediction with and without cpu.stalls:"
    echo
    echo "| load | real | sim | sim without stalls |"
    echo "|---|---|---|---|"
    awk -F, 'NR > 1 { printf "| %s | %.2f | %.2f | %.2f |\n", $1, $2, $3, $4 }' "$WORK/late-release.csv"
    echo
    echo "The same real runs against the prediction without cpu.stalls (the prediction before"
    echo "2026-12-06 11:00 UTC):"
    echo
    frame_table "$WORK/results-nostalls.csv"
    echo
    if [ "$POLL" != 0 ]; then
      echo "The same real runs against the prediction with cpu.stalls but no poll window (every"
      echo "wake-up onto an idle core exposed; the prediction of 2026-12-06 11:00-14:00 UTC):"
      echo
      frame_table "$WORK/results-nopoll.csv"
      echo
    fi
  fi
  if [ "$DUTY_S" != 0 ]; then
    echo "## The same loads with ops slower while the cores idled lately (reported, not the prediction)"
    echo
    echo "At 30 % load the real pipeline's ops took 8-20 % more CPU each than the mix"
    echo "calibration taken just before (the runs' op logs), at 50-85 % about as much: a thread"
    echo "whose cores have been idle much of the time lately runs slower. vlrealpipe dutycal"
    echo "measures it apart from the pipeline (rp_duty.h: the cores' threads repeat corecal's unit,"
    echo "each sleeping after a unit to stay busy a duty; CPU per unit at a duty over at 1):"
    echo
    grep '^# \|^duty' "$WORK/calib/dutycal.yaml" | sed 's/^# /    /; s/^duty/    duty/'
    echo
    echo "The same real runs against the prediction with it added (cpu.duty, by the cores'"
    echo "recent utilisation, half-life 32 ms):"
    echo
    frame_table "$WORK/results-duty.csv"
    echo
    echo "Each load's ops in its real runs (the op log, after the warm-up): CPU ms per op over"
    echo "the same shape in that load's mix calibration:"
    echo
    echo "| load | decode | encode batch 1 | encode batch 2 | encode batch 3 | prefill batch 1 |"
    echo "|---|---|---|---|---|---|"
    for L in $LOADS; do
      D=$WORK/runs/$L
      [ -f "$D/mixcal.txt" ] || D=$WORK/calib
      ops_vs_mix "$L" "$D/mixcal.txt" "$WORK/runs/$L"/ops-*.csv
    done
    echo
  fi
  if [ "$FLAT" != 0 ]; then
    echo "## The same loads with every frame of the clip alike"
    echo
    echo "Every stream plays the one calibration clip from its first frame, so the 8 streams"
    echo "decode the same picture within one frame interval, and a busy picture costs more"
    echo "wherever it is decoded. The prediction's scenario says so (gop.content: each clip"
    echo "frame's mean decode time in the mix calibration over its type's mean, the draws"
    echo "being the samples over their frames' factors). The factors, first GOP then second:"
    echo
    grep -v '^#' "$WORK/calib/mix-h264.content" | awk '{ printf "%s%.2f", (NR > 1 ? (NR == 31 ? "\n    " : " ") : "    "), $1 } END { print "" }'
    echo
    echo "The same real runs against the same scenario with every frame drawn from its type's"
    echo "samples alike (the simulator before 2026-12-04):"
    echo
    frame_table "$WORK/results-flat.csv"
    echo
  fi
  echo "## The same loads with a camera thread per stream"
  echo
  echo "The real pipeline's frames are released by one thread, in time order: it sleeps to"
  echo "the next frame's time, wakes late (the timer family), and hands over every frame due"
  echo "by then before it sleeps again; a woken decode worker pops the queue's head, so frames"
  echo "start in that order too. The prediction's scenario says so (cpu.source: one_thread)."
  echo "The same real runs against the same scenario with each stream's frames released by"
  echo "a thread of its own, each frame late by its own draw, so frames of different streams"
  echo "due close together may enter in either order (cpu.source: timer; the prediction"
  echo "before 2026-12-04 20:00 UTC):"
  echo
  frame_table "$WORK/results-perstream.csv"
  echo
  if [ "$STACK_S" != 0 ]; then
    echo "## The same loads with the cores pooled"
    echo
    echo "The prediction's scenario places each job on a core (cpu.stack: vlrealpipe stackcal,"
    echo "4 x ${STACK_S} s before the load points, threads handing busy-loop ops of the real ops'"
    echo "times over as the pipeline's do; share: of the ops whose thread was woken for them and"
    echo "that started beside another with a CPU free, those put on the busy CPU; migrate_ms: the"
    echo "mean wait for a move to the free CPU after such a start; pull_ms: after a CPU's last op"
    echo "ended beside a shared CPU, fitted so that the simulator run on stackcal's own threads"
    echo "and ops puts two ops on one core for stackcal's measured share of the two-op time"
    echo "(calib/realpipe/rp_stackfit.h; the measured mean is printed beside it); a thread going"
    echo "on at once stays on its core; switch_ms: the"
    echo "mean wait before a shared CPU turns from the op that took it to the other, the jobs on"
    echo "one core taking turns; stack_load: the share at each load's CPU utilisation, which the"
    echo "scenario interpolates at the cores' recent utilisation):"
    echo
    grep '^# [0-9]\|^# all:\|^# the simulator\|^# the two\|^#   [ms]\|^# pull_ms\|^stack' "$WORK/calib/stackcal.yaml" \
      | sed 's/^# /    /; s/^#   /      /; s/^stack/    stack/'
    echo
    echo "It is the prediction since 2026-12-03 19:20 UTC: in the real runs two ops share one CPU"
    echo "with the other CPU free (the table of the ops off their core below), which only placement"
    echo "can give, and over the seven make validate runs of 2026-12-03 it was nearer than the"
    echo "pooled cores on 51 of the 84 frame figures (on the three of 2026-12-04, 17 of 36:"
    echo "README.md). Since 2026-12-04 06:00 UTC pull_ms is fitted on stackcal's own threads (with"
    echo "the measured mean the simulator put two jobs on one core for about twice stackcal's"
    echo "share). What is still off: in the pipeline it slows the executor's ops beside two or more"
    echo "decodes where the real ones hardly slow (the ops by the others beside them, below)."
    echo "The same real runs against the same scenario"
    echo "with the cores pooled instead (every job spread evenly over them at every instant):"
    echo
    frame_table "$WORK/results-pooled.csv"
    echo
    echo "### The same loads with the share by load alone"
    echo
    echo "The prediction's share of woken ops put beside a running one is split in two factors"
    echo "(stackcal's stack_run line, rp_stack_runfit: one by load and one by the busy CPU's run,"
    echo "how long it had been running ops, a thread going on within ${RUN_BRIDGE_MS} ms keeping its run;"
    echo "the scenario's cpu.stack.run). Linux's EEVDF lets a running thread keep its CPU till it"
    echo "has had its slice, so a woken thread put beside a young run waits there and is pulled to"
    echo "the free CPU before it starts; beside an old one it takes the CPU at once. stackcal's"
    echo "share by the busy CPU's run (ms, its bins), pooled over the loads:"
    echo
    grep '^#   all: share by' "$WORK/calib/stackcal.yaml" | sed 's/^#   /    /'
    echo
    echo "The same real runs against the same scenario with the share by load alone (the"
    echo "prediction before 2026-12-05):"
    echo
    frame_table "$WORK/results-norun.csv"
    echo
  fi
  if [ "$TURN_S" != 0 ]; then
    echo "## The same loads with exponential turns"
    echo
    echo "The prediction's cores turn at the scheduler's tick (cpu.stack.tick_ms and through:"
    echo "vlrealpipe turncal, ${TURN_S} s before the load points, apart from the pipeline): while a"
    echo "core holds two or more jobs, the running one keeps it until the next tick, except that"
    echo "an op put beside a busy one runs through (never cut) with the share turncal measured"
    echo "at its length (interpolated). turncal pins a busy thread and a thread that sleeps 1 ms"
    echo "and then runs an op of W ms to one CPU; an op's wall time over W is 2 - share(W) in"
    echo "that model, and the slice model's closed form (no op through) is shown beside:"
    echo
    grep '^#\|^turns' "$WORK/calib/turncal.yaml" | sed 's/^# \{0,1\}/    /; s/^turns/    turns/'
    echo
    echo "The same real runs against the same scenario with stackcal's exponential turns"
    echo "instead (switch_ms: the core turns after an exponential wait, whatever the op's age;"
    echo "the prediction before 2026-12-04 11:45 UTC):"
    echo
    frame_table "$WORK/results-expturns.csv"
    echo
    echo "## The same loads without protected slices"
    echo
    echo "The prediction holds a woken op put beside a running one that woke less than"
    echo "protect.ms ago (turncal's protect part, in the turns line above: a runner that wakes"
    echo "and spins 2 ms and a wakee woken 0-1 ms after it, pinned to one CPU; Linux's EEVDF"
    echo "protects a thread it has just woken for the first part of its slice, and whether the"
    echo "wakee waits depends on the two threads' lag), with the share turncal measured at the"
    echo "woken op's length, until the running one has had protect.ms. The same real runs"
    echo "against the same scenario with every woken op taking its core at once (the"
    echo "prediction before 2026-12-05 06:10 UTC):"
    echo
    frame_table "$WORK/results-noprotect.csv"
    echo
    echo "## The same loads with held wake-ups bounded by the protected slice (reported, not the prediction)"
    echo
    echo "A share of the wake-ups with ops running (wakecal's held, cpu.wake_held) waits in the"
    echo "prediction for the next op's end, however long that op is. Linux queues such a wakee"
    echo "on one CPU and lets it preempt the op there once that op has had its protected"
    echo "slice (protect.ms above); wakecal's ops (0.7-1.5 ms) end about when their slice does,"
    echo "the pipeline's I-frame decodes (7-8 ms) and large batches do not. The same real runs"
    echo "against the same scenario with cpu.wake_held_until: slice (a held wake-up runs when"
    echo "the op on its core has had protect.ms, or at an end before; behind an op that had"
    echo "it longer it is not held):"
    echo
    frame_table "$WORK/results-slice.csv"
    echo
  fi
  echo "## Spread of the real runs (each run alone)"
  echo
  echo "Capacity after the run: what a short mix calibration right after it (vlrealpipe mixcal"
  echo "--rounds $PROBE_ROUNDS, about 3 s) gives with the load point's own wake-up and speed-up, in FPS"
  echo "per stream and as a multiple of the load point's calibrated capacity: how fast the"
  echo "machine was then. The load the run ran at is its FPS over that capacity. A run whose"
  echo "capacity after was off by more than $PROBE_TOL (either way) was run again (attempt: the one"
  echo "kept; at most $TRIES). CPU per frame: the run's"
  echo "threads' CPU time (getrusage, user + system) over its frames, against the cores' work per"
  echo "frame the load point's calibration gives (vlrealpipe capacity: decode, the executor's"
  echo "batch-1 share, the handoffs; queries apart). Wake index after: how fast a woken"
  echo "thread ran with the cores idle right after the run (vlrealpipe wakecal --seconds"
  echo "$WAKE_PROBE_S: the geometric mean of its wake and timer class-0 quick p90s, ms), and as a"
  echo "multiple of the load point's wakecal; a run whose index was off by more than a factor"
  echo "$WAKE_TOL (either way) was run again too. Steal: the host's steal during the run"
  echo "(/proc/stat), in % of the CPUs' time: a vCPU ready to run that the host did not run."
  echo "Compared: whether the run is in the comparison above; a run kept at its last attempt"
  echo "with the check failed is left out when another run of its load passed."
  echo
  echo "| load | run | frames | p50 ms | p95 ms | p99 ms | drop % | capacity after (x calibrated) | wake index after (x calibrated) | ran at load | CPU ms per frame (calibrated) | steal % | attempt | compared |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
  for L in $LOADS; do
    cf="$WORK/runs/$L/capacity.txt"
    [ -f "$cf" ] || cf="$WORK/capacity.txt"          # RECAL=0: the first calibration's
    echo "$L,$(sed -n "s/^# the cores' work per frame \([0-9.]*\) ms.*/\1/p" "$cf")"
  done > "$WORK/cpu-cal.csv"
  awk -F, 'FILENAME ~ /fps.csv$/ { fps[$1] = $3; next }
           FILENAME ~ /cpu-cal.csv$/ { cal[$1] = $2; next }
           FILENAME ~ /probe.csv$/ { k = $1 "," $2; cap[k] = sprintf("%.1f (x %.3f)", $3, $4); at[k] = $3 > 0 ? sprintf("%.3f", fps[$1] / $3) : "-"; att[k] = $5
                                     cpu[k] = sprintf("%.3f (%.3f)", $6, cal[$1]); wk[k] = sprintf("%.3f (x %.2f)", $7, $8)
                                     st[k] = $10; okr[k] = $9; next }
           FILENAME ~ /used.csv$/ { none[$1] = $2 == "none"; next }
           FNR > 1 { k = $1 "," ($2 + 1)
                     cmp = (k in okr) ? (okr[k] == 1 ? "yes" : none[$1] ? "yes (none passed)" : "**no**") : "-"
                     printf "| %s | %s | %s | %.3f | %.3f | %.3f | %.3f | %s | %s | %s | %s | %s | %s | %s |\n", $1, $2 + 1, $3, $4, $5, $6, $7,
                            (k in cap) ? cap[k] : "-", (k in wk) ? wk[k] : "-", (k in at) ? at[k] : "-", (k in cpu) ? cpu[k] : "-",
                            (k in st) ? st[k] : "-", (k in att) ? att[k] : "-", cmp }' \
    "$WORK/fps.csv" "$WORK/cpu-cal.csv" "$WORK/probe.csv" "$WORK/used.csv" "$WORK/spread.csv"
  echo
  nrej=$(($(wc -l < "$WORK/rejected.csv") - 1))
  if [ "$nrej" = 0 ]; then
    echo "No run was run again."
  else
    echo "Run again ($nrej; validation/rejected.csv): the attempts whose capacity or wake index after was off."
    echo
    echo "| load | run | attempt | capacity after | x calibrated | wake index after ms | x calibrated | steal % |"
    echo "|---|---|---|---|---|---|---|---|"
    awk -F, 'NR > 1 { printf "| %s | %s | %s | %.1f | %.3f | %.3f | %.2f | %s |\n", $1, $2, $3, $4, $5, $6, $7, $8 }' "$WORK/rejected.csv"
  fi
  recal=$(awk -F, '$2 > 1 { printf "%s%s (%d calibrations)", n++ ? ", " : "", $1, $2 }' "$WORK/recal.csv")
  if [ -n "$recal" ]; then
    echo
    echo "Calibrated again, since no attempt of the first run matched the load point's first"
    echo "calibration (its runs started over; the table below shows the last calibration): $recal."
  fi
  echo
  echo "## Each run against the prediction on its own phases"
  echo
  echo "Each compared run alone against the same prediction with every replication replaying"
  echo "that run's streams' phases (validation/results-perrun.csv). The comparison above pools"
  echo "the runs; here a bias of the model shows in every run, and a run whose machine was not"
  echo "the calibrated one stands out alone (its capacity after, above)."
  echo
  echo "| load | run | p50 real / sim ms | err | p95 real / sim ms | err | p99 real / sim ms | err | within target |"
  echo "|---|---|---|---|---|---|---|---|---|"
  awk -F, 'NR > 1 && $3 == "frame" && $4 != "drop_rate" {
             k = $1 "," $2
             if (!(k in all)) order[++n] = k
             cell[k] = cell[k] sprintf(" %.2f / %.2f | %+.1f %% |", $5, $6, 100 * $7)
             e = $7 < 0 ? -$7 : $7; in_t = e <= ($4 == "p99" ? 0.10 : 0.05)
             ok[k] += in_t; all[k]++; mok[$4] += in_t; mall[$4]++ }
           END { for (i = 1; i <= n; i++) {
                   split(order[i], a, ",")
                   printf "| %s | %s |%s %d of %d |\n", a[1], a[2], cell[order[i]], ok[order[i]], all[order[i]] }
                 printf "\nWithin target, run by run: p50 %d of %d, p95 %d of %d, p99 %d of %d.\n",
                        mok["p50"], mall["p50"], mok["p95"], mall["p95"], mok["p99"], mall["p99"] }' \
    "$WORK/results-perrun.csv"
  echo
  if [ "$RECAL" = 1 ]; then
    echo "## Each load point's own calibration (taken just before its runs)"
    echo
    echo "Its capacity (vlrealpipe capacity on it) sets the load point's FPS per stream."
    echo
    echo "| load | capacity fps | fps | ring speed-up (not used) | corecal speed-up, used (own) | wake ms | timer ms | decode P ms | decode I ms | encode b1 ms | encode b8 ms |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|"
    for L in $LOADS; do
      D="$WORK/runs/$L"
      cf=$(awk -F, -v l="$L" '$1 == l {printf "%.1f | %.2f", $2, $3}' "$WORK/fps.csv")
      tm=$(sed -n 's/^timer: .*mean_ms: \([0-9.]*\).*/\1/p' "$D/wakeup.yaml")
      sp=$(sed -n 's/^speedup: \[\(.*\)\]/\1/p' "$D/wakeup.yaml")
      cc=$(sed -n 's/^speedup: \[\(.*\)\]/\1/p' "$D/corecal.yaml")
      co=$(sed -n 's/^speedup: \[\(.*\)\]/\1/p' "$D/corecal-own.yaml")
      [ "$co" = "$cc" ] || cc="$cc ($co)"
      wk=$(sed -n 's/^wakeup: .*mean_ms: \([0-9.]*\).*/\1/p' "$D/wakeup.yaml")
      awk -v l="$L" -v cf="$cf" -v sp="$sp" -v cc="$cc" -v wk="$wk" -v tm="${tm:--}" '
        $1 == "decode_video" && $2 == "P-frame" { p = $4 } $1 == "decode_video" && $2 == "I-frame" { i = $4 }
        $1 == "encode" && $3 == 1 { e1 = $5 } $1 == "encode" && $3 == 8 { e8 = $5 }
        END { printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", l, cf, sp, cc, wk, tm, p, i, e1, e8 }' "$D/mixcal.txt"
    done
    echo
  fi
  echo "corecal's attempts (validation/corecal-tries.csv): each one's two-thread speed-up,"
  echo "highest round over lowest; one over 1 + $CORE_TOL was taken again (up to $CORE_TRIES"
  echo "times) and the steadiest kept:"
  echo
  echo "| calibration | attempts: spread |"
  echo "|---|---|"
  awk -F, 'NR > 1 { if (!($1 in row)) order[++n] = $1; row[$1] = row[$1] (row[$1] == "" ? "" : ", ") sprintf("x %.3f", $3) }
           END { for (i = 1; i <= n; i++) printf "| %s | %s |\n", order[i], row[order[i]] }' "$WORK/corecal-tries.csv"
  echo
  echo "## The ops with other ops beside them (a diagnostic of the spans)"
  echo
  echo "Each op's time by how many other ops (decodes, executor batches) ran beside it on"
  echo "average over its span (vlrealpipe compare --overlap), in the real runs"
  echo "(validation/overlap.csv) and in the simulator's replication 0 (vlsim run --trace;"
  echo "validation/overlap-sim.csv), classified alike: the mean alone in ms, then the mean"
  echo "with others over the mean alone (n ops). The classes are time-averages, so an op that"
  echo "shared part of its span with two others counts as \"1 other\"."
  echo
  echo "| load | op | alone: real | sim | 1 other: real | sim | 2+ others: real | sim |"
  echo "|---|---|---|---|---|---|---|---|"
  awk -F, 'FNR == 1 { f++; next }
           $2 == "decode_I" { next }
           { k = $1 "," $2
             if (f == 1 && $3 == "0") { order[++n] = k; lab[k] = "| " $1 " | " $2 }
             v = $3 == "0" ? sprintf("%.3f (%d)", $5, $4) : ($7 == "" ? "-" : sprintf("x %.3f (%d)", $7, $4))
             cell[k, f, $3] = v }
           END { for (i = 1; i <= n; i++) { k = order[i]
                   printf "%s | %s | %s | %s | %s | %s | %s |\n", lab[k], cell[k, 1, "0"], cell[k, 2, "0"],
                          cell[k, 1, "1"], cell[k, 2, "1"], cell[k, 1, "2+"], cell[k, 2, "2+"] } }' \
    "$WORK/overlap.csv" "$WORK/overlap-sim.csv"
  echo
  echo "## Off their core: the ops' wall time over their CPU time (the real runs)"
  echo
  echo "Each kept run's decode and executor ops (vlrealpipe run --ops; rp_oplog.h): the ops'"
  echo "wall time over their threads' CPU time (CLOCK_THREAD_CPUTIME_ID) over the same spans,"
  echo "after the warm-up. Above 1, an op waited off its core; its CPU time says whether it ran"
  echo "slower. Then the share of the time ops ran during which exactly two ran, and the share"
  echo "of that during which both were on one CPU (sched_getcpu at their start and end), the"
  echo "other CPU without an op. The prediction places each job on a core (cpu.stack); the"
  echo "pooled cores, in their own table above, always run two jobs on two cores."
  echo
  echo "| load | run | decode | encode | reduce | prefill | two ops, % of the time ops ran | of that on one CPU % |"
  echo "|---|---|---|---|---|---|---|---|"
  awk '{ line = $0; row = "| " $1 " | " $2
         n = split("decode encode reduce prefill", k, " ")
         for (i = 1; i <= n; i++) {
           v = "-"
           if (match(line, " " k[i] " [0-9.]+ \\([0-9]+, [0-9.]+ ms")) {
             split(substr(line, RSTART, RLENGTH), f, /[ (,]+/)
             v = sprintf("%s (%s ms CPU)", f[3], f[5])
           }
           row = row " | " v
         }
         two = "-"; same = "-"
         if (match(line, "exactly two ops ran [0-9.]+ %")) { split(substr(line, RSTART, RLENGTH), f, " "); two = f[5] }
         if (match(line, "[0-9.]+ % of that on one CPU")) { split(substr(line, RSTART, RLENGTH), f, " "); same = f[1] }
         print row " | " two " | " same " |" }' "$WORK/ops.txt"
  echo
  echo "## Beside an op on the other CPU: the same op's CPU time over alone (the real runs)"
  echo
  echo "Does an op run slower while another runs on the other CPU (shared caches, memory)? The"
  echo "prediction says no beyond the cores' speed-up (cpu.speedup, corecal). Of each kept run's"
  echo "ops after the warm-up (vlrealpipe run --ops; rp_oplog_beside): alone, no other op over"
  echo "any of its span; beside, none on its own CPU and ops on the other covering 90 % of it."
  echo "Like with like: a decode against the alone decodes of its clip frame, an encode or"
  echo "prefill against those of its batch size. Each cell: the beside ops' CPU time over their"
  echo "own kind's alone mean (the beside ops compared, of all beside); then the same with the"
  echo "clip's frames and the batch sizes mixed, which a long decode's or a big batch's"
  echo "greater chance of meeting another op inflates."
  echo
  echo "| load | run | decode | decode, frames mixed | encode | encode, batches mixed | prefill |"
  echo "|---|---|---|---|---|---|---|"
  awk '{ line = $0; row = "| " $1 " | " $2
         n = split("decode encode prefill", k, " ")
         for (i = 1; i <= n; i++) {
           v = "-"; m = "-"
           if (match(line, " " k[i] " [0-9.]+ \\([0-9]+ of [0-9]+ beside, [0-9]+ alone; keys mixed [0-9.]+\\)")) {
             split(substr(line, RSTART, RLENGTH), f, /[ (;)]+/)
             v = sprintf("%s (%s of %s)", f[3], f[4], f[6]); m = f[12]
           }
           row = row " | " v (i < 3 ? " | " m : "")
         }
         print row " |" }' "$WORK/beside.txt"
  echo
  echo "## Where a kept frame's time goes (run 1 against replication 0)"
  echo
  echo "A kept frame's mean time per segment, in ms, real / simulated: the real run 1 against"
  echo "the simulator's replication 0 (vlsim run --trace), which replays run 1's stream phases;"
  echo "the phases set which frames batch together, so only runs with the same phases compare"
  echo "segment by segment (vlrealpipe compare --stages; validation/stages.csv). The segments"
  echo "add up to the frame's latency: the frame's time to its release (how late the camera"
  echo "thread woke), to the decode's start (decode_wait), the decode, to"
  echo "the sampler's end (sample), to the encode's start (encode_wait: the batch wait and the"
  echo "executor busy), the encode batch, reduce and prefill (each with its queue). The last"
  echo "columns: the part of decode_wait during which a decode worker was free (fewer decodes"
  echo "running than workers): the frame waited for a thread to wake and get a core, not for"
  echo "a busy worker; and a worker's gap, the mean time from a decode's end while a frame"
  echo "waited to the next decode's start (the worker going on: its handoff to the sampler,"
  echo "and whatever took its CPU in between), which every waiting frame waits through."
  echo
  echo "| load | release | decode_wait | decode | sample | encode_wait | encode | reduce | prefill | frame (mean) | decode_wait, a worker free | a worker's gap |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
  real_sim_rows "$WORK/stages.csv" %.3f
  echo
  echo "The same by the frame's place in its group of pictures (GOP 30; kept frames every"
  echo "2 in the streams' order, so the even places): the streams' I-frames are released"
  echo "within one frame interval of each other, so the I-frame (place 0) and the frames"
  echo "behind it wait for every stream's I-frame decode, and they carry the tail. Real run 1 /"
  echo "replication 0, the first ${GOP_ROWS} places (every place: validation/gop-stages.csv,"
  echo "vlrealpipe compare --gop-stages); executor: encode_wait, encode, reduce and prefill:"
  echo
  echo "| load | place | frame (mean) | frame p95 | decode_wait | decode | sample | executor |"
  echo "|---|---|---|---|---|---|---|---|"
  awk -F, -v rows="$GOP_ROWS" 'NR > 1 && $2 < rows {
         k = $1 SUBSEP $2; if (!(k in seen)) { seen[k] = 1; order[++n] = k }
         r[k, $3] = $6; m[k, $3] = $7 }
       function c(k, s) { return sprintf(" %.2f / %.2f |", r[k, s], m[k, s]) }
       END { for (i = 1; i <= n; i++) { k = order[i]; split(k, a, SUBSEP)
               ex_r = r[k, "encode_wait"] + r[k, "encode"] + r[k, "reduce"] + r[k, "prefill"]
               ex_m = m[k, "encode_wait"] + m[k, "encode"] + m[k, "reduce"] + m[k, "prefill"]
               printf "| %s | %s |%s%s%s%s%s %.2f / %.2f |\n", a[1], a[2], c(k, "frame"), c(k, "frame_p95"),
                 c(k, "decode_wait"), c(k, "decode"), c(k, "sample"), ex_r, ex_m } }' "$WORK/gop-stages.csv"
  echo
  echo "The encoder's batches by size, % of batches, real run 1 / replication 0"
  echo "(vlrealpipe compare --batches; validation/batches.csv):"
  echo
  echo "| load | 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8+ |"
  echo "|---|---|---|---|---|---|---|---|---|"
  real_sim_rows "$WORK/batches.csv" %.1f
  echo
  echo "## Per stage (sojourn: enqueue to end)"
  echo
  echo "| load | stage | metric | real ms | sim ms | rel err |"
  echo "|---|---|---|---|---|---|"
  awk -F, 'NR > 1 && $2 != "frame" { printf "| %s | %s | %s | %.3f | %.3f | %+.1f %% |\n", $1, $2, $3, $4, $5, 100 * $6 }' \
    "$WORK/results.csv"
  echo
  echo "![real vs predicted frame-latency CDFs](cdf.png)"
} > "$WORK/REPORT.md"

rm -rf "$OUT/calib"
mkdir -p "$OUT/calib"
cp "$WORK"/calib/*.yaml "$WORK"/calib/*.samples.csv "$WORK"/calib/*.samples "$WORK"/calib/*.content \
  "$WORK/calib/mixcal.txt" "$OUT/calib/"
if [ "$RECAL" = 1 ]; then     # each load point's: the ring and the mix means (the samples stay in $WORK)
  for L in $LOADS; do
    mkdir -p "$OUT/calib/$L"
    cp "$WORK/runs/$L/wakeup.yaml" "$WORK/runs/$L/corecal.yaml" "$WORK/runs/$L/corecal-own.yaml" \
      "$WORK/runs/$L/wakecal.yaml" \
      "$WORK/runs/$L/mixcal.txt" "$OUT/calib/$L/"
    [ "$STALL_S" = 0 ] || cp "$WORK/runs/$L/stallcal.yaml" "$WORK/runs/$L/stallcal.samples" "$OUT/calib/$L/"
  done
fi
mv "$WORK/results-iso.csv" "$OUT/results-iso.csv"
rm -f "$OUT/results-steady.csv"
[ "$DRIFT_S" = 0 ] || mv "$WORK/results-steady.csv" "$OUT/results-steady.csv"
rm -f "$OUT/results-warm.csv"
[ "$COLD_S" = 0 ] || mv "$WORK/results-warm.csv" "$OUT/results-warm.csv"
rm -f "$OUT/results-duty.csv"
[ "$DUTY_S" = 0 ] || mv "$WORK/results-duty.csv" "$OUT/results-duty.csv"
rm -f "$OUT/results-nostalls.csv" "$OUT/late-release.csv" "$OUT/results-nopoll.csv"
[ "$STALL_S" = 0 ] || mv "$WORK/results-nostalls.csv" "$OUT/results-nostalls.csv"
[ "$STALL_S" = 0 ] || mv "$WORK/late-release.csv" "$OUT/late-release.csv"
[ "$POLL" = 0 ] || mv "$WORK/results-nopoll.csv" "$OUT/results-nopoll.csv"
rm -f "$OUT/results-flat.csv"
[ "$FLAT" = 0 ] || mv "$WORK/results-flat.csv" "$OUT/results-flat.csv"
mv "$WORK/results-perstream.csv" "$OUT/results-perstream.csv"
rm -f "$OUT/results-pooled.csv" "$OUT/results-stack.csv"
[ "$STACK_S" = 0 ] || mv "$WORK/results-pooled.csv" "$OUT/results-pooled.csv"
rm -f "$OUT/results-norun.csv"
[ "$STACK_S" = 0 ] || mv "$WORK/results-norun.csv" "$OUT/results-norun.csv"
rm -f "$OUT/results-expturns.csv" "$OUT/results-noprotect.csv" "$OUT/results-slice.csv"
[ "$TURN_S" = 0 ] || mv "$WORK/results-expturns.csv" "$OUT/results-expturns.csv"
[ "$TURN_S" = 0 ] || mv "$WORK/results-noprotect.csv" "$OUT/results-noprotect.csv"
[ "$TURN_S" = 0 ] || mv "$WORK/results-slice.csv" "$OUT/results-slice.csv"
mv "$WORK/results.csv" "$OUT/results.csv"
rm -f "$OUT/results-allruns.csv"
[ "$(n_left_out)" = 0 ] || cp "$WORK/results-allruns.csv" "$OUT/results-allruns.csv"
mv "$WORK/spread.csv" "$OUT/spread.csv"
mv "$WORK/overlap.csv" "$OUT/overlap.csv"
mv "$WORK/overlap-sim.csv" "$OUT/overlap-sim.csv"
mv "$WORK/stages.csv" "$OUT/stages.csv"
mv "$WORK/gop-stages.csv" "$OUT/gop-stages.csv"
cp "$WORK/corecal-tries.csv" "$OUT/corecal-tries.csv"
mv "$WORK/results-probed.csv" "$OUT/results-probed.csv"
rm -f "$OUT/results-slow.csv" "$OUT/results-fast.csv"
[ "$BAND" = 0 ] || mv "$WORK/results-slow.csv" "$OUT/results-slow.csv"
[ "$BAND" = 0 ] || mv "$WORK/results-fast.csv" "$OUT/results-fast.csv"
mv "$WORK/results-perrun.csv" "$OUT/results-perrun.csv"
mv "$WORK/batches.csv" "$OUT/batches.csv"
rm -f "$OUT/history.csv"
[ "$HISTORY" = 0 ] || cp "$WORK/history.csv" "$OUT/history.csv"
cp "$WORK/rejected.csv" "$OUT/rejected.csv"
mv "$WORK/cdf.png" "$OUT/cdf.png"
mv "$WORK/REPORT.md" "$OUT/REPORT.md"
cat "$WORK/summary.txt"
log "done: $OUT/REPORT.md, $OUT/results.csv, $OUT/cdf.png"
