# -*- coding: utf-8 -*-
# Lab tooling (outside the built collection: galaxy.yml excludes lab/).
"""Import the lab's connection plugin once, in the controller, before the first worker forks.

Ansible runs each task on each host in a worker forked from the controller, and the worker loads the host's
connection plugin even for a task that never connects (an assert, a set_fact). The controller never imports
community.docker.docker_api itself, so without this every worker imported it again: about 45 ms of CPU per
task per host, measured (100 asserts on 3 hosts: 16.6 s, 3.6 s with this callback). Forked workers inherit
the controller's imported modules, so one import here serves them all.
"""
from __future__ import annotations

DOCUMENTATION = r"""
name: dbops_preload_connection
type: aggregate
short_description: import the docker_api connection plugin once in the controller
description:
  - Loads community.docker.docker_api before the first task, so forked workers inherit it instead of each
    importing it again.
requirements:
  - enabled in callbacks_enabled
"""

from ansible.plugins.callback import CallbackBase
from ansible.plugins.loader import connection_loader

PRELOADED_CONNECTIONS = ("community.docker.docker_api",)


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "dbops_preload_connection"
    CALLBACK_NEEDS_ENABLED = True

    def v2_playbook_on_start(self, playbook):
        for name in PRELOADED_CONNECTIONS:
            # class_only: import the module and return its class, without opening a connection. A missing
            # plugin is not an error here: the task that needs it reports that better.
            connection_loader.get(name, class_only=True)
