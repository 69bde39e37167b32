# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The named differences between the MySQL-family flavors, in one place.

percona (production default), mysql (Oracle/Debian packages; MySQL 9.7 from sid in the lab) and mariadb
(the Galera stand-in). Roles and modules ask this table instead of branching on the flavor themselves.
"""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dbops.clusters.plugins.module_utils.mysql_errors import ER_NO_SUCH_TABLE, error_code

FLAVORS = {
    "percona": {
        "family": "mysql",
        "server_packages": ["percona-server-server", "percona-server-client"],
        # What a rolling package upgrade replaces (playbooks/rolling_upgrade_gr.yml), the package holding mysqld
        # first: its version is the server's.
        "upgrade_packages": ["percona-server-server", "percona-server-client"],
        "service": "mysql",
        "config_dir": "/etc/mysql/mysql.conf.d",
        "default_series": "8.4",
        "percona_release_repo": "ps-84-lts",
        # The repository of each release series the role installs (percona_server_version): Percona Server 8.0's
        # packages are in ps-80, 8.4 LTS's in ps-84-lts.
        "percona_release_repos": {"8.0": "ps-80", "8.4": "ps-84-lts"},
        # mysqlbinlog (the binary-log archive on a backup host, the replay of a restore) without a server
        "binlog_tools_packages": ["percona-server-client"],
        # Paths per OS family (ansible_facts.os_family). The roles install with apt: Debian and Ubuntu only.
        "os_paths": {
            "Debian": {"datadir": "/var/lib/mysql", "socket": "/run/mysqld/mysqld.sock", "tls_dir": "/etc/mysql/tls",
                       "server_binary": "/usr/sbin/mysqld"},
        },
        "galera": {
            "packages": ["percona-xtradb-cluster"],
            "service": "mysql",
            "bootstrap_service": "mysql@bootstrap.service",
            "percona_release_repo": "pxc-84-lts",
            "percona_release_repos": {"8.0": "pxc-80", "8.4": "pxc-84-lts"},
            "default_series": "8.4",
            "provider": "/usr/lib/galera4/libgalera_smm.so",
            "sst_method": "xtrabackup-v2",
            "sst_auth": None,             # PXC 8.x uses its internal mysql.pxc.sst.user
            "server_binary": "/usr/sbin/mysqld",
            # playbooks/galera_backup.yml: Percona XtraBackup, from the same percona-release repository
            "backup": {
                "packages": ["percona-xtrabackup-84", "socat"],
                "tool": "xtrabackup",           # --backup, --prepare; its option file group is its name
                "stream": "xbstream",           # --stream= and the extractor on the backup host (xbstream -x)
                "galera_info": "xtrabackup_galera_info",
                "checkpoints": "xtrabackup_checkpoints",
                # A full backup is prepared on arrival without its rollback phase: a complete --prepare would
                # leave it ready to restore but closed to incrementals; the server rolls back at its first start
                # (XtraBackup's docs: safe to restore as it is).
                "prepare_options": ["--prepare", "--apply-log-only"],
                # applying a chain: every incremental but the last keeps the copy open for the next one
                "incremental_keep_open": ["--apply-log-only"],
                # BACKUP_ADMIN for LOCK INSTANCE FOR BACKUP, REPLICATION CLIENT for the binary log position,
                # performance_schema.log_status for the consistent redo/binlog position of 8.0+
                "privileges": {"*.*": "RELOAD,PROCESS,LOCK TABLES,REPLICATION CLIENT,BACKUP_ADMIN",
                               "performance_schema.log_status": "SELECT"},
            },
        },
    },
    "mysql": {
        "family": "mysql",
        "server_packages": ["mysql-server", "mysql-client"],
        # Debian's mysql-server and mysql-client are metapackages of the -core packages that hold the binaries
        # (mysqld is in mysql-server-core): all four move together, mysqld's package first.
        "upgrade_packages": ["mysql-server-core", "mysql-server", "mysql-client-core", "mysql-client"],
        "service": "mysql",
        "config_dir": "/etc/mysql/mysql.conf.d",
        "default_series": "9.7",
        "percona_release_repo": None,
        "binlog_tools_packages": ["mysql-server-core"],
        # Paths per OS family (ansible_facts.os_family). The roles install with apt: Debian and Ubuntu only.
        "os_paths": {
            "Debian": {"datadir": "/var/lib/mysql", "socket": "/run/mysqld/mysqld.sock", "tls_dir": "/etc/mysql/tls",
                       "server_binary": "/usr/sbin/mysqld"},
        },
        "galera": None,                   # Oracle MySQL has no Galera; Group Replication instead
    },
    "mariadb": {
        "family": "mariadb",
        "server_packages": ["mariadb-server", "mariadb-client"],
        "service": "mariadb",
        "config_dir": "/etc/mysql/mariadb.conf.d",
        "default_series": "11.8",
        "percona_release_repo": None,
        "os_paths": {
            "Debian": {"datadir": "/var/lib/mysql", "socket": "/run/mysqld/mysqld.sock", "tls_dir": "/etc/mysql/tls",
                       "server_binary": "/usr/sbin/mariadbd"},
        },
        "galera": {
            "packages": ["mariadb-server", "mariadb-client", "mariadb-backup", "galera-4", "socat", "rsync"],
            "service": "mariadb",
            "bootstrap_service": None,    # galera_new_cluster starts the regular unit with --wsrep-new-cluster
            "percona_release_repo": None,
            "default_series": "11.8",
            "provider": "/usr/lib/galera/libgalera_smm.so",
            "sst_method": "mariabackup",
            "sst_auth": "mysql:",         # the mysql@localhost account authenticates by unix socket: no password
            "server_binary": "/usr/sbin/mariadbd",
            # playbooks/galera_backup.yml: mariadb-backup (Debian's package)
            "backup": {
                "packages": ["mariadb-backup", "socat"],
                "tool": "mariadb-backup",
                "stream": "mbstream",
                "galera_info": "mariadb_backup_galera_info",
                "checkpoints": "mariadb_backup_checkpoints",
                # A prepared full backup (log-applied) still takes incrementals: mariadb-backup defers the
                # rollback to the server's start, and has no --apply-log-only any more.
                "prepare_options": ["--prepare"],
                "incremental_keep_open": [],
                # BACKUP STAGE and FLUSH need RELOAD, its checks of running queries PROCESS, the binary log
                # position (SHOW MASTER STATUS) BINLOG MONITOR, its replica checks SLAVE MONITOR
                "privileges": {"*.*": "RELOAD,PROCESS,LOCK TABLES,BINLOG MONITOR,SLAVE MONITOR"},
            },
        },
    },
}


class FlavorError(ValueError):
    """An unknown flavor or a version string that cannot be read."""


def flavor(name):
    """The table row of a flavor, failing with the list of known ones."""
    try:
        return FLAVORS[name]
    except KeyError:
        raise FlavorError("unknown flavor %r: expected one of %s" % (name, ", ".join(sorted(FLAVORS))))


def flavor_on(name, os_family):
    """The flavor's row with the paths of `os_family` merged in; FlavorError for an OS the roles do not support."""
    row = dict(flavor(name))
    paths = row.get("os_paths", {})
    if os_family not in paths:
        raise FlavorError("flavor %s is not supported on OS family %r: the roles support %s (apt-based hosts)"
                          % (name, os_family, ", ".join(sorted(paths)) or "none"))
    row.update(paths[os_family])
    row["os_family"] = os_family
    return row


