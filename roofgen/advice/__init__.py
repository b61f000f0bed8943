"""Recommendations from rules kept as data (``roofgen/rules/recommendations.yaml``).

:func:`advise` takes the analysis and a :class:`RuleSet` and returns :class:`Advice`:
recommendations per launch and per variant, each with the numbers behind it, the
bound on its gain, and the techniques that fit. Pure; reading the rule files is in
:mod:`roofgen.advice.load`.
"""

from roofgen.advice.engine import Advice, Recommendation, advise
from roofgen.advice.facts import Gain
from roofgen.advice.rules import RecRule, RuleSet, Technique

__all__ = ["Advice", "Gain", "RecRule", "Recommendation", "RuleSet", "Technique", "advise"]
