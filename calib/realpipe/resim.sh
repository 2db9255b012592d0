#!/usr/bin/env bash
# resim.sh — simulate a finished `make validate` again, with the scenario
# changed, against the same real runs: a model idea tried in seconds, not in
# the experiment's 15-19 minutes.
#
# For each load point's folder under DIR/runs (make validate's work folder,
# build/validate by default) it edits the prediction's scenario (scenario.yaml,
# written from the calibration alone) with the sed expressions given, runs
# vlsim on it, and compares it with the real runs validate.sh compared (those
# whose after-run machine check passed, every run when none did: probe.csv),
# as validate.sh does (vlrealpipe compare). With no expression it reproduces
# validation/results.csv's rows of that experiment exactly (vlsim is
# deterministic for a scenario and seed).
#
# The scenarios name their calibration files by absolute path, where make
# validate wrote them; when DIR is a copy kept elsewhere (validate.sh keeps
# each experiment in build/validate-history/), those paths are read under
# DIR instead. It never touches DIR, and never writes into a folder that exists: OUT is
# made anew and holds each load's scenario (L.yaml), the simulator's CSV
# (L-sim.csv) and the comparison rows (L-rows.csv). It prints the frame rows
# and the mean |rel err| of the 12 frame percentiles (a summary for trying
# ideas, not the target: the target is every figure within its bound).
#
# With -r it also sets each compared run alone against the scenario with
# every replication replaying that run's phases (the k-th line of the
# scenario's phase_ms, one per compared run in order), as validate.sh's
# results-perrun.csv does: OUT/L-run<r>.yaml, -run<r>-sim.csv, -run<r>-rows.csv
# and OUT/perrun.csv (load,run,stage,metric,real_ms,sim_ms,rel_err); it
# prints their frame rows too.
#
# With -g it also sets the real run 1 (the first compared) against the
# simulator's replication 0 by the frame's place in the GOP, as validate.sh's
# gop-stages.csv (vlsim run --trace, vlrealpipe compare --gop-stages):
# OUT/L-gop.csv (the trace itself is not kept).
#
# usage: calib/realpipe/resim.sh [-d DIR] [-l "0.30 0.50"] [-r] [-g] [-e SED_EXPR]... OUT
#   e.g. calib/realpipe/resim.sh -e 's/wake_held: \[[^]]*\]/wake_held: [0, 0, 0]/' /tmp/noheld
set -euo pipefail

die() { echo "resim.sh: $*" >&2; exit 2; }
usage() { sed -n '/^# usage/,/^#   e\.g\./p' "$0" | sed 's/^# //'; }

