"""roofgen: roofline analysis, recommendations, charts and case-study sites."""

__version__ = "0.1.0"
SPEC_FORMAT_VERSION = 1

__all__ = ["SPEC_FORMAT_VERSION", "__version__"]
