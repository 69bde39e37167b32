# dbops.clusters percona_server role: the scheduled backups of a MySQL-family cluster, run by systemd
# (tasks/schedule_agent.yml installs it; docs/backups-mysql.md and docs/backups-galera.md draw the picture).
# Two methods: "clone" (an asynchronous MySQL topology: the clone plugin's CLONE LOCAL of a replica, streamed with
# tar) and "galera" (a Galera member, desynced while mariadb-backup or XtraBackup streams it; prepared on arrival).
#
#   send CONFIG [full|incremental]
#                   on every member that may take a turn, from its timer (Galera: the full timer's, and the
#                   incremental timer's when the schedule has one). After the member's delay (its turn: the
#                   last candidate first, the member the playbook backups prefer), decides from this server alone
#                   whether it copies itself (mysql_backup.scheduled_turn: a replica that replicates within the lag,
#                   or the only server; galera_backup.scheduled_turn: Synced in a Primary component of all
#                   members), offers the backup to the backup host, copies itself, streams the copy and waits for
#                   the backup host's word; then gates (replication within the lag, or Synced again). The copy
#                   travels in TLS (module_utils/copy_channel.py): the member verifies it reached the backup host
#                   named in its settings, the backup host that the member's certificate names the member.
#                   Exit 1 (the unit fails) when a backup this member took on did not land, or it did not come
#                   back to health.
#   receive CONFIG  on the backup host, one run per connection (socket activation, the connection on stdin and
#                   stdout). Only the group's members may connect (their addresses, then their copy certificates
#                   naming the member the offer speaks for); one backup of a cluster at a time. Answers an
#                   offer (mysql_backup.receiver_answer; for Galera, the level: galera_backup.scheduled_level, an
#                   incremental turn extends the newest chain only from its base's member while that member's
#                   data directory keeps the base's lineage, else copies a full backup, saying why), unpacks the
#                   stream into <repository>/<name> (and prepares a full Galera copy; an incremental stays as it
#                   landed, checked to start where its base ends), describes it (complete only when the whole
#                   stream landed, up to its end frame, the member's tool exited 0 and, for Galera, the prepare
#                   succeeded), points latest at it, keeps the newest N complete chains (the playbook's retention)
#                   and records the outcome, with the turn's level, reason and chain, in dbops-backup-status.json.
#   check CONFIG    on the backup host, from its timer: exit 1 (the unit fails) when the newest complete backup is
#                   older than allowed, saying how old and how the last scheduled backup ended.
#
# The decisions are the collection's own (module_utils/mysql_backup.py and galera_backup.py, installed beside this
# file). No secret is read or written here: the member logs in as root through the server's socket, and the Galera
# backup tool reads its account from the 0600 option file the role wrote (never a command line).
import fcntl
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "python"))

from ansible_collections.dbops.clusters.plugins.module_utils import (  # noqa: E402
    backup_chain, copy_channel, galera, galera_backup, gate, mysql_backup)
from ansible_collections.dbops.clusters.plugins.module_utils.mysql_connection import (  # noqa: E402
    Session, connect)
from ansible_collections.dbops.clusters.plugins.module_utils.mysql_flavors import replication_terms  # noqa: E402
from ansible_collections.dbops.clusters.plugins.module_utils.mysql_switchover import read_state  # noqa: E402
from ansible_collections.dbops.clusters.plugins.module_utils.text_file import write_atomically  # noqa: E402

LOCK = ".dbops-backup.lock"
RECEIVING = ".dbops-backup.receiving"


def say(message):
    print(message, file=sys.stderr, flush=True)   # the journal (stdout is the connection on the backup host)


def write_json(path, value):
    write_atomically(path, json.dumps(value, indent=1, sort_keys=True), "0600")


def read_json(path, default=None):
    try:
        with open(path) as handle:
            return json.load(handle)
    except (IOError, OSError, ValueError):
        return default


def last_words(output):
    """The end of what a tool wrote to its standard error (bytes), for a message."""
    return output.decode(errors="replace").strip()[-300:]


def tail(handle):
    """The last words a tool wrote to its (temporary) error file."""
    handle.seek(0)
    return last_words(handle.read())


# ---- on a member -------------------------------------------------------------------------------------------------

