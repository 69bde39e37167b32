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

record() {  # record NAME RC SECONDS [DETAIL [LOG]]: one line of the summary; for a failure, why (from LOG)
    local name=$1 rc=$2 took=$3 detail=${4:+  ($4)} log=${5:-} line
    if (( rc == 0 )); then results+=("$(printf '%-28s passed  %5ss%s' "$name" "$took" "$detail")")
    else
        results+=("$(printf '%-28s FAILED  %5ss  (exit %s)%s' "$name" "$took" "$rc" "$detail")"); failed=$((failed + 1))
        if [[ -n $log ]]; then
            while IFS= read -r line; do results+=("    why: $line"); done < <(why_failed "$log")
        fi
    fi
}

# The summary is what a CI page shows of a run: a failed scenario's row is followed by what failed, the failed
# or errored tests (three at most) and the first failed assertion, or the failed task with its message (each cut
# at 200 characters), so the cause is readable without the scenario's whole log.
why_failed() {  # LOG
    sed 's/\x1b\[[0-9;]*m//g; s/^[[:space:]]*[│┌└][[:space:]]\{0,1\}//' "$1" | awk '
        /^E  /                     { if (!first_e) first_e = $0; next }     # the first failed assertion
        /^(FAILED|ERROR) [^ ]+::/  { if (n < 3) { out[++n] = $0; sub(/ -$/, "", out[n]) }; next }
        /^___+ [^ _]/              { head = $0; sub(/^_+ /, "", head); sub(/ .*$/, "", head)  # a failure: its test
                                     if (nh < 3) heads = heads (nh++ ? ", " : "") head; next }
        /^TASK \[/                 { task = $0; next }
        /^fatal: |^failed: /       { fatal = $0; fatal_task = task; msg = ""; next }
        /^\.\.\.ignoring/          { fatal = ""; next }      # an expected failure the play went on from
        fatal && msg == "msg:"     { msg = msg " " $0 }      # the message on the line after its key
        fatal && !msg && /^ *msg:/ { msg = $0; sub(/^ +/, "", msg); sub(/ [|>]-?$/, "", msg) }
        /Idempotence test failed/  { idem = 1; next }
        idem && /^\* \[/           { if (n < 3) out[++n] = "not idempotent: " $0; next }
        /^=+ .*(failed|error).* in [0-9.]+s/ { tests = $0; gsub(/=+ ?/, "", tests); next }  # pytest: what failed
        /^CRITICAL /               { critical = $0; next }   # molecule: the action that failed
        END { if (n && first_e) out[++n] = first_e
              if (!n && tests) { out[++n] = "pytest: " tests; if (heads) out[++n] = "in: " heads
                                 if (first_e) out[++n] = first_e }
              if (!n && fatal) { if (fatal_task) out[++n] = fatal_task; out[++n] = fatal; if (msg) out[++n] = msg }
              if (!n && critical) out[++n] = critical
              for (i = 1; i <= n; i++) { gsub(/^ +| +$/, "", out[i]); gsub(/  +/, " ", out[i])
                                         print substr(out[i], 1, 200) } }'
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
    # wide enough that molecule does not wrap pytest's FAILED lines, which why_failed reads
    COLUMNS=250 molecule test -s "$1" 2>&1 | stamp_actions > "$2"
    return "${PIPESTATUS[0]}"
}

start_scenario() {  # NAME: run one scenario in the background, holding the alone lock shared for its whole run
    local name=$1 logs=$build/molecule-logs
    printf '\n\033[1m==> [%s] molecule %s started (its output follows when it ends)\033[0m\n' "$(date +%T)" "$name"
    (
        start=$SECONDS
        # -o: flock holds the lock and its child does not, so no daemon the run leaves (an ssh master) keeps it
        flock -s -o "$alone_lock" \
            bash -c "$(declare -f molecule_test stamp_actions); molecule_test \"\$1\" \"\$2\"" _ "$name" "$logs/$name.log"
        rc=$?
        echo "$name $rc $((SECONDS - start)) $(action_times "$logs/$name.log")" >> "$logs/results"
        flock "$logs/results" bash -c 'printf "\n\033[1m==> [%s] molecule %s ended (exit %s)\033[0m\n" \
            "$(date +%T)" "$1" "$2"; cat "$3"' _ "$name" "$rc" "$logs/$name.log"
    ) &
}

wait_for_a_slot() {  # until fewer than MOLECULE_JOBS scenarios run
    while (( $(jobs -rp | wc -l) >= ${MOLECULE_JOBS:-2} )); do wait -n; done
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
# 2 cores well (MOLECULE_JOBS=1 runs them one after another). The longest start first, so the two slots end close
# together: each molecule.yml has a line "# run_all: seconds N", its time in a full make test; one without it
# starts last. The drills that bound timings (failover gaps: drill.py's run_alone) take the lock DBOPS_DRILL_LOCK
# exclusively, so no two of them run at once. A scenario whose molecule.yml has the line "# run_all: alone" needs
# more: its drill runs with no other scenario's work on the CPU. It alone gets DBOPS_ALONE_LOCK, which its drill
# takes exclusively (before the drill lock) and every other scenario holds shared for its whole run. Such
# scenarios start once every other one has started and a slot is free, beside the shortest one (their companion):
# their create and converge overlap the last scenarios still running (three at a time for a few minutes), and their
# drill waits until those ended.
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
alone_lock=$build/alone.lock
unset DBOPS_ALONE_LOCK      # only an alone scenario gets it: another would wait on the lock it holds itself
logs=$build/molecule-logs
mkdir -p "$logs"
: > "$logs/results"
: > "$logs/alone-results"
for scenario in "${together[@]}"; do
    wait_for_a_slot
    start_scenario "$scenario"
done
if (( ${#alone[@]} )); then
    wait_for_a_slot
    [[ -n $companion ]] && start_scenario "$companion"
    sleep 1     # flock has the lock long before a drill asks for it (minutes later, after its scenario's converge)
    for scenario in "${alone[@]}"; do
        printf '\n\033[1m==> [%s] molecule %s (alone for its drill)\033[0m\n' "$(date +%T)" "$scenario"
        start=$SECONDS
        DBOPS_ALONE_LOCK=$alone_lock molecule_test "$scenario" "$logs/$scenario.log"
        rc=$?
        flock "$logs/results" cat "$logs/$scenario.log"
        echo "$scenario $rc $((SECONDS - start)) $(action_times "$logs/$scenario.log")" >> "$logs/alone-results"
    done
fi
wait
while read -r name rc took actions; do
    record "molecule $name" "$rc" "$took" "$actions" "$logs/$name.log"
done < <(cat "$logs/results" "$logs/alone-results")

printf '\n\033[1m==> summary\033[0m\n'
printf '    %s\n' "${results[@]}"
(( ${#pending[@]} )) && printf '    %s\n' "${pending[@]}"
echo "stages: $(( ${#results[@]} - failed )) passed, $failed failed"
exit $(( failed > 0 ))