def parse_version(text):
    """'8.4.3-3', '9.7.4', '11.8.2-MariaDB-1' -> (8, 4, 3)."""
    parts = []
    for piece in str(text).split("-", 1)[0].split(".")[:3]:
        digits = "".join(ch for ch in piece if ch.isdigit())
        if not digits:
            break
        parts.append(int(digits))
    if not parts:
        raise FlavorError("cannot read a version from %r" % (text,))
    while len(parts) < 3:
        parts.append(0)
    return tuple(parts)


def stored_source_credentials(session, channel=""):
    """(user, password) a replication channel keeps for its restarts, or None when it has none or the server
    keeps them elsewhere. MySQL and Percona Server keep them in mysql.slave_master_info (the table repository,
    the only one since 8.3); MariaDB keeps them in master.info, a file: None there."""
    try:
        rows = session.fetch("SELECT User_name AS user, User_password AS password FROM mysql.slave_master_info "
                             "WHERE Channel_name = %s", [channel])
    except Exception as err:  # pylint: disable=broad-except  # only "no such table" (MariaDB) is an answer
        if error_code(err) == ER_NO_SUCH_TABLE:
            return None
        raise
    return (rows[0]["user"], rows[0]["password"]) if rows else None


def replication_terms(flavor_name, version):
    """Statement words for configuring a replica: 8.0.23+ says SOURCE/REPLICA, older MySQL and MariaDB differ."""
    family = flavor(flavor_name)["family"]
    ver = parse_version(version)
    if family == "mysql" and ver >= (8, 0, 23):
        return {"change": "CHANGE REPLICATION SOURCE TO", "host": "SOURCE_HOST", "port": "SOURCE_PORT",
                "user": "SOURCE_USER", "password": "SOURCE_PASSWORD", "auto_position": "SOURCE_AUTO_POSITION = 1",
                "ssl": "SOURCE_SSL", "ssl_ca": "SOURCE_SSL_CA", "public_key": "GET_SOURCE_PUBLIC_KEY = 1",
                "verify_cert": "SOURCE_SSL_VERIFY_SERVER_CERT",
                "start": "START REPLICA", "stop": "STOP REPLICA", "reset": "RESET REPLICA ALL",
                "status": "SHOW REPLICA STATUS", "retry": "SOURCE_CONNECT_RETRY"}
    if family == "mysql":
        return {"change": "CHANGE MASTER TO", "host": "MASTER_HOST", "port": "MASTER_PORT",
                "user": "MASTER_USER", "password": "MASTER_PASSWORD", "auto_position": "MASTER_AUTO_POSITION = 1",
                "ssl": "MASTER_SSL", "ssl_ca": "MASTER_SSL_CA", "verify_cert": "MASTER_SSL_VERIFY_SERVER_CERT",
                "public_key": "GET_MASTER_PUBLIC_KEY = 1" if ver >= (8, 0, 0) else None,
                "start": "START SLAVE", "stop": "STOP SLAVE", "reset": "RESET SLAVE ALL",
                "status": "SHOW SLAVE STATUS", "retry": "MASTER_CONNECT_RETRY"}
    # MariaDB keeps CHANGE MASTER; GTID positioning is MASTER_USE_GTID.
    return {"change": "CHANGE MASTER TO", "host": "MASTER_HOST", "port": "MASTER_PORT",
            "user": "MASTER_USER", "password": "MASTER_PASSWORD", "auto_position": "MASTER_USE_GTID = slave_pos",
            "ssl": "MASTER_SSL", "ssl_ca": "MASTER_SSL_CA", "public_key": None,
            "verify_cert": "MASTER_SSL_VERIFY_SERVER_CERT",
            "start": "START SLAVE" if ver < (10, 5, 1) else "START REPLICA",
            "stop": "STOP SLAVE" if ver < (10, 5, 1) else "STOP REPLICA",
            "reset": "RESET SLAVE ALL" if ver < (10, 5, 1) else "RESET REPLICA ALL",
            "status": "SHOW SLAVE STATUS" if ver < (10, 5, 1) else "SHOW REPLICA STATUS",
            "retry": "MASTER_CONNECT_RETRY"}
