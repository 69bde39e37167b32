#!/usr/bin/env bash
# shellcheck disable=SC2317  # stage functions run indirectly, through stage()
# Every check `make test` runs, one stage after another; a failed stage does not stop the others, so the
# summary shows everything at once. Exits non-zero when any stage failed. MOLECULE_SCENARIOS="a b" limits
# the molecule stage to those scenarios; MOLECULE_JOBS (default 2) runs that many scenarios at a time.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
# Build and install outside the work tree: ansible-test would otherwise list files through this repo's
# git, which ignores the installed copy.
build=$(mktemp -d "${TMPDIR:-/tmp}/dbops-clusters-build.XXXXXX")
trap 'rm -rf "$build"' EXIT
results=()
failed=0

record() {  # record NAME RC SECONDS [DETAIL]: one line of the summary
    local name=$1 rc=$2 took=$3 detail=${4:+  ($4)}
    if (( rc == 0 )); then results+=("$(printf '%-28s passed  %5ss%s' "$name" "$took" "$detail")")
    else results+=("$(printf '%-28s FAILED  %5ss  (exit %s)%s' "$name" "$took" "$rc" "$detail")"); failed=$((failed + 1)); fi
}

stage() {  # stage NAME COMMAND...
    local name=$1 start=$SECONDS rc
    shift
    printf '\n\033[1m==> [%s] %s\033[0m\n' "$(date +%T)" "$name"
    "$@"
    rc=$?
    record "$name" "$rc" $((SECONDS - start))
}

# Where a scenario's time goes: molecule's action lines ("➜ converge: Executing" / "Executed") get the second
# they were printed, action_times sums each action from them for the summary, and profile_tasks puts each
# task's time in the scenario's log (the package installs, the drills).
export ANSIBLE_CALLBACKS_ENABLED=ansible.posix.profile_tasks
stamp_actions() {
    local line
    while IFS= read -r line; do
        if [[ $line == *"➜ "*Execut* ]]; then printf '[%s] %s\n' "$EPOCHSECONDS" "$line"
        else printf '%s\n' "$line"; fi
    done
}
action_times() {  # LOG: "create 21 · converge 95 · ..." in the order the actions ran (a repeated one summed)
    sed 's/\x1b\[[0-9;]*m//g' "$1" | awk '
        /^\[[0-9]+\] .*➜ [a-z_]+: Executing/ { match($0, /➜ [a-z_]+:/); a = substr($0, RSTART + 4, RLENGTH - 5)
                                                 start[a] = substr($1, 2, length($1) - 2) + 0
                                                 if (!(a in total)) { order[++n] = a; total[a] = 0 } }
        /^\[[0-9]+\] .*➜ [a-z_]+: Executed/  { match($0, /➜ [a-z_]+:/); a = substr($0, RSTART + 4, RLENGTH - 5)
                                                 # molecule repeats the outcomes in its closing recap: count once
                                                 if (a in start) { total[a] += substr($1, 2, length($1) - 2) - start[a]
                                                                   delete start[a] } }
        END { for (i = 1; i <= n; i++) printf "%s%s %d", (i > 1 ? " · " : ""), order[i], total[order[i]] }'
}
molecule_test() {  # NAME LOG: the scenario's output, each action line stamped
    molecule test -s "$1" 2>&1 | stamp_actions > "$2"
    return "${PIPESTATUS[0]}"
}

scenarios_side_by_side() {  # scenarios_side_by_side NAME...: MOLECULE_JOBS scenarios at a time
    local jobs=${MOLECULE_JOBS:-2} name logs=$build/molecule-logs rc took
    mkdir -p "$logs"
    : > "$logs/results"
    for name in "$@"; do
        while (( $(jobs -rp | wc -l) >= jobs )); do wait -n; done
        printf '\n\033[1m==> [%s] molecule %s started (its output follows when it ends)\033[0m\n' "$(date +%T)" "$name"
        (
            start=$SECONDS
            molecule_test "$name" "$logs/$name.log"
            rc=$?
            echo "$name $rc $((SECONDS - start)) $(action_times "$logs/$name.log")" >> "$logs/results"
            flock "$logs/results" bash -c 'printf "\n\033[1m==> [%s] molecule %s ended (exit %s)\033[0m\n" \
                "$(date +%T)" "$1" "$2"; cat "$3"' _ "$name" "$rc" "$logs/$name.log"
        ) &
    done
    wait
    while read -r name rc took actions; do record "molecule $name" "$rc" "$took" "$actions"; done < "$logs/results"
}