class Clone:
    """An asynchronous MySQL member: CLONE LOCAL into the stage directory, streamed with tar."""

    def __init__(self, config, session):
        self.config, self.session, self.stage = config, session, None
        self.terms = replication_terms(config["flavor"], session.value("SELECT VERSION()"))

    def turn(self):
        take, why = mysql_backup.scheduled_turn(read_state(self.session, self.terms), self.config["lone"],
                                                self.config["max_lag"])
        plugin = self.session.value("SELECT plugin_status FROM information_schema.plugins WHERE plugin_name = 'clone'")
        if take and plugin != "ACTIVE":
            raise RuntimeError("the clone plugin is %s (the percona_server role loads it at start)"
                               % (plugin or "not loaded"))
        return take, why

    def offer(self, level):
        """What the offer says besides the member: a clone is always a full copy."""
        return {}

    def start(self, answer):
        """Copy this server; the header the backup host describes the copy with."""
        self.stage = os.path.join(self.config["stage_dir"], answer["name"])
        clone = mysql_backup.clone_local(self.session, self.stage)
        replica = read_state(self.session, self.terms).get("replica") or {}
        return {"source_host": replica.get("source_host"), "clone_seconds": clone["seconds"],
                "gtid_executed_before": clone["gtid_executed_before"],
                "gtid_executed_after": clone["gtid_executed_after"]}

    def stream(self):
        return ["tar", "-C", self.stage, "-cf", "-", "."]

    def finish(self):
        if self.stage:
            shutil.rmtree(self.stage, ignore_errors=True)

    def gate(self):
        """Wait until this replica replicates within the lag again (a clone takes a backup lock)."""
        def poll():
            replica = read_state(self.session, self.terms).get("replica")
            if replica is None or mysql_backup.replica_healthy(replica, self.config["max_lag"]):
                return replica, []
            return replica, ["IO %s, SQL %s, lag %s s (max %d s)" % (
                replica.get("io_running"), replica.get("sql_running"), replica.get("lag"), self.config["max_lag"])]
        return wait_for_health(self.config, poll)


class GaleraCopy:
    """A Galera member: desynced (out of flow control) while the flavor's backup tool streams it."""

    def __init__(self, config, session):
        self.config, self.session, self.desynced, self.from_lsn = config, session, False, None

    def summary(self):
        return galera.wsrep_summary(galera.read_wsrep_status(self.session))

    def turn(self):
        return galera_backup.scheduled_turn(self.summary(), self.config["expected_size"])

    def offer(self, level):
        """The turn's level and this data directory's lineage as it is now (empty when it has none yet): the backup
        host decides from them and its chains whether an incremental can be taken (galera_backup.scheduled_level)."""
        return {"level": level, "lineage": self.read_lineage()}

    def start(self, answer):
        lineage = self.lineage()
        if answer.get("level") == "incremental":
            # the marker checked by the backup host must still be the one this incremental extends
            if lineage != (answer.get("lineage") or ""):
                raise RuntimeError("the data directory's lineage changed since the offer (%r, the base's %r)"
                                   % (lineage, answer.get("lineage")))
            self.from_lsn = int(answer["from_lsn"])
        self.session.execute("SET GLOBAL wsrep_desync = ON")
        self.desynced = True
        return {"lineage": lineage}

    def read_lineage(self):
        """The data directory's backup lineage marker (galera_backup.LINEAGE_FILE), empty when it has none."""
        try:
            with open(os.path.join(self.config["datadir"], galera_backup.LINEAGE_FILE)) as handle:
                return handle.read().strip()
        except (IOError, OSError):
            return ""

    def lineage(self):
        """The data directory's backup lineage (galera_backup.LINEAGE_FILE), written before its first backup: an
        incremental taken against this backup (by playbooks/galera_backup.yml or an incremental turn) checks it is
        still the same directory."""
        path = os.path.join(self.config["datadir"], galera_backup.LINEAGE_FILE)
        marker = self.read_lineage()
        if not marker:
            marker = galera_backup.lineage_text(self.config["member"], str(uuid.uuid4()))
            write_atomically(path, marker + "\n", "0640", owner="mysql", group="mysql")
        return marker

    def stream(self):
        return [self.config["tool"], "--defaults-extra-file=%s" % self.config["option_file"], "--backup",
                "--galera-info", "--stream=%s" % self.config["stream"], "--target-dir=/tmp"] + (
                    ["--incremental-lsn=%d" % self.from_lsn] if self.from_lsn is not None else [])

    def finish(self):
        if self.desynced:
            self.session.execute("SET GLOBAL wsrep_desync = OFF")
            self.desynced = False

    def gate(self):
        """Wait until the member is Synced in the whole cluster again (it applies what queued while desynced)."""
        def poll():
            summary = self.summary()
            return summary, galera.health_problems(summary, self.config["expected_size"])
        return wait_for_health(self.config, poll)


