"""Verbs that live in modules of their own; each registers itself on ``roofgen.cli.cli``.

Add a module here and import it below. Modules import heavy libraries inside
their command functions only, so ``roofgen check`` stays light.
"""

import roofgen.commands.diff_cmd  # noqa: F401  (roofgen diff)
import roofgen.commands.explain  # noqa: F401  (roofgen explain)
import roofgen.commands.import_cmd  # noqa: F401  (roofgen import ncu|ert)
import roofgen.commands.init_cmd  # noqa: F401  (roofgen init)
import roofgen.commands.machines  # noqa: F401  (roofgen machines)
import roofgen.commands.migrate  # noqa: F401  (roofgen migrate)
import roofgen.commands.new  # noqa: F401  (roofgen new case)
