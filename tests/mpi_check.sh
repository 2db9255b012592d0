#!/usr/bin/env bash
# mpi_check.sh — the MPI sweep gives the same results as one process:
# scenarios/sweep-example.yaml (--duration 5 --replications 2) with ./vlsim,
# then with `mpirun -np 2 ./vlsim-mpi`, results.csv and every point file
# compared with cmp; then, as after an interrupted sweep, two point files of
# the MPI run are removed and a third left as a killed write's temporary,
# and `mpirun -np 2 ... --resume` must run exactly those two again and give
# the same bytes; a second --resume runs nothing. Run from the
# repository root after `make vlsim` and `make MPI=1 vlsim-mpi` (make
# mpi-check does both). Works as root, on localhost only: shared-memory and
# self transports (btl self,vader), no ssh (plm_rsh_agent false).
set -uo pipefail
cd "$(dirname "$0")/.."
export OMPI_MCA_btl=self,vader
export OMPI_MCA_plm_rsh_agent=false
export OMPI_MCA_btl_vader_single_copy_mechanism=none
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/vlsim-mpi.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
args=(scenarios/sweep-example.yaml --duration 5 --replications 2 --quiet)
rargs=(scenarios/sweep-example.yaml --duration 5 --replications 2 --resume)   # with its summary line
fail=0
if ! ./vlsim sweep "${args[@]}" --out "$tmp/one"; then
  echo "mpi_check: single-process sweep failed"; fail=1
elif ! timeout 300 mpirun --allow-run-as-root --oversubscribe -np 2 ./vlsim-mpi sweep "${args[@]}" --out "$tmp/mpi"; then
  echo "mpi_check: mpirun -np 2 sweep failed"; fail=1
elif ! cmp "$tmp/one/results.csv" "$tmp/mpi/results.csv"; then
  echo "mpi_check: results.csv differs between 1 process and 2 MPI ranks"; fail=1
elif ! diff -r "$tmp/one/points" "$tmp/mpi/points" >/dev/null; then
  echo "mpi_check: point files differ between 1 process and 2 MPI ranks"; fail=1
fi
passed=$((1 - fail))

# --resume under MPI after an interruption: points 1 and 4 lost, a temporary left
rfail=0
if [ "$fail" = 0 ]; then
  rm -f "$tmp/mpi/points/00001.json" "$tmp/mpi/points/00004.json" "$tmp/mpi/results.csv"
  echo '{"partial' > "$tmp/mpi/points/00004.json.tmp.AbCdEf"
  out=$(timeout 300 mpirun --allow-run-as-root --oversubscribe -np 2 ./vlsim-mpi sweep "${rargs[@]}" --out "$tmp/mpi" 2>&1)
  if [ $? != 0 ]; then
    echo "mpi_check: mpirun -np 2 sweep --resume failed: $out"; rfail=1
  elif ! grep -q "6 points (2 run, 4 already done)" <<<"$out"; then
    echo "mpi_check: --resume should run the 2 lost points: $out"; rfail=1
  elif ! cmp "$tmp/one/results.csv" "$tmp/mpi/results.csv" || \
       ! diff -r "$tmp/one/points" "$tmp/mpi/points" >/dev/null; then
    echo "mpi_check: a resumed MPI sweep gives other bytes"; rfail=1
  else
    out=$(timeout 300 mpirun --allow-run-as-root --oversubscribe -np 2 ./vlsim-mpi sweep "${rargs[@]}" --out "$tmp/mpi" 2>&1)
    if ! grep -q "6 points (0 run, 6 already done)" <<<"$out" || \
       ! cmp "$tmp/one/results.csv" "$tmp/mpi/results.csv"; then
      echo "mpi_check: a second --resume should run nothing: $out"; rfail=1
    fi
  fi
else
  rfail=1
fi
fail=$((fail + rfail))
passed=$((passed + 1 - rfail))
echo "mpi_check: $passed passed, $fail failed"
[ "$fail" = 0 ]
