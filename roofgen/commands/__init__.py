"""Verbs that live in modules of their own; each registers itself on ``roofgen.cli.cli``.

Add a module here and import it below. Modules import heavy libraries inside
their command functions only, so ``roofgen check`` stays light.
"""

import roofgen.commands.import_cmd  # noqa: F401  (roofgen import ncu|ert)
import roofgen.commands.machines  # noqa: F401  (roofgen machines)
