#!/usr/bin/env bash
# MySQL tuning benchmark: one lab host, sysbench stock vs tuned, side by side. Then the tuning engine's
# values for reference machines next to what the seeds used. Usage: bench/mysql_tuning/run.sh [--keep]
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH=$PWD/.venv/bin:$PATH ANSIBLE_CONFIG=$PWD/ansible.cfg
topology=bench/mysql_tuning/topology.yml
lab/lab --topology "$topology" up
trap '[[ ${1:-} == --keep ]] || lab/lab --topology "$topology" down' EXIT
ansible-playbook -i lab/inventory/bench-mysql.yml bench/mysql_tuning/bench.yml
python bench/mysql_tuning/reference_machines.py
