"""Every verb of the ``roofgen`` command line, one module each (or two related verbs).

A verb parses its options, calls one library function, and turns the result into
output and an exit status; what verbs share (exit statuses, messages, settings,
running the check, writing output) is :mod:`roofgen.commands.common`. To add a
verb: write its module here and add its command to :data:`VERBS`. Modules import
heavy libraries inside their command functions only, so ``roofgen check`` stays
light.
"""

from roofgen.commands.chart import chart_cmd
from roofgen.commands.check import analyze_cmd, check_cmd
from roofgen.commands.diff_cmd import diff_cmd
from roofgen.commands.explain import explain_cmd
from roofgen.commands.fit import fit_cmd
from roofgen.commands.history import history_cmd
from roofgen.commands.import_cmd import import_cmd
from roofgen.commands.init_cmd import init_cmd
from roofgen.commands.machines import machines_cmd
from roofgen.commands.migrate import migrate_cmd
from roofgen.commands.new import new_cmd
from roofgen.commands.schema import config_cmd, schema_cmd
from roofgen.commands.site import build_cmd, serve_cmd

VERBS = (
    check_cmd,
    analyze_cmd,
    schema_cmd,
    config_cmd,
    build_cmd,
    serve_cmd,
    chart_cmd,
    diff_cmd,
    explain_cmd,
    fit_cmd,
    import_cmd,
    init_cmd,
    machines_cmd,
    migrate_cmd,
    new_cmd,
    history_cmd,
)
