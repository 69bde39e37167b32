"""The keepalived role's keepalived.conf template, rendered by Ansible's templar with the role's defaults:
rotated priorities (no proxy first for two VIPs), unicast peers, preempt/nopreempt, trackers without weight."""
import os
import re

import yaml
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template

ROLE = os.path.join(os.path.dirname(__file__), "..", "..", "roles", "keepalived")
PROXIES = ["p1", "p2", "p3"]


def render(host, **overrides):
    with open(os.path.join(ROLE, "defaults", "main.yml"), encoding="utf-8") as handle:
        variables = yaml.safe_load(handle)
    with open(os.path.join(ROLE, "templates", "keepalived.conf.j2"), encoding="utf-8") as handle:
        source = handle.read()
    variables.update(groups={"proxysql": PROXIES}, inventory_hostname=host, ansible_managed="managed",
                     keepalived_interface="eth0",
                     keepalived_vips=[{"address": "10.0.0.%d/24" % (100 + i), "router_id": 51 + i} for i in range(3)],
                     hostvars=dict((p, {"ansible_facts": {"default_ipv4": {"address": "10.0.0.%d" % (i + 1)}}})
                                   for i, p in enumerate(PROXIES)))
    variables.update(overrides)
    return Templar(loader=DataLoader(), variables=variables).template(trust_as_template(source))


def priorities(text):
    """{router_id: priority} of each vrrp_instance."""
    found = re.findall(r"virtual_router_id (\d+)\s+version \d\s+priority (\d+)", text)
    return dict((int(router), int(priority)) for router, priority in found)


def test_rotated_priorities_give_each_vip_a_different_preferred_proxy():
    table = dict((host, priorities(render(host))) for host in PROXIES)
    preferred = dict((router, max(PROXIES, key=lambda host: table[host][router])) for router in (51, 52, 53))
    assert preferred == {51: "p1", 52: "p2", 53: "p3"}
    for router in (51, 52, 53):   # distinct priorities per VIP: no tie, so no VIP is held twice
        assert len({table[host][router] for host in PROXIES}) == 3


def test_unicast_peers_are_the_others_and_the_source_is_this_host():
    text = render("p2")
    assert "unicast_src_ip 10.0.0.2" in text
    peers = re.search(r"unicast_peer \{([^}]*)\}", text).group(1).split()
    assert peers == ["10.0.0.1", "10.0.0.3"]


def test_preempt_and_nopreempt():
    directive = re.compile(r"^\s*nopreempt$", re.M)
    assert not directive.search(render("p1"))
    assert len(directive.findall(render("p1", keepalived_preempt=False))) == 3
    assert "preempt_delay 5" in render("p1", keepalived_preempt_delay=5)


def test_trackers_fault_the_instance_instead_of_weighting_it():
    text = render("p1")
    script = re.search(r"vrrp_script dbops_check \{([^}]*)\}", text).group(1)
    assert "interval 0.2" in script and not re.search(r"^\s*weight", script, re.M)
    assert "vrrp_track_process" not in text
    assert "vrrp_track_process dbops_process" in render("p1", keepalived_track_process=True)
    assert "version 3" in text and "advert_int 0.2" in text


def test_transitions_reach_the_state_log_through_one_ordered_reader():
    # keepalived writes every transition to the FIFO in order; a hook forked per transition could log out of order
    text = render("p1")
    assert "vrrp_notify_fifo /run/dbops-keepalived-notify.fifo" in text
    assert "vrrp_notify_fifo_script /etc/keepalived/dbops/notify-fifo" in text
    assert "notify \"/etc/keepalived/dbops/notify\"" not in text
    hooked = render("p1", keepalived_notify_scripts=["/usr/local/bin/page-me"])
    assert hooked.count("notify \"/etc/keepalived/dbops/notify\"") == 3
