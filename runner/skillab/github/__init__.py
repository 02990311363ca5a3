"""GitHub: the Action's entrypoint and the pieces it is built from.

``entrypoint.main`` is ``skillab action``, around the run (``action.Action``). Around them:
``inputs`` (the one table of ``INPUT_*`` variables), ``event`` (the triggering event and the
runner's context), ``discovery`` (which suites to run), ``client`` (the REST seam), ``comment``
(the one PR comment) and ``workflow_commands`` (annotations, log groups, outputs, the job
summary). The entrypoint is not imported here, so reading the inputs table does not load the
engine.
"""

from ..lazy import lazy_exports

# Loaded on first use: finding suites (``skillab validate`` on a folder) needs no HTTP client.
_EXPORTS = {
    "GitHubClient": ".client",
    "GitHubError": ".client",
    "CommentResult": ".comment",
    "marker": ".comment",
    "upsert_comment": ".comment",
    "ChangedFile": ".discovery",
    "Selection": ".discovery",
    "SuiteLocation": ".discovery",
    "find_suites": ".discovery",
    "select_changed": ".discovery",
    "ActionContext": ".event",
    "Event": ".event",
    "PullRequest": ".event",
    "read_event": ".event",
    "INPUTS": ".inputs",
    "ActionInputs": ".inputs",
    "InputSpec": ".inputs",
    "read_inputs": ".inputs",
    "Annotation": ".workflow_commands",
    "Log": ".workflow_commands",
    "append_summary": ".workflow_commands",
    "write_outputs": ".workflow_commands",
}
__all__ = sorted(_EXPORTS)
__getattr__ = lazy_exports(__name__, _EXPORTS)
