# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):
    """How the collection's Patroni modules reach Patroni's REST API (module_utils/patroni_api.py)."""

    DOCUMENTATION = r"""
options:
  api_urls:
    description:
      - REST API base URLs of the cluster's members, for example C(https://pg1:8008). Reads take the first that
        answers; an action on one member goes to the URL Patroni publishes for it.
    type: list
    elements: str
    required: true
  ca_file:
    description:
      - CA certificate that signed the members' REST API certificates. With it the server's certificate and its
        name are verified; without it only plain C(http://) URLs work.
    type: path
  username:
    description: User of the REST API's basic authentication (Patroni's C(restapi.authentication)), sent on writes.
    type: str
  password:
    description: Password of O(username).
    type: str
  request_timeout:
    description: Seconds one request may take.
    type: float
    default: 5.0
"""
