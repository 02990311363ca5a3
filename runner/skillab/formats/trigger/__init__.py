"""A skill whose only suite is a set of trigger queries. The queries of every format are read by
``suite.trigger`` (trigger evaluation runs beside any suite); this package loads a suite that
is only a trigger set, and a sibling skill's queries in crowd mode."""

from ..base import SuiteFormat, lazy

FORMAT = SuiteFormat(
    name="trigger-evals",
    filenames=("trigger-evals.json", "trigger_evals.json", "evals/trigger-evals.json", "evals/trigger_evals.json"),
    parse=lazy("skillab.formats.trigger.parser:load_trigger_suite"),
)
