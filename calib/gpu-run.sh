#!/usr/bin/env bash
# calib/gpu-run.sh — the GPU calibration run (issue 4) on one H100/H200, in
# under 8 minutes: build vlcalib with CUDA, check it against the double
# reference, time the grids of siglip-so400m-384 and llama-3-8b, and print
# the achieved TFLOP/s of the large GEMM-bound points. On an H100 80GB HBM3
# the check and the three grids took 88 s at 30 repetitions (2026-12-05,
# calib/data/h100-80gb-hbm3-*); a point that does not fit in the GPU's
# memory is skipped and listed, with every larger point of its op.
#
# Usage (from the repository root):
#   OUT=/some/dir calib/gpu-run.sh          # OUT defaults to calib/data
#   REPS=100 BUDGET_S=470 calib/gpu-run.sh  # repetitions per point (default 50),
#                                           # seconds for the whole run (470)
#   VLCALIB=/path/to/vlcalib calib/gpu-run.sh
#                                     # a vlcalib built with CUDA=1 elsewhere
#                                     # (calib/gpu-bundle.sh's; no build here)
#
# Writes (atomically, replacing older files of the same name):
#   $OUT/<gpu>-siglip-so400m-384.yaml   encode, reduce   (+ .samples.csv)
#   $OUT/<gpu>-llama-3-8b-prefill.yaml  prefill          (+ .samples.csv)
#   $OUT/<gpu>-llama-3-8b-decode.yaml   decode           (+ .samples.csv)
#   $OUT/<gpu>-check.txt                the --check output
# <gpu> is the device name in lower case (nvidia-smi), e.g. h200 or h100-80gb-hbm3.
# llama-3-8b runs once per op so that a run cut short by the budget loses
# one file, not both.
#
# Without VLCALIB it builds with plain `make CUDA=1 vlcalib` (no `make deps`, no apt on the GPU
# machine): it needs nvcc and the Debian packages libgsl-dev, libyaml-dev and
# libopenblas-dev, and says which is missing. Every step gets at most the
# time left of BUDGET_S (default 470 s), under `timeout`.
#
# The cuBLAS bf16 GEMM peak: calib/cuda_ops.h exposes no plain GEMM entry
# point (only whole ops), so this script does not measure the peak; the
# summary compares the achieved rate with NVIDIA's datasheet dense bf16 peak
# for the GPU named (labelled as such), not with a measured one.
set -euo pipefail

OUT=${OUT:-calib/data}
REPS=${REPS:-50}
BUDGET_S=${BUDGET_S:-470}
VLCALIB=${VLCALIB:-}
START=$(date +%s)

