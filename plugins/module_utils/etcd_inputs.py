# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Checks of the etcd role's inputs, run on the controller before the first change.

Each check returns sentences naming the variable and the value at fault (never a password). The ranges are
etcd's own (server/embed/config.go, etcdmain): the election timeout at least five heartbeats and at most
50000 ms; the backend quota at most 8 GiB as etcd's documentation advises. Pure functions, unit tested in
tests/unit/test_etcd_inputs.py.
"""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ipaddress
import posixpath
import re

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$")
TOKEN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")
RETENTION = re.compile(r"^[0-9]+[hms]?$")
PACKAGE_DEFAULT_DATA = "/var/lib/etcd/default"
MAX_MEMBERS = 9


def int_value(value):
    """An int from an int or digits; None for anything else (booleans and floats included)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and re.match(r"^[0-9]+$", value.strip()):
        return int(value.strip())
    return None


def int_errors(variable, value, low, high):
    number = int_value(value)
    if number is None or not low <= number <= high:
        return ["%s=%r: must be a whole number from %s to %s" % (variable, value, low, high)]
    return []


def member_count_errors(count, single_member_lab):
    if count == 1 and single_member_lab:
        return []
    if count == 1:
        return ["etcd_group has 1 member: a single member has no fault tolerance; set etcd_single_member_lab=true "
                "to build one on purpose (a lab), or put 3, 5 or 7 hosts in the group"]
    if count < 3 or count % 2 == 0 or count > MAX_MEMBERS:
        return ["etcd_group has %d members: it needs an odd number from 3 to %d (an even number tolerates no more "
                "failures than the odd number below it, and needs one more member for quorum)" % (count, MAX_MEMBERS)]
    return []


def address_errors(addresses):
    """addresses: {host: address}; each an IP address (it goes into the certificate as an IP SAN), distinct."""
    errors, seen = [], {}
    for host in sorted(addresses):
        address = addresses[host]
        try:
            canonical = str(ipaddress.ip_address(str(address).strip()))
        except ValueError:
            errors.append("etcd_address of %s is %r: it must be an IP address (set etcd_address for the host, or "
                          "gather its facts)" % (host, address))
            continue
        if ipaddress.ip_address(canonical).is_unspecified or ipaddress.ip_address(canonical).is_multicast:
            errors.append("etcd_address of %s is %s: not an address a member can be reached at" % (host, address))
        if canonical in seen:
            errors.append("etcd_address %s is both %s's and %s's" % (canonical, seen[canonical], host))
        seen[canonical] = host
    return errors


def user_errors(users):
    """etcd_users: [{name, password, prefix}]. A name is its role's name too; never root (the role manages it)."""
    if not isinstance(users, list):
        return ["etcd_users must be a list of {name, password, prefix}"]
    errors, names = [], []
    for index, user in enumerate(users):
        label = "etcd_users[%d]" % index
        if not isinstance(user, dict):
            errors.append("%s must be a dict {name, password, prefix}" % label)
            continue
        unknown = sorted(set(user) - set(["name", "password", "prefix"]))
        if unknown:
            errors.append("%s has unknown keys %s" % (label, ", ".join(unknown)))
        name = user.get("name")
        if not isinstance(name, str) or not NAME.match(name):
            errors.append("%s name %r: letters, digits, '_', '.', '-' (at most 63)" % (label, name))
        elif name == "root":
            errors.append("%s is root: the role manages root from etcd_root_password" % label)
        elif name in names:
            errors.append("%s name %s is listed twice" % (label, name))
        names.append(name)
        password = user.get("password")
        if not isinstance(password, str) or not password or "\n" in password:
            errors.append("%s (%s) needs a password (a non-empty string, one line)" % (label, name))
        prefix = user.get("prefix")
        if not isinstance(prefix, str) or not prefix.startswith("/"):
            errors.append("%s (%s) prefix %r: a key prefix starting with '/' (Patroni's is /service/)"
                          % (label, name, prefix))
    return errors


