#!/usr/bin/env bash
# history.sh — the model against every kept `make validate` experiment: one
# validation's error mixes the model's bias with that hour's machine (on the
# 2-vCPU VM the same load point's real p50 moved 7.4-8.8 ms between
# validations while the prediction held at 6.9-7.4 ms); the mean error over
# several validations, each simulated again with today's vlsim, is the bias,
# and their spread is the machine's.
#
# validate.sh keeps each experiment (its real runs' spans, the prediction's
# scenarios and the calibration files they read, probe.csv) in
# build/validate-history/<UTC stamp>/. history.sh runs resim.sh on the last N
# of them (all by default) with the same sed edits on every one, writes every
# row (validation,load,stage,metric,real_ms,sim_ms,rel_err; drop_rate's columns
# in % and its rel_err in points, as resim.sh's) to the CSV named by -o, and
# prints a markdown table of the frame figures: each validation's error, their
# mean, standard deviation (n - 1; "-" for one), and how many were within the
# target (p50 and p95 5 %, p99 10 %, drop rate 1 point), and how many a model
# exactly right would be expected to have within (floor.awk on each
# validation's spread-used.csv: the real runs' own spread; "-" for those kept
# without it); then the mean |error| and the mean |bias| over the 12 frame
# percentiles, and the frame percentiles within against a right model's. With -s, then each stage's
# p50, p95 and p99 error, mean +- SD over the validations (where in the
# pipeline a bias sits). Each validation is simulated again from the scenario
# written then: a model key that `vlrealpipe scenario` learned to
# write since is not in an older one (add it with -e).
#
# With -g PLACE, then each validation's load points at that place of the GOP
# (0: the I-frame): the kept frames' mean time there, real run 1 / replication
# 0, and its segments (resim.sh -g; vlrealpipe compare --gop-stages): where a
# bias the frame table shows sits in the frames behind the I-frames.
#
# It writes nothing but the CSV (made beside it and moved into place; an
# existing file is refused unless -f), and leaves the kept folders untouched.
#
# usage: calib/realpipe/history.sh [-H DIR] [-n N] [-s] [-g PLACE] [-e SED_EXPR]... [-o CSV [-f]]
#   e.g. calib/realpipe/history.sh -n 6 -e 's/wake_held: \[[^]]*\]/wake_held: [0, 0, 0]/'
set -euo pipefail

die() { echo "history.sh: $*" >&2; exit 2; }
usage() { sed -n '/^# usage/,/^#   e\.g\./p' "$0" | sed 's/^# //'; }

HIST=build/validate-history
N=0
CSV=
FORCE=0
STAGES=0
PLACE=
SEDS=()
while getopts "H:n:e:o:fsg:h" o; do
  case "$o" in
    H) HIST=$OPTARG ;;
    n) N=$OPTARG ;;
    e) SEDS+=(-e "$OPTARG") ;;
    o) CSV=$OPTARG ;;
    f) FORCE=1 ;;
    s) STAGES=1 ;;
    g) PLACE=$OPTARG ;;
    h) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[ $# = 0 ] || die "unexpected argument '$1' (usage: history.sh [-H DIR] [-n N] [-s] [-g PLACE] [-e SED_EXPR]... [-o CSV [-f]])"
case "$PLACE" in *[!0-9]*) die "-g $PLACE: a place in the GOP expected (0: the I-frame)" ;; esac
GOPOPT=()
[ -z "$PLACE" ] || GOPOPT=(-g)
case "$N" in ''|*[!0-9]*) die "-n $N: a count of validations expected (0: all)" ;; esac
[ -d "$HIST" ] || die "$HIST: not found (make validate keeps each experiment there)"
if [ -n "$CSV" ] && [ -e "$CSV" ] && [ "$FORCE" = 0 ]; then
  die "$CSV: exists; name a new file or add -f to replace it"
fi
HERE=$(cd "$(dirname "$0")" && pwd)

