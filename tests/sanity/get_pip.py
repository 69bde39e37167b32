"""Stand-in for ansible-test's get-pip bootstrap script, whose download host this machine cannot reach.

ansible-test creates each sanity test's virtualenv without pip and runs this file as get-pip.py with
`pip install` arguments. Like get-pip, it installs pip (here from the interpreter's own ensurepip) and then
runs `pip install` with those arguments against the package index. tests/run_all.sh puts it where
ansible-test looks for its cached copy.
"""
import ensurepip
import subprocess
import sys

# get-pip's own switches: drop them, since this bootstrap installs neither package unless asked.
OWN_SWITCHES = ("--no-setuptools", "--no-wheel")

ensurepip.bootstrap(upgrade=True)
sys.exit(subprocess.call([sys.executable, "-m", "pip", "install"]
                         + [arg for arg in sys.argv[1:] if arg not in OWN_SWITCHES]))