def role_errors(inputs):
    """Every refusal of the role's inputs. inputs: the variables without their etcd_ prefix, plus members (the
    group's host names, in order) and addresses ({host: its etcd_address})."""
    errors = []
    members = list(inputs.get("members") or [])
    errors += member_count_errors(len(members), inputs.get("single_member_lab") in (True, "true", "True", "yes"))
    for host in members:
        if not NAME.match(str(host)):
            errors.append("member %r: an etcd member is named by its inventory name: letters, digits, '_', '.', '-'"
                          % host)
    errors += address_errors(inputs.get("addresses") or {})
    errors += int_errors("etcd_client_port", inputs.get("client_port"), 1, 65535)
    errors += int_errors("etcd_peer_port", inputs.get("peer_port"), 1, 65535)
    if int_value(inputs.get("client_port")) is not None and \
            int_value(inputs.get("client_port")) == int_value(inputs.get("peer_port")):
        errors.append("etcd_client_port and etcd_peer_port are both %s" % inputs.get("client_port"))
    data_dir = inputs.get("data_dir")
    if not isinstance(data_dir, str) or not data_dir.startswith("/") \
            or posixpath.normpath(data_dir) in ("/", "/var", "/var/lib"):
        errors.append("etcd_data_dir=%r: an absolute path of a directory of its own" % (data_dir,))
    elif posixpath.normpath(data_dir) == PACKAGE_DEFAULT_DATA:
        errors.append("etcd_data_dir=%s is the Debian package's default single-member data, which the role "
                      "removes: choose a directory of your own (default /var/lib/etcd/dbops)" % data_dir)
    heartbeat = int_value(inputs.get("heartbeat_interval_ms"))
    election = int_value(inputs.get("election_timeout_ms"))
    errors += int_errors("etcd_heartbeat_interval_ms", inputs.get("heartbeat_interval_ms"), 10, 10000)
    errors += int_errors("etcd_election_timeout_ms", inputs.get("election_timeout_ms"), 50, 50000)
    if heartbeat is not None and election is not None and election < 5 * heartbeat:
        errors.append("etcd_election_timeout_ms=%d is less than 5 heartbeats (etcd_heartbeat_interval_ms=%d): etcd "
                      "refuses it (10 heartbeats are advised)" % (election, heartbeat))
    errors += int_errors("etcd_snapshot_count", inputs.get("snapshot_count"), 100, 10000000)
    errors += int_errors("etcd_quota_backend_bytes", inputs.get("quota_backend_bytes"), 16777216, 8589934592)
    if inputs.get("auto_compaction_mode") not in ("periodic", "revision"):
        errors.append("etcd_auto_compaction_mode=%r: periodic or revision" % (inputs.get("auto_compaction_mode"),))
    if not RETENTION.match(str(inputs.get("auto_compaction_retention"))):
        errors.append("etcd_auto_compaction_retention=%r: a number (revisions) or a duration such as 1h"
                      % (inputs.get("auto_compaction_retention"),))
    if inputs.get("log_level") not in ("debug", "info", "warn", "error"):
        errors.append("etcd_log_level=%r: debug, info, warn or error" % (inputs.get("log_level"),))
    if not isinstance(inputs.get("cluster_token"), str) or not TOKEN.match(inputs.get("cluster_token")):
        errors.append("etcd_cluster_token=%r: letters, digits, '_', '.', '-'" % (inputs.get("cluster_token"),))
    errors += int_errors("etcd_health_timeout", inputs.get("health_timeout"), 0, 3600)
    password = inputs.get("root_password")
    if not isinstance(password, str) or len(password) < 8 or "\n" in password:
        errors.append("etcd_root_password is required: one line of at least 8 characters (set it from a vault); "
                      "it is root's password once authentication is on")
    errors += user_errors(inputs.get("users"))
    return errors
