# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):
    """What every health gate of the collection shares (module_utils/gate.py): its polling, its check mode, and the
    shape of its result (ok, unmet, checks, waited_seconds; documented in each module's RETURN)."""

    DOCUMENTATION = r"""
options:
  interval:
    description:
      - Seconds between two polls. A server that does not answer yet (restarting, electing, receiving a state
        transfer) is polled again until O(timeout); a server that answers and refuses the login or a privilege
        fails the gate at once, since waiting cannot change that.
    type: float
    default: 1
attributes:
  check_mode:
    support: full
    description:
      - Looks once, without waiting, and reports what it saw in RV(ok) and RV(unmet); never fails for an unhealthy
        cluster in check mode (a dry run must not stop a play that the real run would wait through). A refused
        login still fails.
  diff_mode:
    support: none
    description: A gate changes nothing.
"""
