"""Every module's and filter's DOCUMENTATION, EXAMPLES and RETURN parse as YAML (a plain scalar holding ': '
breaks them, and only ansible-test sanity, minutes later, would say so)."""
import ast
import glob
import os

import pytest
import yaml

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
PLUGINS = sorted(glob.glob(os.path.join(ROOT, "plugins", "modules", "*.py"))
                 + glob.glob(os.path.join(ROOT, "plugins", "filter", "*.py")))


@pytest.mark.parametrize("path", PLUGINS, ids=os.path.basename)
def test_documentation_blocks_parse_as_yaml(path):
    with open(path, encoding="utf-8") as handle:
        tree = ast.parse(handle.read())
    blocks = dict((node.targets[0].id, node.value.value) for node in tree.body
                  if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)
                  and node.targets[0].id in ("DOCUMENTATION", "EXAMPLES", "RETURN")
                  and isinstance(node.value, ast.Constant))
    for name, text in blocks.items():
        try:
            yaml.safe_load(text)
        except yaml.YAMLError as err:
            pytest.fail("%s %s: %s" % (os.path.basename(path), name, err))
