#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: galera_state
short_description: Report a Galera node's position (uuid and seqno), whether it runs, and its wsrep status
version_added: 0.1.0
description:
  - Reads C(grastate.dat) in I(datadir) and asks the server, through its socket, for its wsrep status.
  - While the server runs, the position is the running one (C(wsrep_local_state_uuid) and
    C(wsrep_last_committed)); grastate.dat says seqno -1 then.
  - >-
    When the server is stopped, a clean shutdown left the last committed seqno in grastate.dat. After an
    unclean stop (crash, C(kill -9), power loss) grastate.dat says seqno -1; with I(recover) the module then
    runs C(<mysqld> --wsrep-recover --user=mysql --datadir=<datadir> --log-error=<tmpfile>) and reads the
    position from the line C(WSREP: Recovered position: <uuid>:<seqno>) (C([WSREP] Recovered position) on PXC 8).
  - The recovery run reads the server's normal option files, which must enable wsrep (C(wsrep_on=ON) and a
    C(wsrep_provider)); with wsrep disabled the server skips position recovery and the module says so.
  - The recovery run starts the server binary in recovery mode for a few seconds (it exits after logging the
    position); it performs the InnoDB crash recovery the next start would perform anyway, writes no
    grastate.dat and changes no data.
    It is never run while a C(mariadbd) or C(mysqld) process exists on the host, answering or not.
  - Feed the results of all nodes to M(dbops.clusters.galera_bootstrap_decision).
  - Never changes anything (C(changed=false)).
options:
  datadir:
    description: The server's data directory, which holds C(grastate.dat).
    type: path
    default: /var/lib/mysql
  mysqld:
    description:
      - The server binary used for C(--wsrep-recover). Default is the first that exists of C(/usr/sbin/mariadbd)
        and C(/usr/sbin/mysqld).
    type: path
  recover:
    description:
      - Run C(--wsrep-recover) when the server is not running and grastate.dat has no seqno (-1) or is missing
        while the datadir holds InnoDB data.
    type: bool
    default: true
extends_documentation_fragment:
  - dbops.clusters.mysql_login
attributes:
  check_mode:
    support: full
    description:
      - Reads grastate.dat and the running server as a normal run does, but never runs C(--wsrep-recover)
        (it starts the server binary and performs InnoDB crash recovery); it says it would, in I(reason)
        and I(would_recover), and the position stays unknown (-1).
  diff_mode:
    support: none
    description: Reports state only.
requirements:
  - PyMySQL (not needed while no server process exists on the host)
author:
  - dbops.clusters maintainers (@dbops)
"""

EXAMPLES = r"""
- name: Read every node's Galera position
  dbops.clusters.galera_state:
  register: galera

- name: Choose the bootstrap node from all of them
  dbops.clusters.galera_bootstrap_decision:
    states: "{{ dict(ansible_play_hosts_all | zip(ansible_play_hosts_all | map('extract', hostvars, 'galera'))) }}"
    expected_size: "{{ ansible_play_hosts_all | length }}"
  run_once: true
  delegate_to: localhost
"""

RETURN = r"""
grastate_found:
  description: Whether C(grastate.dat) exists in I(datadir).
  returned: always
  type: bool
uuid:
  description: The node's state uuid (cluster history), null when it has none.
  returned: always
  type: str
  sample: f3fce748-e5f3-11f1-9b48-23d4b883f3ea
seqno:
  description: Last committed seqno of that history; -1 when unknown.
  returned: always
  type: int
  sample: 3
safe_to_bootstrap:
  description: The C(safe_to_bootstrap) flag of grastate.dat (false when the file or the line is missing).
  returned: always
  type: bool
recovered:
  description: Whether I(seqno) came from C(--wsrep-recover).
  returned: always
  type: bool
running:
  description: Whether the server answers on its socket (or I(login_host)).
  returned: always
  type: bool
client_connections:
  description:
    - The number of the server's client sessions while it runs, null when it does not. Counted from its process
      list without this session, replication, system and event threads, and the local administrative logins
      (C(root), C(mysql)).
    - A rolling upgrade takes the member the clients use last.
  returned: always
  type: int
  sample: 4
wsrep:
  description:
    - Selected C(SHOW GLOBAL STATUS LIKE 'wsrep_%') values without the C(wsrep_) prefix, null when the server
      does not run or runs without wsrep. C(cluster_size), C(local_index) and C(last_committed) are ints.
      C(cluster_name) is the running C(wsrep_cluster_name) variable.
  returned: always
  type: dict
  sample:
    cluster_status: Primary
    local_state_comment: Synced
    cluster_size: 3
    cluster_state_uuid: f3fce748-e5f3-11f1-9b48-23d4b883f3ea
    ready: "ON"
    connected: "ON"
    local_index: 0
    local_state_uuid: f3fce748-e5f3-11f1-9b48-23d4b883f3ea
    last_committed: 3
    cluster_name: dbops_galera
