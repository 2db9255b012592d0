# floor.awk — what a model exactly right could reach against the real runs
# of `make validate`, given how much those runs differ from one another
# (issue 7). It never reads the simulator's output: only the real runs'.
#
# The comparison sets the prediction against the real runs of a load point
# pooled. Those runs, a minute apart on the same machine, differ: their
# p50s by 5-27 % (coefficient of variation) on the 2-vCPU VM. So the pooled
# figure itself is uncertain by its standard error, SE = sd / sqrt(n) of the
# n runs' own figures (relative to their mean; the drop rate in points). A
# model that predicted the machine's true figure exactly would still land
# outside a target of +-tol with the chance that the real figure strays
# further than tol: P(within) = erf(tol / (sqrt(2) SE)), the normal
# approximation. With n = 3 runs the sd is itself rough, and more often too
# small than too large, so these chances lean optimistic: the floor they
# show is, if anything, higher.
#
# Input: one or more spread-used.csv files (validate.sh writes one per load
# point, and validation/spread-used.csv for all: load,run,frames,p50,p95,
# p99,drop_rate_pct), each row one real run. With several validations, set
# -v by_dir=1 and give each load point's file (VALIDATION/runs/L/...): the
# validation is the path before "/runs/". Output (-v mode=):
#   table  (default) a markdown table per load and metric (runs, SE, the
#          chance), then the expected count within target and the chance
#          that every frame percentile (and every figure) is within at once,
#          and the same with four times the runs (SE halved);
#   rows   CSV validation,load,metric,runs,se,p_within for other scripts
#          (history.sh): se relative (drop rate: points), "-" without two runs.
# Targets as issue 7: p50 and p95 5 %, p99 10 %, drop rate 1 point.

BEGIN { FS = ","; if (mode == "") mode = "table"; split("p50 p95 p99 drop_rate", ms, " ") }

# erf by Abramowitz and Stegun 7.1.26 (|error| <= 1.5e-7)
function erf(x,   t, y, s) {
  s = x < 0 ? -1 : 1; x = x < 0 ? -x : x
  t = 1 / (1 + 0.3275911 * x)
  y = 1 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * exp(-x * x)
  return s * y
}
function tol(m) { return m == "p99" ? 0.10 : (m == "drop_rate" ? 1.0 : 0.05) }
# the chance a right model is within target, with standard error se (0: 1)
function p_within(m, se) { return se <= 0 ? 1 : erf(tol(m) / (sqrt(2) * se)) }

FNR == 1 {
  v = "-"
  if (by_dir) { v = FILENAME; sub(/\/runs\/.*/, "", v); sub(/.*\//, "", v) }
  next
}
NF >= 7 {
  if (!((v, $1) in seen)) { seen[v, $1] = 1; order[++nk] = v SUBSEP $1 }
  for (i = 1; i <= 4; i++) {
    k = v SUBSEP $1 SUBSEP ms[i]; x = $(3 + i) + 0
    n[k]++; s[k] += x; ss[k] += x * x
  }
}

# the standard error of the pooled figure for key k (relative; drop: points), or -1
function se_of(k, m,   mu, var) {
  if (n[k] < 2) return -1
  mu = s[k] / n[k]; var = (ss[k] - n[k] * mu * mu) / (n[k] - 1); if (var < 0) var = 0
  if (m == "drop_rate") return sqrt(var / n[k])
  return mu > 0 ? sqrt(var / n[k]) / mu : -1
}

END {
  if (mode == "rows") print "validation,load,metric,runs,se,p_within"
  else {
    print "| load | metric | runs | real's SE | a right model within target |"
    print "|---|---|---|---|---|"
  }
  npct = 0; exp_pct = 0; exp_drop = 0; ndrop = 0; all_pct = 1; all_fig = 1; all_pct4 = 1
  for (j = 1; j <= nk; j++) {
    split(order[j], a, SUBSEP)
    for (i = 1; i <= 4; i++) {
      m = ms[i]; k = a[1] SUBSEP a[2] SUBSEP m; se = se_of(k, m)
      if (se < 0) {
        if (mode == "rows") printf "%s,%s,%s,%d,-,-\n", a[1], a[2], m, n[k]
        else printf "| %s | %s | %d | - | - |\n", a[2], m, n[k]
        continue
      }
      p = p_within(m, se); p4 = p_within(m, se / 2)
      if (mode == "rows") { printf "%s,%s,%s,%d,%.6f,%.6f\n", a[1], a[2], m, n[k], se, p; continue }
      printf "| %s | %s | %d | %s | %.2f |\n", a[2], m, n[k],
             m == "drop_rate" ? sprintf("%.2f pt", se) : sprintf("%.1f %%", 100 * se), p
      all_fig *= p
      if (m == "drop_rate") { exp_drop += p; ndrop++ }
      else { exp_pct += p; npct++; all_pct *= p; all_pct4 *= p4 }
    }
  }
  if (mode == "rows" || npct == 0) exit
  printf "\nA model exactly right would be within target in %.1f of these %d frame percentiles and %.1f of %d drop rates on average;", exp_pct, npct, exp_drop, ndrop
  printf " in all %d percentiles at once with a chance of %.3g (every figure: %.3g), and with four times the runs (SE halved) %.3g.\n", npct, all_pct, all_fig, all_pct4
}
