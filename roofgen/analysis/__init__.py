"""Pure roofline analysis: bounds, classification, results.

:mod:`~roofgen.analysis.analyse` analyses every launch, variant and case; each other
roofline kind has its module (:mod:`~roofgen.analysis.precision`,
:mod:`~roofgen.analysis.instruction`, :mod:`~roofgen.analysis.communication`,
:mod:`~roofgen.analysis.energy`, :mod:`~roofgen.analysis.sparse`,
:mod:`~roofgen.analysis.runtime`, and the per-resource view
:mod:`~roofgen.analysis.resources`), is listed once in :mod:`~roofgen.analysis.kinds`,
and is computed on first use from the results (:mod:`~roofgen.analysis.inputs`).
"""
