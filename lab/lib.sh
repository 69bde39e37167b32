# shellcheck shell=bash
# Shared shell helpers for lab/ scripts: progress lines and clear failures.
step() { printf '\033[1m==> %s\033[0m\n' "$*"; }
info() { printf '    %s\n' "$*"; }
die()  { printf '\033[31mERROR: %s\033[0m\n' "$*" >&2; exit 1; }
