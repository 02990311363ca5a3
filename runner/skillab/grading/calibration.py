"""How far the judge agrees with people: the hand-labelled calibration set, graded and scored.

``skillab calibrate-judge`` grades every item of ``judge_calibration.yaml`` (or ``--set``) with
the mock judge, or with a model given ``--judge-model``, and reports per arm: Cohen's kappa,
sensitivity (labelled met, judged met), specificity (labelled unmet, judged unmet), and accuracy
per kind (met, unmet, adversarial). An errored verdict is counted apart, never as a grade.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ..errors import UsageError
from .judge import ExpectationJudge

DEFAULT_SET = Path(__file__).with_name("judge_calibration.yaml")
SET_FORMAT = "skillab.judge-calibration/1"


@dataclass(frozen=True)
class Item:
    id: str
    arm: str
    kind: str
    expectation: str
    prompt: str
    output: str
    label: bool
    transcript: str = ""


@dataclass
class Agreement:
    """A 2x2 table of label against verdict, plus errored verdicts and accuracy per kind."""

    tp: int = 0
    fn: int = 0
    tn: int = 0
    fp: int = 0
    errored: int = 0
    kinds: dict[str, list[int]] = field(default_factory=dict)  # kind -> [right, graded]

    def add(self, item: Item, verdict: bool | None) -> None:
        if verdict is None:
            self.errored += 1
            return
        if item.label:
            self.tp += verdict
            self.fn += not verdict
        else:
            self.tn += not verdict
            self.fp += verdict
        right = self.kinds.setdefault(item.kind, [0, 0])
        right[0] += verdict == item.label
        right[1] += 1

    @property
    def n(self) -> int:
        return self.tp + self.fn + self.tn + self.fp

    @property
    def sensitivity(self) -> float | None:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else None

    @property
    def specificity(self) -> float | None:
        return self.tn / (self.tn + self.fp) if self.tn + self.fp else None

    @property
    def kappa(self) -> float | None:
        """Cohen's kappa: agreement beyond what the two raters' base rates give by chance."""
        n = self.n
        if not n:
            return None
        observed = (self.tp + self.tn) / n
        yes = ((self.tp + self.fn) / n) * ((self.tp + self.fp) / n)
        no = ((self.tn + self.fp) / n) * ((self.tn + self.fn) / n)
        chance = yes + no
        return 1.0 if chance == 1 else (observed - chance) / (1 - chance)

    def to_dict(self) -> dict[str, Any]:
        def r(x: float | None) -> float | None:
            return None if x is None else round(x, 3)

        return {
            "items": self.n + self.errored, "errored": self.errored, "kappa": r(self.kappa),
            "sensitivity": r(self.sensitivity), "specificity": r(self.specificity),
            "accuracy_by_kind": {k: r(v[0] / v[1]) for k, v in sorted(self.kinds.items()) if v[1]},
            "table": {"tp": self.tp, "fn": self.fn, "tn": self.tn, "fp": self.fp},
        }


def load_set(path: Path = DEFAULT_SET) -> list[Item]:
    """The items of a calibration set; ``UsageError`` naming the item and field when malformed."""
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise UsageError(f"{path}: cannot read the calibration set ({exc})") from None
    if not isinstance(data, dict) or data.get("format") != SET_FORMAT:
        raise UsageError(f"{path}: not a judge calibration set (format {SET_FORMAT})")
    items = []
    for index, raw in enumerate(data.get("items") or []):
        where = f"{path}: item {index + 1} ({(raw or {}).get('id', '?')})"
        try:
            items.append(Item(
                id=str(raw["id"]), arm=str(raw["arm"]), kind=str(raw["kind"]),
                expectation=str(raw["expectation"]), prompt=str(raw["prompt"]),
                output=str(raw["output"]), label=_label(raw["label"]),
                transcript=str(raw.get("transcript") or ""),
            ))
        except (KeyError, TypeError) as exc:
            raise UsageError(f"{where}: missing or malformed field {exc}") from None
    return items


def _label(value: Any) -> bool:
    if not isinstance(value, bool):
        raise TypeError("'label' (true or false)")
    return value


def calibrate(judge: ExpectationJudge, items: Sequence[Item]) -> dict[str, Agreement]:
    """Grade every item; the agreement per arm and over all of them (key ``all``)."""
    by_arm: dict[str, Agreement] = {"all": Agreement()}
    for item in items:
        result = judge.grade(item.expectation, prompt=item.prompt, transcript=item.transcript,
                             final_output=item.output)
        verdict = None if result.errored else result.passed
        for key in (item.arm, "all"):
            by_arm.setdefault(key, Agreement()).add(item, verdict)
    return by_arm


def render(model: str, results: dict[str, Agreement]) -> Iterable[str]:
    yield f"judge {model}: agreement with the hand labels"
    yield f"  {'arm':<14} {'items':>5} {'kappa':>6} {'sens.':>6} {'spec.':>6}  accuracy by kind"
    for arm, agreement in results.items():
        d = agreement.to_dict()
        kinds = ", ".join(f"{k} {v:.2f}" for k, v in d["accuracy_by_kind"].items())
        errored = f" ({d['errored']} errored)" if d["errored"] else ""
        yield (f"  {arm:<14} {d['items']:>5} {_f(d['kappa']):>6} {_f(d['sensitivity']):>6} "
               f"{_f(d['specificity']):>6}  {kinds}{errored}")


def _f(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.2f}"
