# dbops.clusters: the two commands are `make lab` and `make test`. Everything they need is installed by
# `make deps` (run by both): apt packages and podman's host settings, the pinned .venv, the collection link.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

VENV      := .venv
PYTHON    := /usr/bin/python3
export PATH           := $(CURDIR)/$(VENV)/bin:$(PATH)
export DOCKER_HOST    := unix:///run/podman/podman.sock
export ANSIBLE_CONFIG := $(CURDIR)/ansible.cfg
# molecule and ansible-lint install a copy of this collection under ANSIBLE_HOME: keep it in the work tree,
# so a stale copy from another checkout can never shadow the code under test.
export ANSIBLE_HOME   := $(CURDIR)/.ansible
COLLECTION_LINK := .collections/ansible_collections/dbops/clusters
# molecule (ansible-compat) copies the collection into ANSIBLE_HOME unless a link to this tree is already
# there; a copy goes stale and shadows new modules, so put the link there too.
ANSIBLE_HOME_LINK := .ansible/collections/ansible_collections/dbops/clusters

.PHONY: help deps host venv lab lab-down lab-status test scenario unit lint lock changelog clean bench-mysql bench-postgres

help:
	@echo "make lab        build the lab image if needed, start the lab hosts, configure them, print how to reach them"
	@echo "make test       lint, build, sanity, unit and every molecule scenario (summary at the end)"
	@echo "make scenario S=NAME  one molecule scenario, start to destroy (molecule test -s NAME)"
	@echo "make lab-down   remove the lab's containers, volumes and network"
	@echo "make lab-status show the lab hosts;  lab/lab shell HOST opens a shell in one"
	@echo "make deps       install what the two commands need (apt packages, podman settings, .venv)"
	@echo "make changelog  CHANGELOG.md from changelogs/ (antsibull-changelog; add a fragment to changelogs/fragments/)"
	@echo "make bench-mysql  sysbench: stock vs innodb_dedicated_server vs percona_server on a 2 GiB lab host; reference machines"
	@echo "make bench-postgres  pgbench TPC-B and TPC-C-like: stock vs pgtune vs postgres_tuned on a 2 GiB lab host"

deps: host venv $(COLLECTION_LINK) $(ANSIBLE_HOME_LINK)

host:
	@bash lab/host-setup.sh

venv: $(VENV)/.installed

$(VENV)/.installed: requirements.txt
	@echo "==> python tools: $(VENV) from requirements.txt"
	@test -x $(PYTHON) || { echo "ERROR: $(PYTHON) not found; run 'make host' (installs python3-venv)" >&2; exit 1; }
	@test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV)
	@$(VENV)/bin/pip install --quiet --upgrade pip
	@$(VENV)/bin/pip install --progress-bar off -r requirements.txt > $(VENV)/pip.log 2>&1 \
	  || { tail -20 $(VENV)/pip.log; echo "ERROR: pip install failed (log: $(VENV)/pip.log): check access to PyPI" >&2; exit 1; }
	@grep -E '^Successfully installed' $(VENV)/pip.log | fold -s -w 110 | sed 's/^/    /' || echo "    all pinned packages present"
	@touch $@

$(COLLECTION_LINK):
	@mkdir -p $(dir $@)
	@ln -sfn ../../.. $@

.PHONY: $(ANSIBLE_HOME_LINK)
$(ANSIBLE_HOME_LINK):
	@mkdir -p $(dir $@)
	@if [ -d $@ ] && [ ! -L $@ ]; then rm -rf $@; fi
	@ln -sfn ../../../.. $@

lab: deps
	@lab/lab --profile '$(LAB_PROFILE)' up
	@lab/lab configure
	@lab/lab status
	@echo
	@lab/lab guide
	@echo "Remove it: make lab-down"

bench-mysql: deps
	@bash bench/mysql_tuning/run.sh

bench-postgres: deps
	@bash bench/postgres_tuning/run.sh

lab-down: venv
	@lab/lab down

lab-status: venv
	@lab/lab status

test: deps
	@bash tests/run_all.sh

scenario: deps
	@test -n "$(S)" || { echo "usage: make scenario S=<molecule scenario>" >&2; exit 2; }
	@molecule test -s $(S)

unit: venv $(COLLECTION_LINK)
	@pytest -q

lint: venv $(COLLECTION_LINK) $(ANSIBLE_HOME_LINK)
	@yamllint -s . && ansible-lint

lock: venv
	@$(VENV)/bin/pip install --quiet -r requirements.in
	@{ echo '# Fully pinned from requirements.in by `make lock`; .venv installs exactly this.'; \
	   $(VENV)/bin/pip freeze --all | grep -vE '^(pip|setuptools|wheel)=='; } > requirements.txt
	@echo "requirements.txt pinned from requirements.in"

# CHANGELOG.md is generated: antsibull-changelog renders changelogs/ (galaxy.yml's version from the pending
# fragments while it is unreleased; changelogs/generate.py says how). A unit test fails when it is stale.
changelog: venv
	@$(VENV)/bin/python changelogs/generate.py

clean:
	rm -rf .build .collections .ansible