VALS=()
for d in "$HIST"/*/; do
  d=${d%/}
  case "$d" in *.partial) continue ;; esac   # one validate.sh was still writing, or that failed
  [ -d "$d/runs" ] && VALS+=("$d")
done
[ "${#VALS[@]}" -gt 0 ] || die "$HIST: no kept validations (folders holding runs/)"
if [ "$N" -gt 0 ] && [ "${#VALS[@]}" -gt "$N" ]; then
  VALS=("${VALS[@]: -$N}")
fi

TMP=$(mktemp -d "${TMPDIR:-/tmp}/vlsim-history.XXXXXX") || die "cannot make a working folder"
trap 'rm -rf "$TMP"' EXIT
echo "validation,load,stage,metric,real_ms,sim_ms,rel_err" > "$TMP/rows.csv"
k=0
for v in "${VALS[@]}"; do
  k=$((k + 1))
  name=$(basename "$v")
  echo "history.sh: $k of ${#VALS[@]}: $name" >&2
  "$HERE/resim.sh" -d "$v" "${GOPOPT[@]}" "${SEDS[@]}" "$TMP/$k" > "$TMP/$k.log" 2>&1 \
    || { cat "$TMP/$k.log" >&2; die "$v: resim.sh failed"; }
  for f in "$TMP/$k"/*-rows.csv; do
    awk -F, -v v="$name" 'NR > 1 { print v "," $0 }' OFS=, "$f" >> "$TMP/rows.csv"
  done
  if [ -n "$PLACE" ]; then
    for f in "$TMP/$k"/*-gop.csv; do
      awk -F, -v v="$name" -v p="$PLACE" 'NR > 1 && $2 == p { print v "," $0 }' OFS=, "$f" >> "$TMP/gop.csv"
    done
  fi
done

# what a model exactly right could reach in each validation, given the
# spread of its own real runs (floor.awk: P(within target) per figure)
echo "validation,load,metric,runs,se,p_within" > "$TMP/floor.csv"
for v in "${VALS[@]}"; do
  spreads=("$v"/runs/*/spread-used.csv)
  [ -f "${spreads[0]}" ] || continue  # kept before validate.sh wrote it
  awk -v mode=rows -v by_dir=1 -f "$HERE/floor.awk" "${spreads[@]}" | tail -n +2 >> "$TMP/floor.csv"
done

# the frame table: a column per validation (in order), then mean, SD, within,
# and a right model's expected count within (the sum of its chances)
awk -F, '
  FNR == NR { if (FNR > 1 && $6 != "-") pw[$1, $2, $3] = $6; next }
  function lim(m) { return m == "p99" ? 0.10 : (m == "drop_rate" ? 1 : 0.05) }
  function abs(x) { return x < 0 ? -x : x }
  function cell(m, e) { return m == "drop_rate" ? sprintf("%+.2f pt", e) : sprintf("%+.1f %%", 100 * e) }
  FNR > 1 && $3 == "frame" {
    if (!($1 in col)) { col[$1] = ++nv; vname[nv] = $1 }
    k = $2 " " $4
    if (!(k in seen)) { seen[k] = 1; keys[++nk] = k; kl[nk] = $2; km[nk] = $4 }
    e[k, col[$1]] = $7; have[k, col[$1]] = 1
    if (($1, $2, $4) in pw) { pr[k, col[$1]] = pw[$1, $2, $4]; haspr[k, col[$1]] = 1 }
  }
  END {
    printf "| load | metric |"
    for (j = 1; j <= nv; j++) printf " %s |", vname[j]
    printf " mean | SD | within target | a right model within (expected) |\n|---|---|"
    for (j = 1; j <= nv + 4; j++) printf "---|"
    printf "\n"
    for (i = 1; i <= nk; i++) {
      k = keys[i]; m = km[i]; n = 0; s = 0; w = 0
      printf "| %s | %s |", kl[i], m
      for (j = 1; j <= nv; j++) {
        if (!have[k, j]) { printf " |"; continue }
        x = e[k, j]; n++; s += x
        if (abs(x) <= lim(m) + 1e-12) w++
        printf " %s |", cell(m, x)
      }
      mu = s / n; ss = 0
      for (j = 1; j <= nv; j++) if (have[k, j]) ss += (e[k, j] - mu) ^ 2
      sdc = n < 2 ? "-" : (m == "drop_rate" ? sprintf("%.2f pt", sqrt(ss / (n - 1))) : sprintf("%.1f %%", 100 * sqrt(ss / (n - 1))))
      ep = 0; np = 0
      for (j = 1; j <= nv; j++) if (have[k, j] && haspr[k, j]) {
        ep += pr[k, j]; np++
        if (m == "drop_rate") continue      # the line below counts the percentiles
        tp += pr[k, j]; tn++; if (abs(e[k, j]) <= lim(m) + 1e-12) tw++
        if (!(j in allp)) allp[j] = 1
        allp[j] *= pr[k, j]
      }
      printf " %s | %s | %d of %d | %s |\n", cell(m, mu), sdc, w, n, np ? sprintf("%.1f of %d", ep, np) : "-"
      if (m != "drop_rate") {
        for (j = 1; j <= nv; j++) if (have[k, j]) { ea += abs(e[k, j]); ne++ }
        ba += abs(mu); nb++
      }
    }
    if (ne) printf "\nmean |error| of the frame percentiles over the %d validations: %.1f %%; mean |bias| (the |mean error| of each of the %d figures): %.1f %%\n", nv, 100 * ea / ne, nb, 100 * ba / nb
    if (tn) {
      printf "\nA model exactly right, given the spread of the real runs of each validation (floor.awk), would be within target in %.1f of the %d frame percentiles on average; this model was in %d. The chance that it had every frame percentile of a validation within at once:", tp, tn, tw
      for (j = 1; j <= nv; j++) if (j in allp) printf " %s %.3g;", vname[j], allp[j]
      printf "\n"
    }
  }' "$TMP/floor.csv" "$TMP/rows.csv"

