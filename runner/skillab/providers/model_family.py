"""Model families: which vendor a model id belongs to, the default judge of another family, and
the judge-independence check (a judge from the agent's own family tends to favour its own kind
of answer, so the run carries a warning when they match)."""

from __future__ import annotations

import re

_DATE_SUFFIX = re.compile(r"-(\d{8}|\d{4}-\d{2}-\d{2}|latest)$")
_FAMILIES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("anthropic", re.compile(r"claude")),
    ("openai", re.compile(r"^(gpt|chatgpt|o1|o3|o4)(\b|[-_.])|(^|/)(gpt|o1|o3|o4)(\b|[-_.])")),
    ("google", re.compile(r"gemini|gemma")),
    ("meta", re.compile(r"llama")),
    ("mistral", re.compile(r"mistral|mixtral|codestral|ministral")),
    ("alibaba", re.compile(r"qwen")),
    ("deepseek", re.compile(r"deepseek")),
    ("xai", re.compile(r"grok")),
)


# A judge of another family than the agent's, for runs that do not name one.
_CROSS_FAMILY_JUDGE = {"anthropic": "gpt-4.1-mini"}
_DEFAULT_JUDGE = "claude-haiku-4-5"


def default_judge_model(agent_model: str) -> str:
    """A small model of another family than ``agent_model``'s."""
    return _CROSS_FAMILY_JUDGE.get(model_family(agent_model), _DEFAULT_JUDGE)


def model_family(model: str) -> str:
    """The vendor family a model id belongs to (``anthropic/claude-x`` and ``claude-x`` agree)."""
    name = model.lower()
    for family, pattern in _FAMILIES:
        if pattern.search(name):
            return family
    vendor, slash, rest = name.partition("/")
    return vendor if slash else _DATE_SUFFIX.sub("", name)


def judge_independence_warning(agent_model: str | None, judge_model: str | None) -> str | None:
    """A warning when the judge is the agent model or of its family; None when independent."""
    if not agent_model or not judge_model:
        return None
    if _DATE_SUFFIX.sub("", agent_model.lower()) == _DATE_SUFFIX.sub("", judge_model.lower()):
        return (
            f"the judge model is the agent model ({judge_model}): a model grading its own work "
            "tends to favour it; pass --judge-model with a model from another family"
        )
    family = model_family(agent_model)
    if family == model_family(judge_model):
        return (
            f"the judge model {judge_model} is of the agent's family ({family}, agent "
            f"{agent_model}): judges favour their own family's answers; pass --judge-model with "
            "a model from another family"
        )
    return None