def wait_for_health(config, poll):
    """The member's gate after its copy, with the collection's gate policy: empty when healthy, else why not."""
    outcome = gate.wait(poll, config["gate_timeout"], 2)
    return "" if outcome["ok"] else gate.failure_message(config["member"], outcome)


METHODS = {"clone": Clone, "galera": GaleraCopy}


def send(config, level="full"):
    if config["delay"]:
        say("waiting %d s: the members before this one in the schedule's order copy first" % config["delay"])
        time.sleep(config["delay"])
    method = METHODS[config["method"]](config, Session(connect({})))
    try:
        take, why = method.turn()
    except RuntimeError as err:
        say("%s cannot copy itself: %s" % (config["member"], err))
        return 1
    if not take:
        say("no backup from %s: %s" % (config["member"], why))
        return 0
    try:
        channel = copy_channel.connect(config["receiver_address"], config["receiver_port"], config["receiver_name"],
                                       config["tls"])
    except copy_channel.CopyChannelError as err:
        say("the backup of %s did not start: %s" % (config["member"], err))
        return 1
    try:
        channel.send_message(dict(method.offer(level), op="offer", member=config["member"],
                                  fresh_within=config["delay"] + config["turn_seconds"]))
        answer = channel.read_message(60)
        if not answer.get("go"):
            say("no backup from %s: %s" % (config["member"], answer.get("reason")))
            return 0
        plan = ": %s" % answer["plan"] if answer.get("plan") else ""
        say("%s copies itself (%s) as %s%s" % (config["member"], why, answer["name"], plan))
        started = time.time()
        try:
            try:
                header = method.start(answer)
            except Exception as err:  # pylint: disable=broad-except  # the backup host records why; the unit fails
                channel.send_message({"abort": "the %s failed: %s" % (config["method"], err)})
                say("the backup of %s failed: the %s failed: %s" % (config["member"], config["method"], err))
                return 1
            channel.send_message(dict(header, member=config["member"], method=config["method"], started=started))
            with tempfile.TemporaryFile() as errors:
                tool = subprocess.Popen(method.stream(), stdout=subprocess.PIPE, stderr=errors)
                try:
                    sent = channel.send_stream(tool.stdout.fileno())
                finally:
                    tool.stdout.close()
                    exit_code = tool.wait()
                words = tail(errors)
            channel.send_message({"exit": exit_code, "sent": sent, "words": words})
            result = channel.read_message(config["timeout"])
        finally:
            method.finish()
    except (copy_channel.CopyChannelError, OSError) as err:
        say("the backup of %s did not land: the connection to the backup host failed: %s" % (config["member"], err))
        return 1
    finally:
        channel.close()
    if exit_code != 0 or not result.get("ok"):
        say("the backup of %s did not land: %s exit %s (%s); the backup host says: %s"
            % (config["member"], method.stream()[0], exit_code, words, result.get("message")))
        return 1
    say("backup %s landed on the backup host in %.1f s (%d bytes): %s"
        % (answer["name"], time.time() - started, sent, result.get("message")))
    unhealthy = method.gate()
    if unhealthy:
        say("after the backup, %s" % unhealthy)
        return 1
    return 0


# ---- on the backup host ------------------------------------------------------------------------------------------

def peer_address():
    peer = socket.socket(fileno=os.dup(0)).getpeername()[0]
    return peer[7:] if peer.startswith("::ffff:") else peer


def record(repository, attempt):
    status = mysql_backup.read_status(repository)
    status["last_attempt"] = attempt
    # the newest turns, each with its level, reason and chain: what the status reports of the schedule
    status["turns"] = ([attempt] + [turn for turn in status.get("turns", [])
                                    if turn.get("name") != attempt.get("name")])[:mysql_backup.TURNS_KEPT]
    if attempt["outcome"] == "complete":
        status["last_good"] = attempt
    write_json(os.path.join(repository, mysql_backup.STATUS), status)


def run(argv, failure, timeout):
    """Run one step of a receipt; RuntimeError naming what failed and the tool's last words."""
    done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=timeout, check=False)
    if done.returncode != 0:
        raise RuntimeError("%s (%s exit %d: %s)" % (failure, argv[0], done.returncode, last_words(done.stderr)))


