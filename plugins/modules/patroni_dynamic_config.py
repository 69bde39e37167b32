#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: patroni_dynamic_config
short_description: Bring Patroni's dynamic configuration (kept in its DCS) to the settings given
version_added: 0.1.0
description:
  - Reads the dynamic configuration (C(GET /config)), compares only the keys given in O(settings) (nested
    dictionaries key by key, C(true) and C(on) alike) and sends the difference with C(PATCH /config). Keys it is
    not given stay as they are; a key given as null is removed.
  - The dynamic configuration is the cluster's own (C(ttl), C(loop_wait), C(synchronous_mode), and the PostgreSQL
    parameters every member must share, such as C(max_connections)); Patroni applies it on every member and marks
    the members that need a restart with C(pending_restart).
options:
  settings:
    description: The wanted dynamic configuration, in Patroni's layout.
    type: dict
    required: true
extends_documentation_fragment:
  - dbops.clusters.patroni_api
attributes:
  check_mode:
    support: full
    description: Reads the configuration and reports the keys it would change, without sending them.
  diff_mode:
    support: full
    description: The changed keys, before and after.
author:
  - dbops.clusters maintainers (@dbops)
"""

EXAMPLES = r"""
- name: Quorum commit with one replica, and the shared max_connections
  dbops.clusters.patroni_dynamic_config:
    api_urls: [https://pg1:8008, https://pg2:8008]
    ca_file: /etc/postgresql/17/main/ca.crt
    username: patroni
    password: "{{ patroni_rest_password }}"
    settings:
      synchronous_mode: quorum
      synchronous_node_count: 1
      postgresql:
        parameters:
          max_connections: 200
"""

RETURN = r"""
changed_keys:
  description: Dotted names of the keys changed (or that would be, in check mode).
  returned: always
  type: list
  elements: str
patch:
  description: The body sent with PATCH /config (empty when nothing differed).
  returned: always
  type: dict
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.dbops.clusters.plugins.module_utils.patroni_api import (
    API_SPEC,
    PatroniApi,
    PatroniError,
    config_patch,
)


def pick(config, patch):
    """The values config holds at the keys of patch (for the diff's before)."""
    out = {}
    for key, value in patch.items():
        have = config.get(key) if isinstance(config, dict) else None
        out[key] = pick(have or {}, value) if isinstance(value, dict) else have
    return out


def main():
    spec = dict(settings=dict(type='dict', required=True))
    spec.update(API_SPEC)
    module = AnsibleModule(argument_spec=spec, supports_check_mode=True)
    params = module.params
    api = PatroniApi(params['api_urls'], params['ca_file'], params['username'], params['password'],
                     params['request_timeout'])
    try:
        current = api.dynamic_config()
    except PatroniError as e:
        module.fail_json(msg='no Patroni REST API answered: %s' % e)
    patch, changed_keys = config_patch(current, params['settings'])
    result = dict(changed=bool(patch), changed_keys=changed_keys, patch=patch)
    if module._diff and patch:
        result['diff'] = dict(before=pick(current, patch), after=patch)
    if patch and not module.check_mode:
        errors = []
        for base in api.api_urls:
            try:
                status, answer = api.call(base + '/config', method='PATCH', body=patch)
            except PatroniError as e:
                errors.append(str(e))
                continue
            if status == 200:
                break
            module.fail_json(msg='PATCH %s/config refused: HTTP %s %s' % (base, status, answer), **result)
        else:
            module.fail_json(msg='no Patroni REST API took the change: %s' % '; '.join(errors), **result)
    module.exit_json(**result)


if __name__ == '__main__':
    main()
