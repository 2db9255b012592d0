#!/usr/bin/env bash
# calib/gpu-bundle.sh — pack a CUDA vlcalib built here for a GPU machine that
# has the NVIDIA driver and the CUDA toolkit but not this project's Debian
# packages (GSL, libyaml, OpenBLAS, libavcodec) and no way to install them.
# It must never be needed where `make CUDA=1 vlcalib` works: there,
# calib/gpu-run.sh builds for itself.
#
# Usage (from the repository root, on a machine with nvcc and `make deps` done):
#   calib/gpu-bundle.sh DIR       # DIR must not exist
# Writes:
#   DIR/vlcalib.bin          vlcalib built with `make CUDA=1 vlcalib`
#   DIR/libs.tar.xz          every shared library it loads but the CUDA ones
#                            (cuBLAS, cudart: the GPU machine's own), glibc
#                            and its loader included
#   DIR/run.sh               the GPU machine's side: unpacks into /tmp, picks
#                            a way to start vlcalib that reaches the GPU, then
#                            runs calib/gpu-run.sh with it (VLCALIB=...)
# On the GPU machine, from a copy of this repository holding DIR:
#   OUT=/some/dir bash DIR/run.sh        # REPS and BUDGET_S go to gpu-run.sh
#
# Two ways to start it, tried in order by vlcalib --backend cuda --check: our
# loader and glibc (works whatever glibc the machine has), then the machine's
# own loader and glibc with our other libraries (if a driver library needs a
# newer glibc than ours). Seen working: NVIDIA H100, Ubuntu 24.04, driver
# 580.159.04, CUDA 13.0, from Debian 12 (2026-12-05): the first way.
set -euo pipefail

die() { printf 'gpu-bundle: %s\n' "$*" >&2; exit 2; }

[[ $# -eq 1 ]] || die "usage: calib/gpu-bundle.sh DIR (a new folder)"
DIR=$1
[[ -f Makefile && -f calib/calib.mk ]] || die "run from the repository root"
[[ ! -e $DIR ]] || die "$DIR exists: give a new folder (nothing was changed)"

make -j"$(nproc)" CUDA=1 vlcalib >&2
TMP=$(mktemp -d "${TMPDIR:-/tmp}/gpu-bundle.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
mkdir -p "$TMP/out" "$TMP/bnd/lib"
cp vlcalib "$TMP/out/vlcalib.bin"
# The CPU-only vlcalib back in place, as a plain `make` leaves it.
make -j"$(nproc)" vlcalib >&2

# Every library the loader resolves, but the CUDA ones the GPU machine has.
LOADER=$(ldd "$TMP/out/vlcalib.bin" | awk '/ld-linux/ { print ($3 ~ /^\//) ? $3 : $1 }')
[[ -n $LOADER && -f $LOADER ]] || die "cannot find the dynamic loader of vlcalib"
while read -r name path; do
    case $name in libcuda*|libcublas*|libcudart*) continue ;; esac
    [[ -f $path ]] || die "library $name not found ($path)"
    cp -L "$path" "$TMP/bnd/lib/$name"
done < <(ldd "$TMP/out/vlcalib.bin" | awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }')
cp -L "$LOADER" "$TMP/bnd/lib/ld-linux-x86-64.so.2"
# Check: with only the bundle (and CUDA's folder), nothing is left unresolved
# but the CUDA libraries.
left=$("$TMP/bnd/lib/ld-linux-x86-64.so.2" --library-path "$TMP/bnd/lib" --list "$TMP/out/vlcalib.bin" 2>&1 |
       grep -v -e "$TMP/bnd/lib" -e linux-vdso -e 'libcu' || true)
[[ -z $left ]] || die "libraries left out of the bundle: $left"
tar -cJf "$TMP/out/libs.tar.xz" -C "$TMP" bnd

cat > "$TMP/out/run.sh" <<'EOF'
#!/bin/bash
# The GPU machine's side of calib/gpu-bundle.sh (see there): unpack, find a
# way to start vlcalib that reaches the GPU, run calib/gpu-run.sh with it.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
cd "$HERE/.."
while [[ ! -f calib/gpu-run.sh && $PWD != / ]]; do cd ..; done
[[ -f calib/gpu-run.sh ]] || { echo "run.sh: no calib/gpu-run.sh above $HERE" >&2; exit 2; }
OUT=${OUT:?set OUT to the folder for the calibration files}
U=$(mktemp -d /tmp/vlcalib-bundle.XXXXXX)
tar -xJf "$HERE/libs.tar.xz" -C "$U" || exit 2
cp "$HERE/vlcalib.bin" "$U/vlcalib.bin" && chmod +x "$U/vlcalib.bin"
LP=$U/bnd/lib:/usr/local/cuda/lib64:/usr/local/nvidia/lib64:/usr/lib/x86_64-linux-gnu:/usr/lib64:${LD_LIBRARY_PATH:-}
printf '#!/bin/sh\nexec %s/bnd/lib/ld-linux-x86-64.so.2 --library-path "%s" %s/vlcalib.bin "$@"\n' "$U" "$LP" "$U" > "$U/vlcalib_own"
mkdir -p "$U/noglibc"
for f in "$U"/bnd/lib/*; do
    case $(basename "$f") in ld-linux*|libc.so*|libm.so*|libpthread*|libdl.so*|librt.so*|libstdc++*|libgcc_s*) ;;
        *) ln -sf "$f" "$U/noglibc/" ;; esac
done
printf '#!/bin/sh\nLD_LIBRARY_PATH=%s/noglibc:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} exec %s/vlcalib.bin "$@"\n' "$U" "$U" > "$U/vlcalib_sys"
chmod +x "$U/vlcalib_own" "$U/vlcalib_sys"
nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv || true
W=
for w in "$U/vlcalib_own" "$U/vlcalib_sys"; do
    if timeout 120 "$w" --backend cuda --check > "$U/check.txt" 2>&1; then W=$w; echo "run.sh: $w reaches the GPU"; break; fi
    echo "run.sh: $w failed:" >&2; tail -n 5 "$U/check.txt" >&2
done
[[ -n $W ]] || exit 3
VLCALIB=$W OUT=$OUT calib/gpu-run.sh
EOF
chmod +x "$TMP/out/run.sh"
mv "$TMP/out" "$DIR"
printf 'gpu-bundle: %s: vlcalib.bin, libs.tar.xz (%s), run.sh\n' "$DIR" "$(du -h "$DIR/libs.tar.xz" | cut -f1)" >&2
