"""roofgen's version and the versions of the formats it reads and writes."""

__version__ = "0.1.0"
SPEC_FORMAT_VERSION = 1
OUTPUT_FORMAT_VERSION = 1  # the analysis JSON (`roofgen analyze --format json`)


def versions(*dists: str) -> list[str]:
    """roofgen's version and those of the installed distributions ``dists`` ('?' for
    one not installed): what a cache key needs beside roofgen's own inputs."""
    from importlib import metadata

    parts = [__version__]
    for dist in dists:
        try:
            parts.append(metadata.version(dist))
        except metadata.PackageNotFoundError:
            parts.append("?")
    return parts
