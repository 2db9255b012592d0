#!/usr/bin/env bash
# mpi_check.sh — the MPI sweep gives the same results.csv as one process:
# scenarios/sweep-example.yaml (--duration 5 --replications 2) with ./vlsim,
# then with `mpirun -np 2 ./vlsim-mpi`, compared with cmp. Run from the
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
fail=0
if ! ./vlsim sweep "${args[@]}" --out "$tmp/one"; then
  echo "mpi_check: single-process sweep failed"; fail=1
elif ! timeout 300 mpirun --allow-run-as-root --oversubscribe -np 2 ./vlsim-mpi sweep "${args[@]}" --out "$tmp/mpi"; then
  echo "mpi_check: mpirun -np 2 sweep failed"; fail=1
elif ! cmp "$tmp/one/results.csv" "$tmp/mpi/results.csv"; then
  echo "mpi_check: results.csv differs between 1 process and 2 MPI ranks"; fail=1
fi
if [ "$fail" = 0 ]; then
  echo "mpi_check: 1 passed, 0 failed"
else
  echo "mpi_check: 0 passed, 1 failed"
fi
exit "$fail"