log() { printf 'gpu-run: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }

# Seconds left of the budget, less a margin for what follows.
left() {
    local margin=${1:-0}
    echo $((BUDGET_S - ($(date +%s) - START) - margin))
}

# run_step NAME MARGIN CMD...: run CMD under the time left (minus MARGIN).
run_step() {
    local name=$1 margin=$2 t
    shift 2
    t=$(left "$margin")
    if ((t < 10)); then
        log "$name: skipped, only ${t}s of the ${BUDGET_S}s budget left"
        return 124
    fi
    log "$name: up to ${t}s"
    timeout --signal=INT --kill-after=10 "$t" "$@"
}

[[ -f Makefile && -f calib/calib.mk ]] || die "run from the repository root"
mkdir -p "$OUT"

# ---- the machine ----
command -v nvidia-smi >/dev/null || die "nvidia-smi not found: no NVIDIA driver here"
GPU_NAME=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
GPU=$(printf '%s' "$GPU_NAME" | tr '[:upper:]' '[:lower:]' | sed -e 's/^nvidia //' -e 's/[^a-z0-9]\{1,\}/-/g' -e 's/^-//' -e 's/-$//')
log "GPU: $GPU_NAME (files named $GPU-*)"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv >&2 || true

# ---- build ----
if [[ -n $VLCALIB ]]; then
    [[ -x $VLCALIB ]] || die "VLCALIB=$VLCALIB is not an executable"
    log "build: skipped, using VLCALIB=$VLCALIB"
else
    missing=()
    need_header() {   # HEADER PACKAGE
        if ! printf '#include <%s>\n' "$1" | cc -E -x c - >/dev/null 2>&1; then
            missing+=("$2 (for $1)")
        fi
    }
    need_header gsl/gsl_rng.h libgsl-dev
    need_header yaml.h libyaml-dev
    need_header cblas.h libopenblas-dev
    if ((${#missing[@]})); then
        die "missing Debian packages: ${missing[*]}; install them (apt-get install ...) and rerun"
    fi
    NVCC=$(command -v nvcc || true)
    [[ -n $NVCC || -x /usr/local/cuda/bin/nvcc ]] || die "nvcc not found (PATH, /usr/local/cuda/bin): install the CUDA toolkit"

    if ! run_step build 400 make -j"$(nproc)" CUDA=1 vlcalib >"$OUT/$GPU-build.log" 2>&1; then
        tail -n 30 "$OUT/$GPU-build.log" >&2
        if grep -q 'cannot find -lopenblas' "$OUT/$GPU-build.log"; then
            log "missing Debian package: libopenblas-dev"
        fi
        if grep -q -e 'cannot find -lgsl' -e 'cannot find -lyaml' "$OUT/$GPU-build.log"; then
            log "missing Debian packages: libgsl-dev and/or libyaml-dev"
        fi
        die "make CUDA=1 vlcalib failed (log: $OUT/$GPU-build.log)"
    fi
    VLCALIB=./vlcalib
fi

# ---- correctness first ----
if ! run_step check 300 "$VLCALIB" --backend cuda --check | tee "$OUT/$GPU-check.txt"; then
    die "vlcalib --backend cuda --check failed: no timing run (output: $OUT/$GPU-check.txt)"
fi

# ---- the grids ----
note="GPU calibration by calib/gpu-run.sh on $GPU_NAME, $REPS repetitions per point"
SO400M=$OUT/$GPU-siglip-so400m-384.yaml
PREFILL=$OUT/$GPU-llama-3-8b-prefill.yaml
DECODE=$OUT/$GPU-llama-3-8b-decode.yaml
status=0
# margins: what the later steps need at least
run_step siglip-so400m-384 200 "$VLCALIB" --backend cuda --model siglip-so400m-384 --reps "$REPS" \
    --force --note "$note" --out "$SO400M" || { status=1; log "siglip-so400m-384: failed or out of time"; }
run_step llama-3-8b-prefill 90 "$VLCALIB" --backend cuda --model llama-3-8b --ops prefill --reps "$REPS" \
    --force --note "$note" --out "$PREFILL" || { status=1; log "llama-3-8b prefill: failed or out of time"; }
run_step llama-3-8b-decode 5 "$VLCALIB" --backend cuda --model llama-3-8b --ops decode --reps "$REPS" \
    --force --note "$note" --out "$DECODE" || { status=1; log "llama-3-8b decode: failed or out of time"; }

# ---- summary: achieved TFLOP/s of the GEMM-bound points ----
# p50 of the point of OP in FILE whose fields match (awk over the one-line points).
p50_of() {   # FILE OP FIELD VALUE FIELD VALUE
    [[ -f $1 ]] || return 0
    awk -v op="$2" -v f1="$3" -v v1="$4" -v f2="$5" -v v2="$6" '
        /^  - op: / { cur = $3 }
        cur == op && index($0, f1 ": " v1 ",") && index($0, f2 ": " v2 ",") {
            if (match($0, /p50_ms: [0-9.e+-]+/)) { print substr($0, RSTART + 8, RLENGTH - 8); exit }
        }' "$1"
}

case $GPU_NAME in
    *H200*) PEAK=989 ;;                     # H200 SXM, dense bf16
    *H100*PCIe*|*H100*PCIE*) PEAK=756 ;;    # H100 PCIe, dense bf16
    *H100*) PEAK=989 ;;                     # H100 SXM, dense bf16
    *) PEAK= ;;
esac

# Linear-layer FLOPs only (2 per multiply-add; attention and elementwise work
# left out, so these are lower bounds of the work done):
#   so400m encode, batch 64: 27 layers x (4*1152^2 + 2*1152*4304) weights x 64*729 tokens
#   llama-3-8b prefill 1024 new, cache 0: 32 x (4096*(4096+2*1024) + 4096^2 + 3*4096*14336) x 1024
ENC_FLOP=$(awk 'BEGIN { printf "%.6e", 2 * 27 * (4 * 1152 ^ 2 + 2 * 1152 * 4304) * 64 * 729 }')
PRE_FLOP=$(awk 'BEGIN { printf "%.6e", 2 * 32 * (4096 * (4096 + 2 * 1024) + 4096 ^ 2 + 3 * 4096 * 14336) * 1024 }')
enc_ms=$(p50_of "$SO400M" encode batch 64 tokens_in 729)
pre_ms=$(p50_of "$PREFILL" prefill new_tokens 1024 cache_len 0)

echo
echo "== gpu-run summary: $GPU_NAME, $(( $(date +%s) - START )) s =="
if [[ -n $PEAK ]]; then
    echo "bf16 dense peak: $PEAK TFLOP/s (NVIDIA datasheet; not measured: cuda_ops.h has no plain GEMM entry)"
else
    echo "bf16 peak: unknown for this GPU (not measured: cuda_ops.h has no plain GEMM entry)"
fi
report() {   # LABEL FLOP MS
    if [[ -z $3 ]]; then
        echo "$1: no measurement"
        return
    fi
    awk -v l="$1" -v f="$2" -v ms="$3" -v peak="$PEAK" 'BEGIN {
        t = f / (ms * 1e-3) / 1e12
        printf "%s: p50 %.3f ms, %.1f TFLOP/s of linear layers", l, ms, t
        if (peak != "") printf " = %.0f %% of peak", 100 * t / peak
        printf "\n" }'
}
report "siglip-so400m-384 encode batch 64 (46656 tokens)" "$ENC_FLOP" "$enc_ms"
report "llama-3-8b prefill 1024 new tokens, cache 0" "$PRE_FLOP" "$pre_ms"
for f in "$SO400M" "$PREFILL" "$DECODE"; do
    if [[ -f $f ]]; then echo "wrote $f"; else echo "missing $f"; fi
done
exit "$status"
