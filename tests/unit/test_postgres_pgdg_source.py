"""The PGDG apt source and package names postgres_tuned renders (roles/postgres_tuned/vars/main.yml): the suite is
the host's codename + '-pgdg', the source is trusted only with the PGDG key (signed-by), and the packages name the
major. molecule postgres_tuned runs the same path in check mode on a fresh host (pgdg_check.yml)."""
import ast
import os

import jinja2
import pytest
import yaml

ROLE = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                    "roles", "postgres_tuned")


def load(kind):
    with open(os.path.join(ROLE, kind, "main.yml"), encoding="utf-8") as handle:
        return yaml.safe_load(handle)


def render(value, **facts):
    context = dict(load("defaults"), **load("vars"))
    context.update(facts)
    environment = jinja2.Environment(undefined=jinja2.StrictUndefined)
    environment.filters["bool"] = lambda value: str(value).lower() in ("true", "yes", "on", "1")   # Ansible's
    if isinstance(value, list):
        return [environment.from_string(item).render(context) for item in value]
    return environment.from_string(value).render(context)


@pytest.mark.parametrize("codename", ["bookworm", "trixie"])
def test_pgdg_source_is_signed_by_the_pgdg_key_with_the_codename_suite(codename):
    source = render(load("vars")["postgres_tuned_pgdg_source"], ansible_facts={"distribution_release": codename})
    assert source == ("deb [signed-by=/usr/share/keyrings/pgdg.asc] https://apt.postgresql.org/pub/repos/apt "
                      "%s-pgdg main" % codename)
    assert load("vars")["postgres_tuned_pgdg_key_file"] == "/usr/share/keyrings/pgdg.asc"
    assert os.path.basename(load("vars")["postgres_tuned_pgdg_source_file"]) == "pgdg.list"


@pytest.mark.parametrize("major", [13, 16, 18])
def test_packages_name_the_major(major):
    # a list built by one Jinja expression: Ansible turns its rendered text back into the list
    packages = ast.literal_eval(render(load("vars")["postgres_tuned_packages"], postgres_tuned_version=major,
                                       postgres_tuned_ha="manual", postgres_tuned_pgbouncer=False))
    assert packages == ["postgresql-%d" % major, "postgresql-client-%d" % major, "python3-psycopg2"]
    packages = ast.literal_eval(render(load("vars")["postgres_tuned_packages"], postgres_tuned_version=major,
                                       postgres_tuned_ha="patroni", postgres_tuned_pgbouncer=True))
    assert packages[3:] == ["patroni", "python3-etcd", "pgbouncer"]    # Patroni's etcd3 store needs python3-etcd
