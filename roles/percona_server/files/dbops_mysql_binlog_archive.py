# dbops.clusters percona_server role: the binary-log archive of an asynchronous MySQL topology, run by the systemd
# unit dbops-mysql-binlog-<group>.service on the backup host (tasks/binlog_archive.yml installs it).
#
#   every member (read live) --- state: writable? replicates from? ---> this runner: the live source
#   live source --- binary log dump (mysqlbinlog --raw --stop-never) ---> DIR/binlog/<source>/binlog.NNNNNN
#
# It streams the binary logs of the live source, unchanged, for point-in-time restores, and keeps following it:
# every follow_seconds it reads the members again (module_utils/mysql_switchover.live_source, the rule the
# switchover and the backups use), and when another member has become the source (a switchover, or a promotion
# made by hand) it stops the stream and exits; systemd starts it again and it follows the new source into a
# directory of its own, from the oldest log that server still has. On every start it resumes with the newest log it
# already has for that server (mysqlbinlog rewrites that one whole), so a restart after a network cut or a server
# restart loses nothing the server still has. A member named in the settings (percona_server_binlog_archive_member)
# is followed whatever the source is.
#
# The login (user, password, TLS) is the 0600 option file of the settings: mysqlbinlog reads it with
# --defaults-extra-file, the state reads log in with it; no secret is on a command line or in the settings.
import json
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "python"))

from ansible_collections.dbops.clusters.plugins.module_utils import mysql_backup  # noqa: E402
from ansible_collections.dbops.clusters.plugins.module_utils.mysql_connection import (  # noqa: E402
    ConnectionError_, Session, connect)
from ansible_collections.dbops.clusters.plugins.module_utils.mysql_flavors import replication_terms  # noqa: E402
from ansible_collections.dbops.clusters.plugins.module_utils.mysql_switchover import read_state  # noqa: E402

BINLOG_FILE = re.compile(r".*\.[0-9]{6,}$")


def say(message):
    print(message, file=sys.stderr, flush=True)    # the journal


def login(config, member):
    """The state reads' login: the archive's option file, TLS verified with the CA when the topology has one."""
    params = {"login_config_file": config["client_file"], "login_host": config["hosts"][member],
              "login_port": config["ports"][member], "connect_timeout": 5}
    if config.get("ca"):
        params["login_ca"] = config["ca"]
    else:
        params["login_tls"] = True     # encrypted, the server's identity not verified (as the option file says)
    return params


def read_member(config, member):
    """The member's replication state, {"running": False} when it cannot be read, and its binary logs."""
    try:
        session = Session(connect(login(config, member)))
    except ConnectionError_ as err:
        return {"running": False, "error": str(err)}, []
    try:
        terms = replication_terms(config["flavor"], session.value("SELECT VERSION()"))
        logs = [row.get("Log_name") for row in session.fetch("SHOW BINARY LOGS")]
        return read_state(session, terms), logs
    except Exception as err:  # pylint: disable=broad-except  # said, and the member counts as unreadable
        say("cannot read the state of %s: %s" % (member, err))
        return {"running": False, "error": str(err)}, []
    finally:
        session.connection.close()


def choose(config):
    """({member, source, reason}, that member's binary logs): the server to stream, read from every member."""
    read = dict((member, read_member(config, member)) for member in config["hosts"])
    states = dict((member, state_and_logs[0]) for member, state_and_logs in read.items())
    followed = mysql_backup.archive_member(states, sorted(config["hosts"]), config.get("requested", ""))
    return followed, read[followed["member"]][1]


def newest_archived(directory):
    names = [name for name in os.listdir(directory) if BINLOG_FILE.match(name)]
    return max(names, key=lambda name: int(name.rsplit(".", 1)[1])) if names else None


def main():
    with open(sys.argv[1]) as handle:
        config = json.load(handle)
    try:
        followed, logs = choose(config)
    except mysql_backup.BackupRefused as err:
        say("no archive stream: %s; trying again" % err)
        return 1
    member = followed["member"]
    directory = os.path.join(config["dir"], member)
    os.makedirs(directory, mode=0o700, exist_ok=True)
    start = newest_archived(directory) or (logs[0] if logs else None)
    if not start:
        say("%s lists no binary log; trying again" % member)
        return 1
    say("streaming the binary logs of %s (%s) from %s into %s" % (member, followed["reason"], start, directory))
    stream = subprocess.Popen([
        "mysqlbinlog", "--defaults-extra-file=%s" % config["client_file"],
        "--read-from-remote-source=BINLOG-DUMP-NON-GTIDS", "--raw", "--stop-never",
        "--connection-server-id=%d" % config["server_id"], "--host=%s" % config["hosts"][member],
        "--port=%d" % config["ports"][member],
        "--result-file=%s/" % directory, start])
    while stream.poll() is None:
        time.sleep(config["follow_seconds"])
        if config.get("requested") or stream.poll() is not None:
            continue
        try:
            now = choose(config)[0]
        except mysql_backup.BackupRefused:
            continue    # cannot tell now (a switchover half way): keep the stream, read again next time
        if now["member"] != member:
            say("%s is the source now (%s): the archive follows it" % (now["member"], now["reason"]))
            stream.terminate()
            stream.wait()
            return 0
    say("the stream from %s ended (mysqlbinlog exit %s)" % (member, stream.returncode))
    return stream.returncode or 1


if __name__ == "__main__":
    sys.exit(main())
