"""roofgen's version and the versions of the formats it reads and writes."""

__version__ = "0.1.0"
SPEC_FORMAT_VERSION = 1
OUTPUT_FORMAT_VERSION = 1  # the analysis JSON (`roofgen analyze --format json`)
