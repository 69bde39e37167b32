# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PostgreSQL settings checked against the running server's own catalogue (pg_settings), before they are written.

Why pg_settings rather than `postgres -C`: the catalogue row of each parameter carries PostgreSQL's own type,
unit, bounds and enum values for the exact version and build that runs (lz4 exists only if it was compiled in),
it is read through psycopg2 like every other fact the modules use, and it needs no second postmaster process
started as the postgres user against the live data directory. Pure functions: the module passes the rows.
"""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

KIB = 1024
_SIZE_UNITS = {"B": 1, "kB": KIB, "MB": KIB ** 2, "GB": KIB ** 3, "TB": KIB ** 4}
_TIME_UNITS_MS = {"us": 0.001, "ms": 1.0, "s": 1000.0, "min": 60000.0, "h": 3600000.0, "d": 86400000.0}
_NUMBER_RE = re.compile(r"^\s*(-?\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*$")
_BOOL_TRUE = ("on", "true", "yes", "1", "t", "y")
_BOOL_FALSE = ("off", "false", "no", "0", "f", "n")
CATALOGUE_COLUMNS = ("name", "setting", "unit", "vartype", "min_val", "max_val", "enumvals", "context",
                     "pending_restart")


class SettingError(ValueError):
    """A value the server would reject; `variable` names the setting."""

    def __init__(self, variable, message):
        self.variable = variable
        super(SettingError, self).__init__(message)


def _unit_scale(unit):
    """pg_settings unit ('8kB', 'kB', 'MB', 'ms', 's', 'min') -> (kind, base amount in bytes or ms)."""
    if not unit:
        return None, 1
    match = re.match(r"^(\d*)(B|kB|MB|GB|TB|us|ms|s|min|h|d)$", unit)
    if not match:
        return None, 1
    factor = int(match.group(1) or 1)
    if match.group(2) in _SIZE_UNITS:
        return "size", factor * _SIZE_UNITS[match.group(2)]
    return "time", factor * _TIME_UNITS_MS[match.group(2)]


def to_number(name, value, row):
    """A value of an integer or real setting in the setting's own unit (as pg_settings.setting reports it)."""
    text = str(value).strip().strip("'")
    match = _NUMBER_RE.match(text)
    if not match:
        raise SettingError(name, "%s=%r is not a number%s" % (name, value, " with a unit" if row.get("unit") else ""))
    number, suffix = float(match.group(1)), match.group(2)
    kind, base = _unit_scale(row.get("unit"))
    if suffix:
        if kind == "size" and suffix in _SIZE_UNITS:
            number = number * _SIZE_UNITS[suffix] / base
        elif kind == "time" and suffix in _TIME_UNITS_MS:
            number = number * _TIME_UNITS_MS[suffix] / base
        else:
            raise SettingError(name, "%s=%r: unit %r is not valid for this setting (unit %s)"
                               % (name, value, suffix, row.get("unit") or "none"))
    if row["vartype"] == "integer":
        if suffix:
            number = round(number)      # PostgreSQL rounds a value given in another unit
        elif not float(number).is_integer():
            raise SettingError(name, "%s=%r is not an integer" % (name, value))
        return int(number)
    return number


def normalize(name, value, row):
    """A comparable form of value for the setting described by row (a pg_settings row as a dict)."""
    vartype = row["vartype"]
    text = str(value).strip().strip("'")
    if vartype == "bool":
        lowered = text.lower()
        if lowered in _BOOL_TRUE:
            return "on"
        if lowered in _BOOL_FALSE:
            return "off"
        raise SettingError(name, "%s=%r is not a boolean (on or off)" % (name, value))
    if vartype in ("integer", "real"):
        return to_number(name, value, row)
    if vartype == "enum":
        return text.lower()
    return text