def unpack(argv, channel, timeout):
    """Feed the member's stream to the unpacking tool, to its end frame; RuntimeError when either side failed."""
    with tempfile.TemporaryFile() as errors:
        tool = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=errors)
        try:
            received = channel.receive_stream(tool.stdin.write, timeout)
            tool.stdin.close()
            exit_code = tool.wait(timeout)
        except (copy_channel.CopyChannelError, OSError, subprocess.TimeoutExpired) as err:
            tool.kill()
            exit_code = tool.wait()
            raise RuntimeError("the stream did not unpack whole: %s (%s exit %d: %s)"
                               % (err, argv[0], exit_code, tail(errors)))
        if exit_code != 0:
            raise RuntimeError("the stream did not unpack whole (%s exit %d: %s)" % (argv[0], exit_code, tail(errors)))
    sent = channel.read_message(60)
    if sent.get("exit") != 0:
        raise RuntimeError("the member's copy failed (exit %s: %s)" % (sent.get("exit"), sent.get("words")))
    if sent.get("sent") != received:
        raise RuntimeError("the member sent %s bytes, %d arrived" % (sent.get("sent"), received))
    return received


def receive(config):
    peer = peer_address()
    try:
        channel = copy_channel.accept(socket.socket(fileno=os.dup(0)), config["tls"])
        offer = channel.read_message(60)
    except copy_channel.CopyChannelError as err:
        say("refused a connection from %s: %s" % (peer, err))
        return 1
    try:
        return receive_offer(config, channel, peer, offer)
    finally:
        channel.close()


def receive_offer(config, channel, peer, offer):
    members = config["members"]
    member = offer.get("member")
    if members.get(member) != peer or member not in channel.peer_names():
        say("refused an offer from %s (certificate of %s) naming %r: not that member's address and certificate (%s)"
            % (peer, ", ".join(channel.peer_names()), member, members))
        channel.send_message({"go": False, "reason": "%s (certificate of %s) is not member %s of %s" % (
            peer, ", ".join(channel.peer_names()), member, config["cluster_group"])})
        return 1
    repository = config["repository"]
    os.makedirs(repository, mode=0o700, exist_ok=True)
    lock = open(os.path.join(repository, LOCK), "a")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        receiving = ""
    except (IOError, OSError):
        receiving = (read_json(os.path.join(repository, RECEIVING), {}) or {}).get("member", "another member")
    answer = mysql_backup.receiver_answer(mysql_backup.read_backups(repository), time.time(),
                                          float(offer.get("fresh_within", 0)), receiving)
    if not answer["go"]:
        say("no backup from %s: %s" % (member, answer["reason"]))
        channel.send_message(answer)
        return 0
    plan, pieces = {"level": "full", "base": "", "from_lsn": None, "reason": ""}, []
    if config["method"] == "galera":
        plan, pieces = galera_plan(config, repository, member, offer)
    name = "%s-%s%s" % (time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()), member,
                        "-incremental" if plan["level"] == "incremental" else "")
    path = os.path.join(repository, name)
    attempt = {"name": name, "member": member, "offered": time.time(), "level": plan["level"],
               "turn": offer.get("level", "full"), "base": plan["base"], "reason": plan["reason"],
               "chain": [piece["name"] for piece in pieces] + [name]}
    write_json(os.path.join(repository, RECEIVING), attempt)
    channel.send_message(dict(answer, name=name, level=plan["level"], from_lsn=plan["from_lsn"],
                              lineage=offer.get("lineage", ""), plan=plan["reason"]))
    try:
        header = channel.read_message(config["timeout"])
        if "abort" in header:
            raise RuntimeError(header["abort"])
        if header.get("method") != config["method"]:
            raise RuntimeError("a %s backup offered to the receiver of %s backups"
                               % (header.get("method"), config["method"]))
        os.mkdir(path, 0o700)
        extract = (["tar", "-x", "--no-overwrite-dir", "-C", path] if config["method"] == "clone"
                   else [config["stream"], "-x", "-C", path])
        received = unpack(extract, channel, config["timeout"])
        extra = {}
        if config["method"] == "galera":
            extra = galera_landed(config, path, plan, header, received)
        source_host = header.get("source_host")
        source = source_host if source_host in members else next(
            (name for name, address in members.items() if address == source_host), source_host)
        description = {"member": member, "source": source,
                       "cluster_group": config["cluster_group"], "method": header.get("method"),
                       "scheduled": True, "gtid_executed_before": header.get("gtid_executed_before"),
                       "gtid_executed_after": header.get("gtid_executed_after"),
                       "started": header.get("started"), "finished": time.time(), "complete": True}
        description.update(extra)
        write_json(os.path.join(path, mysql_backup.DESCRIPTION), description)
        latest = os.path.join(repository, "latest")
        if os.path.lexists(latest):
            os.remove(latest)
        os.symlink(path, latest)
        old_backups, old_logs = mysql_backup.expired(mysql_backup.read_backups(repository),
                                                     mysql_backup.read_archives(repository), config["keep"])
        for directory in old_backups:
            shutil.rmtree(directory)
        for log in old_logs:
            os.remove(log)
        message = "%s complete (%d bytes); kept %d backup(s), removed %d backup(s) and %d archived log(s)%s" % (
            name, received, config["keep"], len(old_backups), len(old_logs),
            "; %s" % plan["reason"] if plan["reason"] else "")
        attempt.update(outcome="complete", finished=description["finished"], message=message)
        record(repository, attempt)
        say(message)
        channel.send_message({"ok": True, "message": message})
        return 0
    except Exception as err:  # recorded for the status and the check, then the member's unit fails on the reply
        attempt.update(outcome="failed", finished=time.time(), message=str(err))
        record(repository, attempt)
        say("the backup from %s failed: %s" % (member, err))
        try:
            channel.send_message({"ok": False, "message": str(err)})
        except (copy_channel.CopyChannelError, OSError):
            pass
        return 1
    finally:
        os.remove(os.path.join(repository, RECEIVING))


