#!/usr/bin/env bash
# PostgreSQL tuning benchmark: one 2 GiB lab server, pgbench TPC-B and a TPC-C-like mix, stock vs pgtune's
# formulas vs the postgres_tuned role, alternated over rounds, printed as ratios with median and spread.
# Usage: bench/postgres_tuning/run.sh [--keep]   (env: BENCH_ROUNDS=3 BENCH_SECONDS=45 BENCH_WARMUP=10)
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH=$PWD/.venv/bin:$PATH ANSIBLE_CONFIG=$PWD/ansible.cfg
topology=bench/postgres_tuning/topology.yml
lab="python lab/labctl.py --topology $topology"
$lab up
trap '[[ ${1:-} == --keep ]] || $lab down' EXIT
ansible-playbook -i lab/inventory/bench-postgres.yml bench/postgres_tuning/bench.yml
python bench/postgres_tuning/rounds.py bench-postgres-pgb1 bench-postgres-pgb2 10.89.240.11