def check(name, value, row):
    """Refuse a value this server would reject for the setting; returns its normalized form."""
    if row is None:
        if "." in name:     # a custom (extension) setting: PostgreSQL accepts any value for it
            return str(value)
        raise SettingError(name, "%s is not a setting of this server (not in pg_settings)" % name)
    normalized = normalize(name, value, row)
    vartype = row["vartype"]
    if vartype in ("integer", "real"):
        low = float(row["min_val"]) if row.get("min_val") not in (None, "") else None
        high = float(row["max_val"]) if row.get("max_val") not in (None, "") else None
        if (low is not None and normalized < low) or (high is not None and normalized > high):
            raise SettingError(name, "%s=%s is outside this server's range %s to %s %s"
                               % (name, value, row["min_val"], row["max_val"], row.get("unit") or ""))
    if vartype == "enum":
        allowed = [str(v).lower() for v in (row.get("enumvals") or [])]
        if normalized not in allowed:
            raise SettingError(name, "%s=%r is not one of this server's values: %s"
                               % (name, value, ", ".join(allowed)))
    return normalized


def plan(settings, catalogue):
    """For settings {name: value} and catalogue {name: row}: (errors, online, restart) predicted for a change.

    online: settings whose running value differs and that a reload applies; restart: those that differ and need
    a restart (context postmaster). errors: {name: message} for values the server would reject.
    """
    errors, online, restart = {}, [], []
    for name in sorted(settings):
        row = catalogue.get(name)
        try:
            wanted = check(name, settings[name], row)
        except SettingError as err:
            errors[name] = str(err)
            continue
        if row is None:
            online.append(name)
            continue
        if normalize(name, row["setting"], row) != wanted:
            (restart if row["context"] == "postmaster" else online).append(name)
    return errors, online, restart


def quote_value(value):
    """A value as postgresql.conf takes it: numbers and simple words bare, anything else single-quoted.

    Inside quotes the server's parser reads a backslash as an escape (a trailing one would swallow the closing
    quote) and stops at a line end, so backslashes are doubled and line ends written as \\n."""
    text = str(value)
    if re.match(r"^-?[0-9.]+[A-Za-z]*$", text) or re.match(r"^[A-Za-z_][A-Za-z0-9_.]*$", text):
        return text
    escaped = text.replace("\\", "\\\\").replace("'", "''").replace("\r", "\\r").replace("\n", "\\n")
    return "'%s'" % escaped


def render(settings, header=""):
    """{name: {value, reason} or value} -> conf.d text, each setting preceded by '# reason', sorted by name."""
    lines = ["# " + line if line else "#" for line in header.splitlines()]
    for name in sorted(settings):
        setting = settings[name]
        if isinstance(setting, dict):
            value, reason = setting["value"], setting.get("reason")
        else:
            value, reason = setting, None
        if reason:
            lines.append("# " + str(reason).replace("\n", " "))
        lines.append("%s = %s" % (name, quote_value(value)))
    return "\n".join(lines) + "\n"


_LIBRARY_SETTINGS = ("shared_preload_libraries", "session_preload_libraries", "local_preload_libraries")


def library_errors(values, library_dir, exists):
    """{setting: problem} for preload libraries the server would not find: it loads shared_preload_libraries at
    start and refuses to start without one, so a misspelt name would stop every member the file reaches.

    values: {name: value}; library_dir: the server's $libdir; exists: a callable telling whether a path exists."""
    errors = {}
    for name in _LIBRARY_SETTINGS:
        if name not in values:
            continue
        missing = []
        for entry in (part.strip().strip('"') for part in str(values[name]).split(",")):
            if not entry:
                continue
            path = entry.replace("$libdir", library_dir) if entry.startswith("$libdir") else (
                entry if "/" in entry else "%s/%s" % (library_dir, entry))
            if not (exists(path) or exists(path + ".so")):
                missing.append(entry)
        if missing:
            errors[name] = ("%s names %s, not found in %s: the server would not start; install the extension's "
                            "package first" % (name, ", ".join(missing), library_dir))
    return errors
