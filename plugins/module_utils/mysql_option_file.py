# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""MySQL option files (my.cnf syntax) as the client library reads them: one place for writing a value and for
reading a [client] group back, shared by the login files the roles write and the modules that read them."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "s": " ", '"': '"', "'": "'", "\\": "\\"}


def option_value_error(text):
    """Why `text` cannot be a value in a MySQL option file, or None."""
    if re.search(r"[\x00-\x1f\x7f]", text):
        return "control characters (line breaks, tabs) cannot be written in an option file"
    return None


def option_value(text):
    """`text` as the value of a MySQL option file line, read back exactly by the client library.

    The client (mysys my_default.c, MySQL and MariaDB alike) ends a value at a '#' outside quotes, strips
    surrounding spaces, drops one pair of surrounding quotes, and inside the value turns \\\\ \\" \\' \\s \\n \\t
    \\r \\b into their characters. So the value is written in double quotes with every backslash and double
    quote escaped: '#', ';', single quotes and spaces inside the quotes are then literal.
    """
    problem = option_value_error(text)
    if problem:
        raise ValueError(problem)
    return '"%s"' % text.replace("\\", "\\\\").replace('"', '\\"')


def _value(raw):
    """One line's value as the client reads it (remove_end_comment, then quotes, then escapes)."""
    quote, escape, end = None, False, len(raw)
    for index, char in enumerate(raw):
        if char in "'\"" and not escape:
            quote = None if quote == char else (quote or char)
        if quote is None and char == "#":
            end = index
            break
        escape = bool(quote) and char == "\\" and not escape
    value = raw[:end].strip()
    if len(value) >= 2 and value[0] in "'\"" and value[-1] == value[0]:
        value = value[1:-1]
    unescaped, index = [], 0
    while index < len(value):
        if value[index] == "\\" and index != len(value) - 1:
            index += 1
            unescaped.append(_ESCAPES.get(value[index], "\\" + value[index]))
        else:
            unescaped.append(value[index])
        index += 1
    return "".join(unescaped)


def parse_groups(text, groups=("client",)):
    """{option: value} of the named groups of an option file's text (the first value of an option wins, names
    with '-' read as '_'), as the client library reads them."""
    options, group = {}, None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("[") and "]" in line:
            group = line[1:line.index("]")].strip()
            continue
        if group not in groups or "=" not in line:
            continue
        name, dummy, value = line.partition("=")
        options.setdefault(name.strip().replace("-", "_"), _value(value))
    return options
