# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Checks of the keepalived role's inputs, run on the controller before the first change, and the quoting of
the SQL check's option file.

Each check returns sentences that name the variable and the value at fault (never a password), so a bad value
is refused before `keepalived -t` would stop it with its own parse error. The ranges are keepalived's
(vrrp_parser.c): priority 1-254 (255 is the address owner's), VRRPv3 advert_int in centiseconds up to 40.95 s,
VRRPv2 in whole seconds up to 255, preempt_delay up to 1000 s. Pure functions, unit tested in
tests/unit/test_keepalived_inputs.py.
"""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ipaddress
import math
import re

from ansible_collections.dbops.clusters.plugins.module_utils.mysql_inputs import int_errors
from ansible_collections.dbops.clusters.plugins.module_utils.mysql_option_file import option_value_error

NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")


def number(value):
    """A float from an int/float/numeric text, None for anything else (booleans included)."""
    if isinstance(value, bool):
        return None
    try:
        return float(str(value).strip())
    except ValueError:
        return None


def seconds_errors(variable, value, low, high):
    """Seconds as keepalived reads them: a number low..high with at most two decimals (hundredths)."""
    seconds = number(value)
    if seconds is None or math.isnan(seconds):
        return ["%s=%r: must be a number of seconds from %s to %s" % (variable, value, low, high)]
    if not low <= seconds <= high:
        return ["%s=%s: must be from %s to %s seconds" % (variable, value, low, high)]
    if abs(seconds * 100 - round(seconds * 100)) > 1e-6:
        return ["%s=%s: keepalived counts in hundredths of a second" % (variable, value)]
    return []


def vip_errors(vips):
    """keepalived_vips: IPv4 host addresses with a prefix, router ids 1-255, distinct ids, names and addresses."""
    if not isinstance(vips, list) or not vips:
        return ["keepalived_vips needs at least one {address: a.b.c.d/len, router_id: 1-255}"]
    errors, router_ids, names, addresses = [], {}, {}, {}
    for index, vip in enumerate(vips):
        label = "keepalived_vips[%d]" % index
        if not isinstance(vip, dict):
            errors.append("%s must be a dict {address: a.b.c.d/len, router_id: 1-255}" % label)
            continue
        address = str(vip.get("address", ""))
        try:
            if not re.match(r"^[0-9.]+/[0-9]{1,2}$", address):
                raise ValueError("not a.b.c.d/len")
            interface = ipaddress.IPv4Interface(address)
            network = interface.network
            if network.prefixlen < 32 and interface.ip in (network.network_address, network.broadcast_address):
                raise ValueError("the network's own or broadcast address")
            if interface.network.prefixlen == 0:
                raise ValueError("prefix 0")
        except ValueError as err:
            errors.append("%s.address=%r: must be an IPv4 host address with its prefix, a.b.c.d/1-32 (%s)"
                          % (label, vip.get("address"), err))
        else:
            if interface.ip in addresses:
                errors.append("%s.address: %s is also keepalived_vips[%d]"
                              % (label, interface.ip, addresses[interface.ip]))
            addresses[interface.ip] = index
        router_id_errors = int_errors(label + ".router_id", vip.get("router_id"), 1, 255)
        errors += router_id_errors
        if not router_id_errors:
            router_id = int(str(vip["router_id"]).strip())
            if router_id in router_ids:
                errors.append("%s.router_id=%d is also keepalived_vips[%d]'s: each VIP needs its own virtual "
                              "router id" % (label, router_id, router_ids[router_id]))
            router_ids[router_id] = index
            name = str(vip.get("name", "VI_%d" % router_id))
            if not NAME.match(name):
                errors.append("%s.name=%r: letters, digits, _ . - only (up to 64)" % (label, vip.get("name")))
            elif name in names:
                errors.append("%s.name=%s is also keepalived_vips[%d]'s" % (label, name, names[name]))
            names[name] = index
    return errors


def priority_errors(inputs, peers):
    """Priorities base, base - step, ... for the peers: each 1-254 and distinct (a tie holds a VIP twice)."""
    base_errors = int_errors("keepalived_priority_base", inputs.get("priority_base"), 1, 254)
    step_errors = int_errors("keepalived_priority_step", inputs.get("priority_step"), 0, 253)
    errors = base_errors + step_errors
    if step_errors:
        return errors
    step = int(inputs["priority_step"])
    if step == 0 and peers > 1:
        errors.append("keepalived_priority_step=0: %d peers would share one priority" % peers)
    if base_errors:
        return errors
    base = int(inputs["priority_base"])
    lowest = base - (max(peers, 1) - 1) * step
    if lowest < 1:
        errors.append("keepalived_priority_base=%d with keepalived_priority_step=%d gives the last of %d peers "
                      "priority %d: priorities run 1-254" % (base, step, peers, lowest))
    return errors


def check_errors(inputs):
    errors = []
    check = inputs.get("check", "process")
    if check not in ("process", "sql", "none"):
        return ["keepalived_check=%r: must be process, sql or none" % (check,)]
    errors += seconds_errors("keepalived_check_interval", inputs.get("check_interval"), 0.01, 3600)
    errors += int_errors("keepalived_check_timeout", inputs.get("check_timeout"), 1, 3600)
    errors += int_errors("keepalived_check_fall", inputs.get("check_fall"), 1, 1000)
    errors += int_errors("keepalived_check_rise", inputs.get("check_rise"), 1, 1000)
    if check == "process" and not re.match(r"^/[A-Za-z0-9_./-]+$", str(inputs.get("check_pidfile", ""))):
        errors.append("keepalived_check_pidfile=%r: must be an absolute path without spaces or shell "
                      "characters" % (inputs.get("check_pidfile"),))
    if check == "sql":
        errors += sql_check_errors(inputs)
    return errors


def sql_check_errors(inputs):
    errors = []
    for key in ("sql_check_host", "sql_check_user"):
        value = inputs.get(key)
        if not isinstance(value, str) or not value.strip() or re.search(r"[\s\"'\\#]", value):
            errors.append("keepalived_%s=%r: required, without spaces, quotes, backslashes or #"
                          % (key, value))
    errors += int_errors("keepalived_sql_check_port", inputs.get("sql_check_port"), 1, 65535)
    password = inputs.get("sql_check_password")
    if password is None or str(password) == "":
        errors.append("keepalived_sql_check_password is required with keepalived_check: sql")
    elif option_value_error(str(password)):
        errors.append("keepalived_sql_check_password: %s" % option_value_error(str(password)))
    query = inputs.get("sql_check_query")
    # the query is one argument of the mysql client inside the check's shell script, in double quotes
    if not isinstance(query, str) or not query.strip() or re.search(r"[\"\\$`\n\r]", query):
        errors.append("keepalived_sql_check_query=%r: required, without double quotes, backslashes, $, ` or "
                      "line breaks" % (query,))
    return errors


def role_errors(inputs):
    """Every refusal of the keepalived role's inputs: a dict of its variables without the keepalived_ prefix,
    plus `peers` (the number of hosts of keepalived_group) and `peer_addresses` ({host: (keepalived_address,
    its IPv4 fact)}, either empty when unset) when unicast. Only the keys present are checked."""
    errors = vip_errors(inputs.get("vips"))
    version = inputs.get("vrrp_version", 3)
    if version not in (2, 3, "2", "3"):
        errors.append("keepalived_vrrp_version=%r: must be 2 or 3" % (version,))
    elif int(version) == 3:
        errors += seconds_errors("keepalived_advert_int", inputs.get("advert_int"), 0.01, 40.95)
    else:
        errors += int_errors("keepalived_advert_int (VRRPv2: whole seconds)", inputs.get("advert_int"), 1, 255)
    errors += priority_errors(inputs, int(inputs.get("peers", 1)))
    errors += int_errors("keepalived_preempt_delay", inputs.get("preempt_delay", 0), 0, 1000)
    if not re.match(r"^[A-Za-z0-9_.:@-]{1,15}$", str(inputs.get("interface", ""))):
        errors.append("keepalived_interface=%r: must be a network interface name (up to 15 characters)"
                      % (inputs.get("interface"),))
    errors += check_errors(inputs)
    for index, script in enumerate(inputs.get("notify_scripts") or []):
        if not isinstance(script, str) or not script.startswith("/") or re.search(r"[\s;&|`$<>\"'\\]", script):
            errors.append("keepalived_notify_scripts[%d]=%r: must be an absolute path without spaces or shell "
                          "characters" % (index, script))
    if not re.match(r"^/[A-Za-z0-9_./-]+$", str(inputs.get("state_log", "/"))):
        errors.append("keepalived_state_log=%r: must be an absolute path without spaces or shell characters"
                      % (inputs.get("state_log"),))
    seen = {}
    for host, candidates in sorted((inputs.get("peer_addresses") or {}).items()):
        # (keepalived_address, the IPv4 fact): the first that is set, as keepalived.conf.j2 picks it
        candidates = candidates if isinstance(candidates, (list, tuple)) else [candidates]
        address = next((candidate for candidate in candidates if candidate not in (None, "")), None)
        if address is None:
            errors.append("keepalived_address of %s is not known: set it, or gather that host's facts" % host)
            continue
        try:
            ipaddress.IPv4Address(str(address))
        except ValueError:
            errors.append("keepalived_address of %s=%r: must be an IPv4 address (the unicast peers' source)"
                          % (host, address))
            continue
        if str(address) in seen:
            errors.append("keepalived_address of %s=%s is also %s's" % (host, address, seen[str(address)]))
        seen[str(address)] = host
    return errors
