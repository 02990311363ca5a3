"""The judge consistency check in words, as every report says it: how often the judge agreed
with itself when re-asked, and the sentence that withholds the lift when that is too seldom."""

from __future__ import annotations

from typing import Any


def agreed_on(check: dict[str, Any]) -> str:
    """``agreed with itself on 9/10 re-asked verdicts``: the re-asks that errored are not compared."""
    return f"agreed with itself on {check['agreed']}/{check['sampled'] - check['errored']} re-asked verdicts"


def below_floor(check: dict[str, Any]) -> str:
    """``the judge agreed with itself on 3/5 re-asked verdicts, below 80%``: why the lift is withheld."""
    return f"the judge {agreed_on(check)}, below {check['floor']:.0%}"