def galera_plan(config, repository, member, offer):
    """(plan, the pieces before it): the level of a Galera turn (galera_backup.scheduled_level) from the offer's turn
    and lineage and the repository's newest chain; an incremental's chain is its base's plus itself."""
    base, refusal, pieces = None, "", []
    if offer.get("level") == "incremental":
        try:
            found = backup_chain.next_base(backup_chain.with_checkpoints(
                mysql_backup.read_backups(repository), config["checkpoints"]))
            base, pieces = found["base"], found["chain"]
        except backup_chain.ChainBroken as err:
            refusal = str(err)
    plan = galera_backup.scheduled_level(offer.get("level", "full"), member, list(config["members"]),
                                         offer.get("lineage", ""), base, refusal)
    return plan, (pieces if plan["level"] == "incremental" else [])


def galera_landed(config, path, plan, header, received):
    """The description's Galera part of a copy that landed: a full one is prepared here, so the member does no more
    work and the copy is ready to restore at once (and to take incrementals: the flavor's prepare options keep it
    open for them); an incremental cannot be prepared alone, and must start where its base ends."""
    if plan["level"] == "full":
        run([config["tool"]] + config.get("prepare_options", ["--prepare"]) + ["--target-dir=%s" % path],
            "the copy did not prepare", config["timeout"])
    with open(os.path.join(path, config["galera_info"])) as handle:
        extra = {"galera_info": handle.read().strip(), "prepared": plan["level"] == "full", "type": plan["level"],
                 "bytes": received, "lineage": header.get("lineage")}
    if plan["level"] == "incremental":
        extra.update(base=plan["base"], reason=plan["reason"])
    if config.get("checkpoints"):
        with open(os.path.join(path, config["checkpoints"])) as handle:
            lsn = backup_chain.parse_checkpoints(handle.read())
        if plan["level"] == "incremental" and (lsn["backup_type"] != "incremental"
                                               or lsn["from_lsn"] != plan["from_lsn"]):
            raise RuntimeError("the incremental says backup_type %s from LSN %d, its base %s ends at %d: it does not "
                               "join its chain" % (lsn["backup_type"], lsn["from_lsn"], plan["base"], plan["from_lsn"]))
        extra.update(from_lsn=lsn["from_lsn"], to_lsn=lsn["to_lsn"], last_lsn=lsn["last_lsn"])
    return extra


def check(config):
    repository = config["repository"]
    backups = mysql_backup.read_backups(repository) if os.path.isdir(repository) else []
    status = mysql_backup.repository_status(backups, mysql_backup.read_status(repository).get("last_attempt"),
                                            time.time(), config["max_age"])
    say("%s: %s" % (config["cluster_group"], status["reason"]))
    return 0 if status["ok"] else 1


def main():
    if not (len(sys.argv) == 3 and sys.argv[1] in ("send", "receive", "check")
            or len(sys.argv) == 4 and sys.argv[1] == "send" and sys.argv[3] in galera_backup.SCHEDULED_LEVELS):
        say("usage: %s send CONFIG [full|incremental] | receive CONFIG | check CONFIG" % sys.argv[0])
        return 2
    config = read_json(sys.argv[2])
    if config is None:
        say("cannot read %s" % sys.argv[2])
        return 2
    if sys.argv[1] == "send":
        return send(config, *sys.argv[3:])
    return {"receive": receive, "check": check}[sys.argv[1]](config)


if __name__ == "__main__":
    sys.exit(main())