reason:
  description: One sentence on how the position was obtained.
  returned: always
  type: str
would_recover:
  description: In check mode, whether a normal run would have run C(--wsrep-recover).
  returned: always
  type: bool
recover_log:
  description: The last lines the server logged during C(--wsrep-recover), when it ran.
  returned: when recovery ran
  type: list
  elements: str
"""

import os
import pwd
import shutil
import tempfile

from ansible.module_utils.basic import AnsibleModule, missing_required_lib
from ansible_collections.dbops.clusters.plugins.module_utils import galera
from ansible_collections.dbops.clusters.plugins.module_utils.mysql_connection import (
    HAS_PYMYSQL, LOGIN_ARGUMENT_SPEC, PYMYSQL_IMPORT_ERROR, ConnectionError_, Session, connect)
from ansible_collections.dbops.clusters.plugins.module_utils.mysql_errors import is_access_denied

MYSQLD_CANDIDATES = ("/usr/sbin/mariadbd", "/usr/sbin/mysqld")
SERVER_PROCESS_NAMES = ("mariadbd", "mysqld")


def server_processes():
    """PIDs of live mariadbd/mysqld processes on this host (a crashed-but-restarting one counts too)."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/comm" % entry) as handle:
                name = handle.read().strip()
            if name not in SERVER_PROCESS_NAMES:
                continue
            with open("/proc/%s/stat" % entry) as handle:
                state = handle.read().rsplit(")", 1)[-1].split()[0]
        except (IOError, OSError, IndexError):
            continue
        if state != "Z":
            pids.append(int(entry))
    return sorted(pids)


# The sessions of the server's clients: not this one, not replication, system or event threads, not the local
# administrative logins (root, the mysql system account) that the collection's own tasks use.
CLIENT_SESSIONS_QUERY = ("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID <> CONNECTION_ID() "
                         "AND USER NOT IN ('system user', 'event_scheduler', 'root', 'mysql') AND COMMAND <> 'Daemon'")


def read_running(module):
    """(running, wsrep summary, wsrep_on, client sessions) from the server, or (False, None, None, None) when it
    does not answer."""
    try:
        session = Session(connect(module.params), check_mode=module.check_mode)
    except ConnectionError_ as err:
        if is_access_denied(err):
            module.fail_json(msg="the server runs but refused the login: %s" % err, running=True)
        return False, None, None, None
    try:
        status = galera.read_wsrep_status(session)
        variables = session.variables(["wsrep_on", "wsrep_cluster_name"])
        wsrep_on = variables.get("wsrep_on")
        clients = int(session.value(CLIENT_SESSIONS_QUERY) or 0)
    except Exception as err:  # pylint: disable=broad-except  # a server dying between connect and query
        module.fail_json(msg="the server answered but SHOW GLOBAL STATUS failed: %s" % err, running=True)
    finally:
        session.close()
    summary = galera.wsrep_summary(status)
    if wsrep_on is not None and str(wsrep_on).upper() not in ("ON", "1"):
        summary = None
    if summary is not None:
        summary["cluster_name"] = variables.get("wsrep_cluster_name")
    return True, summary, wsrep_on, clients


def find_mysqld(path):
    if path:
        return path if os.path.exists(path) else None
    return next((p for p in MYSQLD_CANDIDATES if os.path.exists(p)), None)


def run_recovery(module, mysqld, datadir):
    """(exit code, position or None, all output, the log) of a --wsrep-recover run.

    The server logs into a directory its user owns; the module reads that log, stdout and stderr.
    """
    workdir = tempfile.mkdtemp(prefix="galera-recover-")
    logfile = os.path.join(workdir, "recover.log")
    try:
        try:
            account = pwd.getpwnam("mysql")
            if os.geteuid() == 0:
                os.chown(workdir, account.pw_uid, account.pw_gid)
        except KeyError:
            pass
        command = [mysqld, "--wsrep-recover", "--user=mysql", "--datadir=%s" % datadir, "--log-error=%s" % logfile]
        rc, out, err = module.run_command(command, cwd=workdir)
        logged = ""
        if os.path.exists(logfile):
            with open(logfile) as handle:
                logged = handle.read()
        # When the server cannot open the log file it writes to stderr instead: read both.
        text = "\n".join(part for part in (logged, out, err) if part)
        return rc, galera.parse_recovered_position(text), text, logged or "\n".join(part for part in (out, err) if part)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def tail(text, lines=12):
    return [line for line in (text or "").splitlines() if line.strip()][-lines:]