# -s: each stage's percentiles, mean +- SD of the error over the validations
if [ "$STAGES" = 1 ]; then
  echo
  echo "| load | stage | p50 | p95 | p99 |"
  echo "|---|---|---|---|---|"
  awk -F, '
    NR > 1 && $3 != "frame" && $4 != "drop_rate" {
      k = $2 "," $3
      if (!(k in seen)) { seen[k] = 1; keys[++nk] = k }
      m = $2 "," $3 "," $4; n[m]++; x[m, n[m]] = $7; s[m] += $7
    }
    function stat(m,   mu, ss, i) {
      if (!n[m]) return " |"
      mu = s[m] / n[m]; ss = 0
      for (i = 1; i <= n[m]; i++) ss += (x[m, i] - mu) ^ 2
      return n[m] < 2 ? sprintf(" %+.1f %% |", 100 * mu) : sprintf(" %+.1f +- %.1f %% |", 100 * mu, 100 * sqrt(ss / (n[m] - 1)))
    }
    END {
      for (i = 1; i <= nk; i++) {
        split(keys[i], a, ",")
        printf "| %s | %s |%s%s%s\n", a[1], a[2], stat(keys[i] ",p50"), stat(keys[i] ",p95"), stat(keys[i] ",p99")
      }
    }' "$TMP/rows.csv"
fi

# -g PLACE: the frames at that place, real / simulated, ms
if [ -n "$PLACE" ]; then
  echo
  echo "At place $PLACE of the GOP (real run 1 / replication 0, ms; executor: encode_wait, encode, reduce, prefill):"
  echo
  echo "| validation | load | frames (real) | frame (mean) | frame p95 | decode_wait | decode | sample | executor |"
  echo "|---|---|---|---|---|---|---|---|---|"
  [ -f "$TMP/gop.csv" ] || echo "history.sh: no kept frame at place $PLACE" >&2
  [ ! -f "$TMP/gop.csv" ] || awk -F, '{ k = $1 SUBSEP $2; if (!(k in seen)) { seen[k] = 1; order[++n] = k }
             r[k, $4] = $7; m[k, $4] = $8; nr[k] = $5 }
           function c(k, s) { return sprintf(" %.2f / %.2f |", r[k, s], m[k, s]) }
           END { for (i = 1; i <= n; i++) { k = order[i]; split(k, a, SUBSEP)
                   xr = r[k, "encode_wait"] + r[k, "encode"] + r[k, "reduce"] + r[k, "prefill"]
                   xm = m[k, "encode_wait"] + m[k, "encode"] + m[k, "reduce"] + m[k, "prefill"]
                   printf "| %s | %s | %d |%s%s%s%s%s %.2f / %.2f |\n", a[1], a[2], nr[k], c(k, "frame"),
                     c(k, "frame_p95"), c(k, "decode_wait"), c(k, "decode"), c(k, "sample"), xr, xm } }' "$TMP/gop.csv"
fi

if [ -n "$CSV" ]; then
  cp "$TMP/rows.csv" "$CSV.partial.$$" && mv -f "$CSV.partial.$$" "$CSV" || { rm -f "$CSV.partial.$$"; die "cannot write $CSV"; }
fi
