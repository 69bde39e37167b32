#!/usr/bin/env bash
# MySQL tuning benchmark: one lab host with a 2 GiB memory limit, sysbench from a second host, MySQL stock vs
# innodb_dedicated_server=ON vs ours, alternated over rounds; the report is printed and appended to
# bench/mysql_tuning/results.md. Then the tuning engine's values for reference machines next to what
# Percona's published configurations used. Usage: bench/mysql_tuning/run.sh [--keep] [ansible-playbook options, e.g. -e bench_warmup_seconds=2]
# (BENCH_ROUNDS, BENCH_SECONDS override the sizes; -e 'bench_drill_host_down=["1:ours"]' takes the host down in
# that slot, to check that a host killed for memory is recorded and the run goes on)
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH=$PWD/.venv/bin:$PATH ANSIBLE_CONFIG=$PWD/ansible.cfg
start=$SECONDS
topology=bench/mysql_tuning/topology.yml
# BENCH_RAW keeps the raw results in that file (report.py can read it again); by default they go with the run.
raw=${BENCH_RAW:-$(mktemp /tmp/bench-mysql.XXXXXX.json)}
lab/lab --topology "$topology" up
keep=false
[[ ${1:-} == --keep ]] && { keep=true; shift; }
trap '$keep || lab/lab --topology "$topology" down; [[ -n ${BENCH_RAW:-} ]] || rm -f "$raw"' EXIT
extra=()
[[ -n ${BENCH_ROUNDS:-} ]] && extra+=(-e "bench_rounds=$BENCH_ROUNDS")
[[ -n ${BENCH_SECONDS:-} ]] && extra+=(-e "bench_seconds=$BENCH_SECONDS")
ansible-playbook -i lab/inventory/bench-mysql.yml bench/mysql_tuning/bench.yml \
  -e @bench/mysql_tuning/settings.yml -e "bench_output=$raw" "${extra[@]}" "$@"
python bench/mysql_tuning/report.py "$raw" --record bench/mysql_tuning/results.md --elapsed $((SECONDS - start))
python bench/mysql_tuning/reference_machines.py