# The installed copy is what sanity tests; its dependencies (galaxy.yml) are installed and proven by molecule
# default, which drives a fresh host from the tarball with ansible-core and those dependencies only.
build_and_install() {
    mkdir -p "$build/dist" \
    && ansible-galaxy collection build --force --output-path "$build/dist" . \
    && ansible-galaxy collection install --force --no-deps -p "$build/collections" "$build"/dist/dbops-clusters-*.tar.gz \
    && echo "--- resolving modules and roles by FQCN from the installed copy" \
    && ANSIBLE_COLLECTIONS_PATH="$build/collections" ansible-doc -t module dbops.clusters.host_resources >/dev/null \
    && ANSIBLE_COLLECTIONS_PATH="$build/collections" ansible-doc -t role dbops.clusters.db_host >/dev/null \
    && ANSIBLE_COLLECTIONS_PATH="$build/collections" ansible localhost -m dbops.clusters.host_resources \
         -a memory_limit_mb=512 | grep -q 'memory_source: declared' \
    && echo "    dbops.clusters.host_resources and dbops.clusters.db_host resolve"
}

sanity() {
    # ansible-test must run inside ansible_collections/<ns>/<name>: use the installed copy.
    local collection=$build/collections/ansible_collections/dbops/clusters python_version pip_version
    [[ -d $collection ]] || { echo "no installed copy: the build stage failed"; return 1; }
    python_version=$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
    # Each sanity test gets a venv bootstrapped by get-pip from a host this machine cannot reach: put our
    # stand-in (tests/sanity/get_pip.py) where ansible-test looks for its cached copy.
    pip_version=$(python3 -c 'import ansible_test, os, re
src = open(os.path.join(os.path.dirname(ansible_test.__file__), "_internal/python_requirements.py")).read()
print(re.search(r"pip=.([0-9.]+).,", src).group(1))')
    mkdir -p ~/.ansible/test/cache
    cp tests/sanity/get_pip.py ~/.ansible/test/cache/get_pip_"${pip_version//./_}".py
    (cd "$collection" && ansible-test sanity --python "$python_version" --color no)
}

unit() {
    # Two workers (pytest-xdist); a file's tests stay on one worker: some share a module fixture in order
    # (a MongoDB double's set initiated by the first test, used by the next).
    pytest -q -n 2 --dist loadfile
    local rc=$?
    (( rc == 5 )) && { echo "pytest collected no tests"; return 1; }
    return "$rc"
}

stage "yamllint" yamllint -s .
stage "shellcheck" shellcheck -x -S warning lab/lab lab/*.sh lab/image/*.sh tests/*.sh .ci/run
# ansible-lint is one process for its two to three minutes: it runs beside build, sanity and unit (which leave
# the second core idle part of the time) and its output follows theirs.
lint_log=$build/ansible-lint.log lint_start=$SECONDS
printf '\n\033[1m==> [%s] ansible-lint (production) started (its output follows the unit tests)\033[0m\n' "$(date +%T)"
ansible-lint > "$lint_log" 2>&1 &
lint_pid=$!
stage "build + install + FQCN" build_and_install
stage "ansible-test sanity" sanity
stage "unit (pytest)" unit
wait "$lint_pid"
lint_rc=$?
printf '\n\033[1m==> [%s] ansible-lint (production) ended (exit %s)\033[0m\n' "$(date +%T)" "$lint_rc"
cat "$lint_log"
record "ansible-lint (production)" "$lint_rc" $((SECONDS - lint_start))

stage "lab image" lab/lab image

# molecule/PENDING lists scenarios that are written but not yet green, each with the reason (see the issue
# notes); they are not run by default, and the summary names each one so none is silently skipped.
# MOLECULE_SCENARIOS="name" runs one of them on purpose.
pending=()
pending_names=$(grep -oE '^[a-z0-9_]+' molecule/PENDING 2>/dev/null || true)
if [[ -n ${MOLECULE_SCENARIOS:-} ]]; then
    scenarios=$MOLECULE_SCENARIOS
else
    scenarios=
    for f in molecule/*/molecule.yml; do
        name=$(basename "$(dirname "$f")")
        if grep -qx "$name" <<<"$pending_names"; then
            pending+=("$(printf '%-28s NOT RUN: %s' "molecule $name" "$(grep -E "^$name:" molecule/PENDING | cut -d: -f2- | sed 's/^ *//')")")
        else
            scenarios+=" $name"
        fi
    done
fi
# Scenarios are independent (own hosts, own network) and mostly wait on servers, so two at a time share the
# 2 cores well (MOLECULE_JOBS=1 runs them one after another). One whose molecule.yml has the line
# "# run_all: alone" measures timings (failover gaps): its drill (drill.py) takes the lock DBOPS_DRILL_LOCK
# exclusively, so it runs with no other scenario's work on the CPU. Such scenarios run after the others, beside the
# shortest one (their companion), which holds the lock shared for its whole run: a drill waits for it to end
# (the companion is shorter than an alone scenario's converge, so the wait is usually none).
# The longest scenarios start first, so the two slots end close together (a short one last fills the gap): each
# molecule.yml has a line "# run_all: seconds N", its time in a full make test; one without it starts last.
seconds_of() { grep -oP '^# run_all: seconds \K[0-9]+' "molecule/$1/molecule.yml" 2>/dev/null || echo 0; }
scenarios=$(for scenario in $scenarios; do echo "$(seconds_of "$scenario") $scenario"; done | sort -rn | cut -d' ' -f2)
together=() alone=() companion=
for scenario in $scenarios; do
    if grep -qx '# run_all: alone' "molecule/$scenario/molecule.yml" 2>/dev/null; then alone+=("$scenario")
    else together+=("$scenario"); fi
done
if (( ${#alone[@]} && ${#together[@]} && ${MOLECULE_JOBS:-2} > 1 )); then
    companion=${together[-1]}
    unset 'together[-1]'
fi
export DBOPS_DRILL_LOCK=$build/drill.lock
(( ${#together[@]} )) && scenarios_side_by_side "${together[@]}"
alone_scenario() {  # NAME: one scenario by itself; its output is printed when it ends
    local log=$build/molecule-logs/$1.log rc
    mkdir -p "$build/molecule-logs"
    molecule_test "$1" "$log"
    rc=$?
    cat "$log"
    return "$rc"
}
if [[ -n $companion ]]; then
    printf '\n\033[1m==> [%s] molecule %s started beside the alone scenarios, holding the drill lock shared\033[0m\n' \
        "$(date +%T)" "$companion"
    companion_log=$build/molecule-logs/$companion.log
    mkdir -p "$build/molecule-logs"
    (
        start=$SECONDS
        # -o: flock holds the lock and its child does not, so no daemon the run leaves (an ssh master) keeps it
        flock -s -o "$DBOPS_DRILL_LOCK" bash -c "$(declare -f molecule_test stamp_actions); molecule_test \"\$1\" \"\$2\"" _ \
            "$companion" "$companion_log"
        echo "$? $((SECONDS - start))" > "$companion_log.result"
    ) &
    companion_pid=$!
    sleep 1     # flock has the lock long before a drill asks for it (minutes later, after its scenario's converge)
fi
for scenario in "${alone[@]}"; do
    printf '\n\033[1m==> [%s] molecule %s (alone)\033[0m\n' "$(date +%T)" "$scenario"
    start=$SECONDS
    alone_scenario "$scenario"
    record "molecule $scenario" $? $((SECONDS - start)) "$(action_times "$build/molecule-logs/$scenario.log")"
done
if [[ -n $companion ]]; then
    wait "$companion_pid"
    printf '\n\033[1m==> [%s] molecule %s ended\033[0m\n' "$(date +%T)" "$companion"
    cat "$companion_log"
    read -r rc took < "$companion_log.result"
    record "molecule $companion" "$rc" "$took" "$(action_times "$companion_log")"
fi

printf '\n\033[1m==> summary\033[0m\n'
printf '    %s\n' "${results[@]}"
(( ${#pending[@]} )) && printf '    %s\n' "${pending[@]}"
echo "stages: $(( ${#results[@]} - failed )) passed, $failed failed"
exit $(( failed > 0 ))
