# SPDX-License-Identifier: GPL-2.0
"""The report scripts of this folder as modules, for one another.

Their file names have dashes (tb-report.py), which ``import`` cannot
name; ``load("tb-report.py")`` loads one from this folder, once per
process (tb-lines.py loads tb-report.py, and tb-calls.py, which loads it
too). A script run from anywhere finds this module: Python puts the
script's own folder first on ``sys.path``.
"""

import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def load(file):
    """The script FILE of this folder, loaded as a module."""
    name = os.path.splitext(file)[0].replace("-", "_")
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, os.path.join(HERE, file))
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod
