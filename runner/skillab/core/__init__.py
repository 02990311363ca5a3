"""The small core every other layer builds on: shared types, the typed records and run log, the
contracts (``Agent``, ``ModelClient``, ``Grader``, ``SuiteFormat``, ``Reporter``) and the plugin
registry. It imports nothing else of skillab, so any layer may depend on it and it on none.
"""
