# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The server options MySQL and Percona Server removed or renamed, in one table, and what the plan does with each.

An option file that names a removed option stops mysqld at startup ("unknown variable"), or with the loose-
prefix is silently ignored, which is worse: a `loose-group_replication_ip_whitelist` left from 8.0 would leave the
group open on 8.4. So before any change, every option a plan would write (a user's override, a setting the
collection renders) is looked up here for the flavor and release series the plan is for:

- refused: the option went away in that release; the message names the release and what to use instead. Most
  entries are refused because the replacement is not the same setting under another name (other units, other
  syntax, a component configured outside my.cnf, or no replacement at all): guessing a value for the user would
  change what the server does without saying so.
- translated: the option was renamed with exactly the same meaning (same values, same effect, same default). The
  plan writes it under the new name and its reason says so.

Each entry names its sources (SOURCES): the MySQL Server Version Reference and the MySQL Shell upgrade checker
for MySQL (Percona Server follows MySQL's release numbers and removals), Percona's release notes for its own
options. Options only deprecated (the slave_*/master_* aliases such as slave_parallel_workers, log_slave_updates,
sync_master_info, still accepted by MySQL 9.7.4) are not here: they still start the server.

MariaDB is another family with its own removals (mysql_tuning.invalid_variable_reason); this table is for the
percona and mysql flavors.
"""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dbops.clusters.plugins.module_utils.mysql_flavors import parse_version

SOURCES = {
    "shell": "MySQL Shell upgrade checker: removed system variables and plugins "
             "(github.com/mysql/mysql-shell modules/util/upgrade_checker/upgrade_check_creators.cc "
             "get_removed_sys_vars_check, feature_life_cycle_check.cc Plugin_usage_check)",
    "vref-8.0": "https://dev.mysql.com/doc/mysqld-version-reference/en/optvar-changes-8-0.html",
    "vref-8.2": "https://dev.mysql.com/doc/mysqld-version-reference/en/optvar-changes-8-2.html",
    "vref-8.3": "https://dev.mysql.com/doc/mysqld-version-reference/en/optvar-changes-8-3.html",
    "vref-8.4": "https://dev.mysql.com/doc/mysqld-version-reference/en/optvar-changes-8-4.html",
    "vref-9.0": "https://dev.mysql.com/doc/mysqld-version-reference/en/optvar-changes-9-0.html",
    "vref-9.5": "https://dev.mysql.com/doc/mysqld-version-reference/en/optvar-changes-9-5.html",
    "nutshell-8.4": "https://dev.mysql.com/doc/refman/8.4/en/mysql-nutshell.html",
    "ps-8.4": "https://docs.percona.com/percona-server/8.4/8.4-compatibility-and-removed-items.html",
    "ps-8.1.0-1": "https://docs.percona.com/percona-server/innovation-release/release-notes/8.1.0-1.html",
    "ps-8.2.0-1": "https://docs.percona.com/percona-server/innovation-release/release-notes/8.2.0-1.html",
    "ps-8.3.0-1": "https://docs.percona.com/percona-server/innovation-release/release-notes/8.3.0-1.html",
}

MYSQL_FAMILY = ("percona", "mysql")
PERCONA = ("percona",)

# option (as the server names it, underscores): the release that removed it, the flavors it applies to, the
# replacement (an option name when one takes its place, else a sentence, or None), whether the plan translates it
# (only for a rename with exactly the same meaning), why, and the sources. A release of (8, 0, 0) stands for the
# 8.0 series' development releases: these were gone by 8.0.11, its first GA.
REMOVED_OPTIONS = {
    # -- MySQL 8.0
    "query_cache_limit": ((8, 0, 0), MYSQL_FAMILY, None, False, "the query cache is gone", ("shell",)),
    "query_cache_min_res_unit": ((8, 0, 0), MYSQL_FAMILY, None, False, "the query cache is gone", ("shell",)),
    "query_cache_size": ((8, 0, 0), MYSQL_FAMILY, None, False, "the query cache is gone", ("shell",)),
    "query_cache_type": ((8, 0, 0), MYSQL_FAMILY, None, False, "the query cache is gone", ("shell",)),
    "query_cache_wlock_invalidate": ((8, 0, 0), MYSQL_FAMILY, None, False, "the query cache is gone", ("shell",)),
    "innodb_file_format": ((8, 0, 0), MYSQL_FAMILY, None, False, "Barracuda is the only file format", ("shell",)),
    "innodb_file_format_check": ((8, 0, 0), MYSQL_FAMILY, None, False, "Barracuda is the only file format",
                                 ("shell",)),
    "innodb_file_format_max": ((8, 0, 0), MYSQL_FAMILY, None, False, "Barracuda is the only file format",
                               ("shell",)),
    "innodb_large_prefix": ((8, 0, 0), MYSQL_FAMILY, None, False, "large index prefixes are always on", ("shell",)),
    "innodb_support_xa": ((8, 0, 0), MYSQL_FAMILY, None, False, "two-phase commit is always on", ("shell",)),
    "innodb_locks_unsafe_for_binlog": ((8, 0, 0), MYSQL_FAMILY, None, False, "a switch with no replacement",
                                       ("shell",)),
    # Refused: it was an on/off switch, its replacement chooses an algorithm.
    "innodb_checksums": ((8, 0, 0), MYSQL_FAMILY, "innodb_checksum_algorithm", False,
                         "innodb_checksum_algorithm takes an algorithm, not on/off", ("shell",)),
    # Refused: innodb_rollback_segments counts rollback segments per undo tablespace from 8.0, not in total.
    "innodb_undo_logs": ((8, 0, 0), MYSQL_FAMILY, "innodb_rollback_segments", False,
                         "innodb_rollback_segments counts per undo tablespace from 8.0", ("shell",)),
    # Translated: the same variable under its standard name, same values (READ-COMMITTED ...), same default.
    "tx_isolation": ((8, 0, 0), MYSQL_FAMILY, "transaction_isolation", True,
                     "renamed transaction_isolation in 5.7.20, same values", ("shell",)),
    "tx_read_only": ((8, 0, 0), MYSQL_FAMILY, "transaction_read_only", True,
                     "renamed transaction_read_only in 5.7.20, same values", ("shell",)),
    # -- MySQL 8.2
    # Refused: days against seconds, and the role sets binlog_expire_logs_seconds itself.
    "expire_logs_days": ((8, 2, 0), MYSQL_FAMILY, "binlog_expire_logs_seconds", False,
                         "binlog_expire_logs_seconds counts seconds, not days, and the roles set it from "
                         "percona_server_binlog_expire_seconds", ("shell", "vref-8.2", "ps-8.2.0-1", "ps-8.4")),
    "abort_slave_event_count": ((8, 2, 0), MYSQL_FAMILY, None, False, "a test option with no replacement",
                                ("vref-8.2", "ps-8.2.0-1")),
    "disconnect_slave_event_count": ((8, 2, 0), MYSQL_FAMILY, None, False, "a test option with no replacement",
                                     ("vref-8.2", "ps-8.2.0-1")),
    # -- MySQL 8.3
    "master_info_repository": ((8, 3, 0), MYSQL_FAMILY, None, False,
                               "replication metadata is always kept in tables (TABLE was the only choice left)",
                               ("shell",)),
    "relay_log_info_repository": ((8, 3, 0), MYSQL_FAMILY, None, False,
                                  "replication metadata is always kept in tables (TABLE was the only choice left)",
                                  ("shell",)),
    "master_info_file": ((8, 3, 0), MYSQL_FAMILY, None, False, "replication metadata is kept in tables, not files",
                         ("shell",)),
    "relay_log_info_file": ((8, 3, 0), MYSQL_FAMILY, None, False,
                            "replication metadata is kept in tables, not files", ("shell",)),
    "log_bin_use_v1_row_events": ((8, 3, 0), MYSQL_FAMILY, None, False,
                                  "version 2 row events are always written", ("shell",)),
    "transaction_write_set_extraction": ((8, 3, 0), MYSQL_FAMILY, None, False,
                                         "write sets are always extracted with XXHASH64", ("shell",)),
    "slave_rows_search_algorithms": ((8, 3, 0), MYSQL_FAMILY, None, False,
                                     "the applier always uses INDEX_SCAN,HASH_SCAN", ("shell",)),
    # Translated: renamed in 8.0.22 with the same syntax and values (AUTOMATIC or a list of addresses). Dropping
    # it would be worse than refusing: under loose- the server starts without the allowlist the user asked for.
    "group_replication_ip_whitelist": ((8, 3, 0), MYSQL_FAMILY, "group_replication_ip_allowlist", True,
                                       "renamed group_replication_ip_allowlist in 8.0.22, same values",
                                       ("shell", "vref-8.3", "ps-8.4")),
    "character_set_client_handshake": ((8, 3, 0), MYSQL_FAMILY, None, False,
                                       "the client's character set is always taken from the handshake",
                                       ("vref-8.3", "ps-8.3.0-1", "ps-8.4")),
    "old_style_user_limits": ((8, 3, 0), MYSQL_FAMILY, None, False, "user limits are counted per account",
                              ("ps-8.3.0-1",)),
    # Refused: a switch became a size; host_cache_size=0 does what skip-host-cache did.
    "skip_host_cache": ((8, 3, 0), MYSQL_FAMILY, "host_cache_size=0", False,
                        "the host cache is switched off by its size", ("ps-8.3.0-1",)),
    "innodb": ((8, 3, 0), MYSQL_FAMILY, None, False, "InnoDB cannot be switched off", ("vref-8.3",)),
    # -- MySQL 8.4
    "old": ((8, 4, 0), MYSQL_FAMILY, None, False, "a compatibility switch with no replacement",
            ("shell", "ps-8.4")),
    "new": ((8, 4, 0), MYSQL_FAMILY, None, False, "a compatibility switch with no replacement", ("shell", "ps-8.4")),
    "binlog_transaction_dependency_tracking": ((8, 4, 0), MYSQL_FAMILY, None, False,
                                               "WRITESET dependency tracking is built in and always used",
                                               ("shell", "vref-8.4", "ps-8.4")),
    "group_replication_recovery_complete_at": ((8, 4, 0), MYSQL_FAMILY, None, False,
                                               "a joiner is online once it applied what it received",
                                               ("shell", "vref-8.4", "ps-8.4")),
    "avoid_temporal_upgrade": ((8, 4, 0), MYSQL_FAMILY, None, False, "pre-5.6.4 temporal columns are gone",
                               ("shell", "vref-8.4", "ps-8.4")),
    "show_old_temporals": ((8, 4, 0), MYSQL_FAMILY, None, False, "pre-5.6.4 temporal columns are gone",
                           ("shell",)),
    # Refused: authentication_policy takes a list of factors ('*,,'), not a plugin name.
    "default_authentication_plugin": ((8, 4, 0), MYSQL_FAMILY, "authentication_policy", False,
                                      "authentication_policy takes a list of factors, for example "
                                      "'caching_sha2_password,,'", ("vref-8.4", "ps-8.4")),
    "admin_ssl": ((8, 4, 0), MYSQL_FAMILY, "admin_tls_version", False,
                  "the admin interface's TLS is switched by admin_tls_version", ("vref-8.4", "ps-8.4")),
    "authentication_fido_rp_id": ((8, 4, 0), MYSQL_FAMILY, "authentication_webauthn_rp_id", False,
                                  "the FIDO plugin was replaced by the WebAuthn plugin", ("vref-8.4", "shell")),
    # The keyring_file and keyring_encrypted_file plugins are gone; their components read a manifest and a JSON
    # configuration file, not my.cnf.
    "keyring_file_data": ((8, 4, 0), MYSQL_FAMILY, "the component_keyring_file component", False,
                          "the keyring_file plugin was removed", ("shell",)),
    "keyring_encrypted_file_data": ((8, 4, 0), MYSQL_FAMILY, "the component_keyring_encrypted_file component",
                                    False, "the keyring_encrypted_file plugin was removed", ("shell", "vref-8.4")),
    "keyring_encrypted_file_password": ((8, 4, 0), MYSQL_FAMILY, "the component_keyring_encrypted_file component",
                                        False, "the keyring_encrypted_file plugin was removed",
                                        ("shell", "vref-8.4")),
    # -- MySQL 9.x
    "mysql_native_password": ((9, 0, 0), MYSQL_FAMILY, "caching_sha2_password accounts", False,
                              "the mysql_native_password plugin was removed (8.4 loads it only with this option)",
                              ("vref-9.0", "nutshell-8.4")),
    "mysql_native_password_proxy_users": ((9, 0, 0), MYSQL_FAMILY, None, False,
                                          "the mysql_native_password plugin was removed", ("vref-9.0",)),
    "group_replication_allow_local_lower_version_join": ((9, 5, 0), MYSQL_FAMILY, None, False,
                                                         "a member of a lower version cannot join a group",
                                                         ("vref-9.5",)),
    # -- Percona Server's own
    "keyring_vault_config": ((8, 1, 0), PERCONA, "the component_keyring_vault component", False,
                             "the keyring_vault plugin was removed", ("ps-8.1.0-1",)),
    "keyring_vault_timeout": ((8, 1, 0), PERCONA, "the component_keyring_vault component", False,
                              "the keyring_vault plugin was removed", ("ps-8.1.0-1",)),
    "innodb_parallel_doublewrite_path": ((8, 3, 0), PERCONA, None, False,
                                         "MySQL's own doublewrite files replaced it (no effect since 8.0.23)",
                                         ("ps-8.3.0-1",)),
    "innodb_parallel_dblwr_encrypt": ((8, 3, 0), PERCONA, None, False,
                                      "MySQL's own doublewrite encryption replaced it (no effect since 8.0.23)",
                                      ("ps-8.3.0-1",)),
}

# Options that exist in the target but whose value names a plugin that is gone: (option, word in the value,
# release, flavors, what instead, sources). A server asked to load a missing plugin library or to use a missing
# authentication plugin does not start, or starts without what was asked.
REMOVED_VALUES = (
    ("authentication_policy", "mysql_native_password", (9, 0, 0), MYSQL_FAMILY,
     "caching_sha2_password (move the accounts first)", ("vref-9.0",)),
    ("early_plugin_load", "keyring_file.so", (8, 4, 0), MYSQL_FAMILY, "the component_keyring_file component",
     ("shell",)),
    ("early_plugin_load", "keyring_encrypted_file.so", (8, 4, 0), MYSQL_FAMILY,
     "the component_keyring_encrypted_file component", ("shell",)),
    ("early_plugin_load", "keyring_vault.so", (8, 1, 0), PERCONA, "the component_keyring_vault component",
     ("ps-8.1.0-1",)),
    ("plugin_load", "authentication_fido.so", (8, 4, 0), MYSQL_FAMILY, "authentication_webauthn.so", ("shell",)),
    ("plugin_load_add", "authentication_fido.so", (8, 4, 0), MYSQL_FAMILY, "authentication_webauthn.so",
     ("shell",)),
)

_BOOLEAN_PREFIXES = ("skip_", "disable_", "enable_")


def option_key(option):
    """The table's name for an option as written in my.cnf or an override: dashes to underscores, without the
    loose- prefix; a boolean prefix (skip-, disable-, enable-) is dropped unless the name with it is an entry
    (skip_host_cache is one)."""
    name = str(option).strip().lower().replace("-", "_")
    if name.startswith("loose_"):
        name = name[len("loose_"):]
    if name in REMOVED_OPTIONS:
        return name
    for prefix in _BOOLEAN_PREFIXES:
        if name.startswith(prefix) and name[len(prefix):] in REMOVED_OPTIONS:
            return name[len(prefix):]
    return name


def _release(version):
    return "8.0" if version == (8, 0, 0) else ".".join(str(part) for part in version)


def _product(flavors):
    return "Percona Server" if flavors == PERCONA else "MySQL"


def _as_version(version):
    return version if isinstance(version, tuple) else parse_version(version)


def decision(option, value, flavor, version):
    """What the plan does with `option` (as written) set to `value` on `flavor` at `version` (a tuple or text):
    None when it may be written as it is, else a dict:
      action       'refuse' or 'translate'
      option       the option as given;  key: its table name
      release      the release that removed it ('8.4.0');  removed_in: with the product ('MySQL 8.4.0')
      why          what the release changed, in a few words
      replacement  what to use instead (text), or None
      to           for a translation, the option name to write (the loose- prefix kept)
      reason       one sentence saying what happened and why, naming the release and the replacement
    """
    if flavor not in MYSQL_FAMILY:
        return None
    version = _as_version(version)
    key = option_key(option)
    entry = REMOVED_OPTIONS.get(key)
    if entry:
        removed, flavors, replacement, translate, why, dummy = entry
        if flavor not in flavors or version < removed:
            return None
        release = "%s %s" % (_product(flavors), _release(removed))
        found = {"option": option, "key": key, "release": _release(removed), "removed_in": release, "why": why,
                 "replacement": replacement}
        if translate:
            prefix = "loose_" if str(option).strip().lower().replace("-", "_").startswith("loose_") else ""
            found.update(action="translate", to=prefix + replacement,
                         reason="%s was removed in %s: %s; written as %s" % (key, release, why, prefix + replacement))
            return found
        instead = "; use %s instead" % replacement if replacement else "; it has no replacement"
        found.update(action="refuse", to=None, reason="%s was removed in %s (%s)%s" % (key, release, why, instead))
        return found
    for name, word, removed, flavors, instead, dummy in REMOVED_VALUES:
        if key != name or flavor not in flavors or version < removed or word not in str(value).lower():
            continue
        release = "%s %s" % (_product(flavors), _release(removed))
        return {"action": "refuse", "option": option, "key": key, "release": _release(removed),
                "removed_in": release, "why": "%s is gone" % word, "replacement": instead, "to": None,
                "reason": "%s names %s, which was removed in %s; use %s instead" % (key, word, release, instead)}
    return None


def refusals(settings, flavor, version, label="%s"):
    """One sentence per option of `settings` ({option: value}) the plan must refuse for `flavor` at `version`,
    each starting with label % option. Translations are not refusals (see decision)."""
    out = []
    for option in sorted(settings, key=str):
        found = decision(option, settings[option], flavor, version)
        if found and found["action"] == "refuse":
            out.append("%s: %s" % (label % option, found["reason"]))
    return out
