"""Eval suites: the model every format is imported into, and what format loaders share.

The formats themselves are ``skillab.formats`` (one package each); ``load_suite`` and the other
registry names are served from there on first use, so the suite model alone (what records and
agents need) does not import a parser or jsonschema.
"""

from ..lazy import lazy_exports

_EXPORTS = {
    "parse_eval_yaml": "skillab.formats.eval_yaml.parser",
    "FormatRegistry": "skillab.formats",
    "SuiteFormat": "skillab.formats",
    "find_suite_file": "skillab.formats",
    "known_formats": "skillab.formats",
    "lazy_loader": "skillab.formats",
    "load_suite": "skillab.formats",
    "register_format": "skillab.formats",
    "Case": ".model",
    "Setup": ".model",
    "Suite": ".model",
    "ValidatorSpec": ".model",
    "SUITE_MAX_BYTES": "skillab.yaml_source",
}
__all__ = sorted(_EXPORTS)
__getattr__ = lazy_exports(__name__, _EXPORTS)
