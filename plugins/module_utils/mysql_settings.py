# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pure logic for applying MySQL settings: render the option file, read the previous one back, compare
values the way the server reports them, and decide what can change online and what needs a restart.
"""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import difflib
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

    settings: {option: {"value", "dynamic", "online", "restarts"}}; previous: {option: value} from the file we wrote last
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
        # A setting marked restarts: false (read only at startup, for something a running server no longer
        # needs) changes the file and never calls for a restart by itself.
        changes = reasons if setting.get("restarts", True) else []
        if previous is not None:
            if option not in previous:
                if checkable and normalize(running[variable]) == normalize(wanted):
                    continue
                changes.append("%s: set to %s (was not configured)" % (option, wanted))
            elif normalize(previous[option]) != normalize(wanted):
                changes.append("%s: %s -> %s" % (option, previous[option], wanted))
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


# Options whose names the server binary lists: `mysqld --verbose --help` (MySQL, Percona Server) and
# `mariadbd --verbose --help` (MariaDB) both print every option with a long name, then a table of
# "Variables (--variable-name=value)". Both parts are read; either alone is enough.
_HELP_OPTION = re.compile(r"^\s{1,4}(?:-[A-Za-z?#], )?--([a-z0-9][a-z0-9_-]*)")
_HELP_TABLE_START = re.compile(r"^-{5,}\s+-{3,}\s*$")
_BOOLEAN_PREFIXES = ("skip_", "disable_", "enable_")


def parse_help_options(text):
    """The set of option names (underscored) a server binary's `--verbose --help` output lists."""
    names, in_table = set(), False
    for line in text.splitlines():
        if _HELP_TABLE_START.match(line):
            in_table = True
            continue
        if in_table:
            if not line.strip():
                in_table = False
                continue
            names.add(line.split()[0].replace("-", "_").lower())
            continue
        match = _HELP_OPTION.match(line)
        if match:
            names.add(match.group(1).replace("-", "_").lower())
    return names


_HELP_VERSION = re.compile(r"\bVer\s+(\d+\.\d+\.\d+)")


def parse_help_version(text):
    """The server version a binary's `--verbose --help` names on its first lines ('Ver 9.7.4 for Linux ...',
    'Ver 11.8.3-MariaDB-1 from Debian ...'), or None."""
    for line in text.splitlines()[:5]:
        match = _HELP_VERSION.search(line)
        if match:
            return match.group(1)
    return None


def parse_help_flavor(text):
    """Which server a binary's `--verbose --help` says it is: percona (Percona Server or Percona XtraDB Cluster in
    its version line), mariadb, or mysql (Oracle's, Debian's build included)."""
    head = "\n".join(text.splitlines()[:5])
    if "Percona" in head:
        return "percona"
    if "MariaDB" in head:
        return "mariadb"
    return "mysql"


def unknown_options(options, known):
    """Option names (as written) the server would refuse at startup: not listed by the binary, not loose-.

    `skip-`, `disable-` and `enable-` before a listed option are accepted (the server's boolean prefixes).
    Abbreviations of option names are refused: MySQL deprecates them, and a typo is more likely.
    """
    unknown = []
    for option in options:
        lowered = option.strip().lower().replace("-", "_")
        if lowered.startswith("loose_"):
            continue
        if lowered in known:
            continue
        if any(lowered.startswith(p) and lowered[len(p):] in known for p in _BOOLEAN_PREFIXES):
            continue
        unknown.append(option)
    return sorted(unknown)


def closest(name, known):
    """A listed option name that looks like `name` (for "did you mean"), or None."""
    matches = difflib.get_close_matches(name.strip().lower().replace("-", "_"), sorted(known), n=1, cutoff=0.8)
    return matches[0] if matches else None


# The table of `--verbose --help` also shows each option's value "after reading options": given the candidate
# settings (in a --defaults-file), the binary shows what it would run with, or refuses a value it cannot parse
# ("Error while setting value 'READ-COMITTED' to 'transaction-isolation'") and exits non-zero.
_HELP_ERROR = re.compile(r"\[ERROR\]\s*(?:\[[^\]]*\]\s*)*(.*)$")
# Never given to the check: loading plugins is not a check, and none of these has a value to parse.
_NOT_VALUE_CHECKED = ("plugin_load", "plugin_load_add", "early_plugin_load")


def value_checked(option, known):
    """Whether `option`'s value is given to the binary's check: a listed option, not loose_, not a plugin load."""
    name = option.strip().lower().replace("-", "_")
    return not name.startswith("loose_") and name in known and name not in _NOT_VALUE_CHECKED


def parse_help_values(text):
    """{option (underscored): value text} from the variable table of a server binary's `--verbose --help`."""
    values, in_table = {}, False
    for line in text.splitlines():
        if _HELP_TABLE_START.match(line):
            in_table = True
            continue
        if in_table:
            if not line.strip():
                in_table = False
                continue
            name, dummy, value = line.strip().partition(" ")
            values.setdefault(name.replace("-", "_").lower(), value.strip())
    return values


def value_refusals(settings, returncode, errors, shown, override_variable="overrides"):
    """Sentences refusing values the server binary would not run with, from its check of the candidate settings.

    settings: {option: setting} given to the check; returncode, errors: the check's exit code and standard error;
    shown: parse_help_values() of its output. A non-zero exit refuses with the binary's own error lines, naming
    the settings they mention. A setting from the user (source: override) whose number the binary shows
    otherwise was moved into the range the server accepts: refused too, as the server would run another value.
    Derived settings may be rounded to the server's block size, so only overrides are compared.
    """
    def label(option):
        setting = settings[option]
        where = "%s.%s" % (override_variable, option) if setting.get("source") == "override" else option
        return "%s=%s" % (where, setting.get("value"))

    refusals = []
    if returncode != 0:
        lines = [match.group(1).strip() for match in (_HELP_ERROR.search(line) for line in errors.splitlines())
                 if match and match.group(1).strip() and match.group(1).strip() != "Aborting"]
        named = [option for option in sorted(settings)
                 if any(variable_name(option) in line.replace("-", "_") for line in lines)]
        refusals.append("%s: the server refuses %s: %s" % (
            ", ".join(label(option) for option in named) or "settings", "it" if len(named) == 1 else "them",
            "; ".join(lines) or "exit code %s" % returncode))
        return refusals
    for option in sorted(settings):
        setting = settings[option]
        value = shown.get(variable_name(option))
        if setting.get("source") != "override" or value is None:
            continue
        wanted, runs = normalize(setting.get("value")), normalize(value)
        if re.match(r"^-?\d+$", wanted) and re.match(r"^-?\d+$", runs) and wanted != runs:
            refusals.append("%s: outside the range the server accepts; it would run %s" % (label(option), value))
    return refusals
