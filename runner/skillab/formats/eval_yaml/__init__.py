"""``eval.yaml``, skillab's native format: validators and judged expectations, no graders of its own."""

from ..base import SuiteFormat, lazy

FORMAT = SuiteFormat(
    name="eval.yaml",
    filenames=("eval.yaml", "eval.yml"),
    parse=lazy("skillab.formats.eval_yaml.parser:load_eval_yaml"),
)