DIR=build/validate
LOADS=""
SEDS=()
PERRUN=0
GOP=0
while getopts "d:l:e:rgh" o; do
  case "$o" in
    d) DIR=$OPTARG ;;
    l) LOADS=$OPTARG ;;
    r) PERRUN=1 ;;
    g) GOP=1 ;;
    e) SEDS+=(-e "$OPTARG") ;;
    h) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[ $# = 1 ] || die "one output folder expected (usage: resim.sh [-d DIR] [-l LOADS] [-r] [-g] [-e SED_EXPR]... OUT)"
OUT=$1
[ -d "$DIR/runs" ] || die "$DIR/runs: not found (run make validate first, or name its folder with -d)"
[ -e "$OUT" ] && die "$OUT: exists; name a new folder (nothing is overwritten)"
[ -x ./vlsim ] && [ -x ./vlrealpipe ] || die "./vlsim and ./vlrealpipe are needed: run from the repository root after make and make vlrealpipe"
if [ -z "$LOADS" ]; then
  LOADS=$(cd "$DIR/runs" && ls -d 0.* 2>/dev/null | tr '\n' ' ')
  [ -n "$LOADS" ] || die "$DIR/runs: no load point folders"
fi
WARMUP=${WARMUP:-2}
# everything is written beside OUT first and moved into place at the end:
# a failure leaves no half-written folder
TMP=$(mktemp -d "${OUT%/}.partial.XXXXXX") || die "cannot make a folder beside $OUT"
trap 'rm -rf "$TMP"' EXIT
for L in $LOADS; do
  D=$DIR/runs/$L
  [ -f "$D/scenario.yaml" ] || die "$D/scenario.yaml: not found"
  # the runs validate.sh compared: probe.csv's kept attempts that passed (column 9), else all
  used=()
  for r in $(awk -F, -v l="$L" '$1 == l && $9 == 1 {print $2}' "$DIR/probe.csv" 2>/dev/null); do
    used+=("$D/spans-$r.csv")
  done
  if [ "${#used[@]}" = 0 ]; then
    for f in "$D"/spans-*.csv; do [ -f "$f" ] && used+=("$f"); done
  fi
  [ "${#used[@]}" -gt 0 ] || die "$D: no real runs (spans-*.csv)"
  # a copy of the experiment (a kept validation, build/validate-history/): its
  # scenario names the files by where make validate wrote them; read them here
  edits=()
  root=$(sed -n 's#.*file: *"\{0,1\}\([^ ",}]*\)/runs/'"$L"'/.*#\1#; T; p; q' "$D/scenario.yaml")
  if [ -n "$root" ] && ! [ "$root/runs/$L" -ef "$D" ]; then
    case "$root$D" in *'#'*) die "$D: a path with '#' cannot be relocated" ;; esac
    edits=(-e "s#$(printf '%s' "$root" | sed 's/[][\.*^$]/\\&/g')/runs/#$(cd "$DIR" && pwd -P)/runs/#g")
  fi
  sed "${edits[@]}" "${SEDS[@]}" -e '' "$D/scenario.yaml" > "$TMP/$L.yaml"
  trace=() gop=()
  if [ "$GOP" = 1 ]; then
    trace=(--trace "$TMP/$L-trace.csv")
    gop=(--sim-spans "$TMP/$L-trace.csv" --gop-stages "$TMP/$L-gop.csv")
  fi
  ./vlsim run "$TMP/$L.yaml" --csv "$TMP/$L-sim.csv" "${trace[@]}" -q 2> "$TMP/$L-sim.log" \
    || { cat "$TMP/$L-sim.log" >&2; die "vlsim failed on $D/scenario.yaml as edited"; }
  ./vlrealpipe compare --load "$L" --sim "$TMP/$L-sim.csv" --warmup "$WARMUP" --out "$TMP/$L-rows.csv" \
    "${gop[@]}" "${used[@]}" > /dev/null || die "vlrealpipe compare failed at load $L"
  rm -f "$TMP/$L-trace.csv"
  [ "$PERRUN" = 1 ] || continue
  [ -f "$TMP/perrun.csv" ] || echo "load,run,stage,metric,real_ms,sim_ms,rel_err" > "$TMP/perrun.csv"
  k=0
  for f in "${used[@]}"; do
    k=$((k + 1))
    r=$(basename "$f" .csv)
    r=${r#spans-}
    # the scenario with its k-th phase line alone (one per compared run, in order)
    awk -v k="$k" '/^  phase_ms:/ { in_p = 1; print; next }
                   in_p && /^    - \[/ { if (++j == k) print; next }
                   { in_p = 0; print }' "$TMP/$L.yaml" > "$TMP/$L-run$r.yaml"
    grep -q '^    - \[' "$TMP/$L-run$r.yaml" || die "$D/scenario.yaml: no phase line $k for run $r"
    ./vlsim run "$TMP/$L-run$r.yaml" --csv "$TMP/$L-run$r-sim.csv" -q 2> "$TMP/$L-run$r-sim.log" \
      || { cat "$TMP/$L-run$r-sim.log" >&2; die "vlsim failed on run $r's scenario at load $L"; }
    ./vlrealpipe compare --load "$L" --sim "$TMP/$L-run$r-sim.csv" --warmup "$WARMUP" \
      --out "$TMP/$L-run$r-rows.csv" "$f" > /dev/null || die "vlrealpipe compare failed at load $L run $r"
    awk -F, -v r="$r" 'NR > 1 { $1 = $1 "," r; print }' OFS=, "$TMP/$L-run$r-rows.csv" >> "$TMP/perrun.csv"
  done
done
mv "$TMP" "$OUT" || die "cannot move the results to $OUT"
trap - EXIT
for L in $LOADS; do grep "^$L,frame," "$OUT/$L-rows.csv"; done | awk -F, '
  { if ($3 == "drop_rate") printf "%s frame %-9s real %8.3f %% sim %8.3f %% %+6.2f pt\n", $1, $3, $4, $5, $6
    else { printf "%s frame %-9s real %8.3f ms sim %8.3f ms %+6.1f %%\n", $1, $3, $4, $5, 100 * $6
           e = $6 < 0 ? -$6 : $6; s += e; n++ } }
  END { if (n) printf "mean |rel err| of the %d frame percentiles: %.1f %%\n", n, 100 * s / n }'
if [ "$PERRUN" = 1 ]; then
  echo "each run alone, on its own phases:"
  awk -F, 'NR > 1 && $3 == "frame" && $4 != "drop_rate" {
             printf "%s run %s frame %-4s real %8.3f ms sim %8.3f ms %+6.1f %%\n", $1, $2, $4, $5, $6, 100 * $7 }' "$OUT/perrun.csv"
fi