def main():
    argument_spec = dict(
        datadir=dict(type="path", default="/var/lib/mysql"),
        mysqld=dict(type="path"),
        recover=dict(type="bool", default=True),
    )
    argument_spec.update(LOGIN_ARGUMENT_SPEC)
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    # Without PyMySQL the server cannot be asked; that is fine only when no server process exists (a new host
    # whose packages a check-mode run has not installed yet).
    if not HAS_PYMYSQL and server_processes():
        module.fail_json(msg=missing_required_lib("PyMySQL"), exception=str(PYMYSQL_IMPORT_ERROR))
    datadir = module.params["datadir"]
    grastate_path = os.path.join(datadir, "grastate.dat")

    result = dict(changed=False, grastate_found=False, uuid=None, seqno=-1, safe_to_bootstrap=False,
                  recovered=False, running=False, wsrep=None, client_connections=None, reason="", would_recover=False)
    grastate = None
    if os.path.exists(grastate_path):
        try:
            with open(grastate_path) as handle:
                grastate = galera.parse_grastate(handle.read())
        except (IOError, OSError, galera.GaleraStateError) as err:
            module.fail_json(msg="cannot read %s: %s" % (grastate_path, err), **result)
        result.update(grastate_found=True, uuid=grastate["uuid"], seqno=grastate["seqno"],
                      safe_to_bootstrap=grastate["safe_to_bootstrap"])

    running, summary, wsrep_on, clients = read_running(module) if HAS_PYMYSQL else (False, None, None, None)
    result.update(running=running, wsrep=summary, client_connections=clients)
    file_text = ("grastate.dat says %s:%s" % (grastate["uuid"], grastate["seqno"]) if grastate
                 else "%s does not exist" % grastate_path)

    if running:
        if summary is not None and summary.get("local_state_uuid"):
            result.update(uuid=summary["local_state_uuid"].lower(),
                          seqno=summary["last_committed"] if summary.get("last_committed") is not None else -1)
            result["reason"] = ("the server runs with wsrep (%s, %s): position from wsrep_local_state_uuid and "
                                "wsrep_last_committed" % (summary.get("cluster_status"),
                                                          summary.get("local_state_comment")))
        else:
            result["reason"] = "the server runs without wsrep (wsrep_on=%s); %s" % (wsrep_on, file_text)
        module.exit_json(**result)

    if result["seqno"] >= 0:
        result["reason"] = "the server is stopped and the shutdown was clean: %s" % file_text
        module.exit_json(**result)

    why_unknown = "grastate.dat says seqno -1 (unclean stop)" if grastate else file_text
    if not module.params["recover"]:
        result["reason"] = "%s and recover=false: position unknown" % why_unknown
        module.exit_json(**result)
    if not (os.path.exists(os.path.join(datadir, "ibdata1")) or os.path.isdir(os.path.join(datadir, "mysql"))):
        result["reason"] = "%s and %s holds no InnoDB data: nothing to recover" % (why_unknown, datadir)
        module.exit_json(**result)
    pids = server_processes()
    if pids:
        result["reason"] = ("%s, but a server process (pid %s) exists without answering on its socket (starting, "
                            "stopping or hung): not running --wsrep-recover beside it; position unknown"
                            % (why_unknown, ", ".join(str(p) for p in pids)))
        module.exit_json(**result)
    mysqld = find_mysqld(module.params["mysqld"])
    if mysqld is None:
        result["reason"] = "%s and no server binary was found (%s): position unknown" % (
            why_unknown, module.params["mysqld"] or ", ".join(MYSQLD_CANDIDATES))
        module.exit_json(**result)

    if module.check_mode:
        result["would_recover"] = True
        result["reason"] = ("%s; check mode: would run %s --wsrep-recover to read the position from InnoDB "
                            "(not run: it starts the server binary); position unknown" % (why_unknown, mysqld))
        module.exit_json(**result)
    rc, position, text, logged = run_recovery(module, mysqld, datadir)
    result["recover_log"] = tail(logged)
    if position is not None and not galera.is_fresh_position(*position) and position[1] >= 0:
        uuid, seqno = position
        note = ""
        if grastate and grastate["uuid"] and grastate["uuid"] != uuid:
            note = "; note: grastate.dat names uuid %s" % grastate["uuid"]
        result.update(uuid=uuid, seqno=seqno, recovered=True)
        result["reason"] = "%s; %s --wsrep-recover recovered %s:%s from InnoDB%s" % (
            why_unknown, os.path.basename(mysqld), uuid, seqno, note)
    elif position is not None:
        result["reason"] = "%s; --wsrep-recover found no wsrep position in InnoDB (%s:%s): the node never " \
                           "committed cluster state" % (why_unknown, position[0], position[1])
    elif galera.recovery_skipped(text):
        result["reason"] = ("%s; --wsrep-recover skipped position recovery because wsrep is disabled in the "
                            "server's option files (wsrep_on, wsrep_provider): position unknown" % why_unknown)
    else:
        result["reason"] = "%s; --wsrep-recover (exit %s) logged no recovered position: position unknown" % (
            why_unknown, rc)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
