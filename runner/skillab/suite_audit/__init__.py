"""``skillab audit``: what is wrong with a suite before any model call, found in the suite and
the skill's files alone (answer leaks, contaminated prompts, near duplicates) and in the run
history (saturated and always-failing cases)."""

from .audit import audit_suite, history_for, skill_text_files

__all__ = ["audit_suite", "history_for", "skill_text_files"]
