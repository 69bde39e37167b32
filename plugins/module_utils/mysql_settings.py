# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pure logic for applying MySQL settings: render the option file, read the previous one back, compare
values the way the server reports them, and decide what can change online and what needs a restart.
"""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

_NAME = re.compile(r"^(loose[-_])?[a-z][a-z0-9_-]*$")
_SIZE = re.compile(r"^(\d+(?:\.\d+)?)\s*([kmgt])b?$", re.IGNORECASE)
_UNITS = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
_TRUE = ("on", "true", "yes")
_FALSE = ("off", "false", "no")


def variable_name(option):
    """my.cnf option name -> server variable name: dashes to underscores, without the loose- prefix."""
    name = option.strip().lower().replace("-", "_")
    return name[len("loose_"):] if name.startswith("loose_") else name


def validate_name(option):
    if not _NAME.match(option.strip().lower()):
        raise ValueError("invalid option name %r" % option)
    return option


def normalize(value):
    """A value as comparable text: sizes in bytes, booleans as 1/0, case-insensitive, trailing / dropped."""
    text = str(value).strip().strip("'\"")
    lowered = text.lower()
    if lowered in _TRUE:
        return "1"
    if lowered in _FALSE:
        return "0"
    size = _SIZE.match(text)
    if size:
        return str(int(float(size.group(1)) * _UNITS[size.group(2).lower()]))
    if re.match(r"^-?\d+$", text):
        return str(int(text))
    if len(lowered) > 1:
        lowered = lowered.rstrip("/")
    return lowered


def sql_value(value):
    """A value for SET GLOBAL: an int when it is a number or a size, else the text (sent as a parameter)."""
    normalized = normalize(value)
    if re.match(r"^-?\d+$", normalized):
        return int(normalized)
    return str(value).strip().strip("'\"")


def render(settings, header, section="mysqld"):
    """The option file: a header, the section, and each setting preceded by its reason as a comment."""
    lines = ["# " + line if line else "#" for line in header.splitlines()]
    lines += ["", "[%s]" % section]
    for option in sorted(settings):
        setting = settings[option]
        reason = setting.get("reason") or ""
        for reason_line in reason.splitlines() or [""]:
            if reason_line:
                lines.append("# " + reason_line)
        value = setting.get("value")
        lines.append(option if value is None or value == "" else "%s = %s" % (option, value))
    return "\n".join(lines) + "\n"


def parse(text, section="mysqld"):
    """{option: value} of one section of an option file written by render() (or by hand)."""
    options, current = {}, None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("[") and line.endswith("]"):
            current = line[1:-1].strip()
            continue
        if current != section:
            continue
        key, sep, value = line.partition("=")
        options[key.strip()] = value.strip() if sep else ""
    return options


def plan(settings, previous, running):
    """Decide what to do for each setting.

    settings: {option: {"value", "dynamic", "online"}}; previous: {option: value} from the file we wrote last
    time, or None when there is none; running: {variable: value} from the server, or None when it is down.
    Returns (online, restart_reasons, drift, unchecked): online is [(option, variable, running, wanted)] to
    SET GLOBAL; restart_reasons are sentences naming each static setting that changed; drift names static
    settings the file already had whose running value differs (the server adjusted them at startup, or it
    has not restarted since the file changed): reported, never a restart loop.
    """
    online, reasons, drift, unchecked = [], [], [], []
    for option in sorted(settings):
        setting = settings[option]
        wanted = setting.get("value")
        variable = variable_name(option)
        checkable = setting.get("online", True) and running is not None and variable in running
        if setting.get("dynamic") and checkable:
            if normalize(running[variable]) != normalize(wanted):
                online.append((option, variable, running[variable], wanted))
            continue
        # Static, or not visible as a variable: judge by the file when we wrote one, else by the server.
        if previous is not None:
            if option not in previous:
                if checkable and normalize(running[variable]) == normalize(wanted):
                    continue
                reasons.append("%s: set to %s (was not configured)" % (option, wanted))
            elif normalize(previous[option]) != normalize(wanted):
                reasons.append("%s: %s -> %s" % (option, previous[option], wanted))
            elif checkable and normalize(running[variable]) != normalize(wanted):
                drift.append("%s: file says %s, server runs %s" % (option, wanted, running[variable]))
        elif checkable:
            if normalize(running[variable]) != normalize(wanted):
                reasons.append("%s: running %s, wanted %s" % (option, running[variable], wanted))
        else:
            unchecked.append(option)
    for option in sorted(previous or {}):
        if option not in settings and not settings_has_variable(settings, option):
            reasons.append("%s: removed (was %s)" % (option, previous[option]))
    if unchecked and running is None and previous is None:
        reasons.append("server not running: start it with the new configuration")
    elif unchecked and previous is None:
        reasons.append("first configuration by this role sets %s, which the server cannot report: restart to "
                       "apply" % ", ".join(unchecked))
    return online, reasons, drift, unchecked


def settings_has_variable(settings, option):
    return any(variable_name(o) == variable_name(option) for o in settings)
