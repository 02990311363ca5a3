"""Tessl scenarios: a ``criteria.json`` checklist beside ``task.md``. The file name is
ruby-skill-bench's too, so what the file holds decides (``suite.sniff``), or ``--format tessl``."""

from ..base import SuiteFormat, lazy
from ..evals_json import CHECKLIST

FORMAT = SuiteFormat(
    name="tessl",
    filenames=("criteria.json",),
    parse=lazy("skillab.formats.tessl.parser:load_tessl"),
    graders=(CHECKLIST,),
    sniffed=True,
)
