"""The package's version, and the name of the jar built with it: the one place both are written.

``build.sbt`` reads ``__version__`` from here (the jar is ``<name>_<Scala binary>-<version>.jar``,
sbt's usual name, and ``arrnf.Api.version()`` answers it), ``pyproject.toml`` takes it as the
distribution's version, and ``setup.py`` and ``jar.py`` look for ``JAR_NAME``. No imports: setup.py
reads this file without importing the package.
"""
__version__ = "0.1.0"
SCALA_BINARY_VERSION = "2.13"
JAR_NAME = f"arrnf-jvm-rules_{SCALA_BINARY_VERSION}-{__version__}.jar"
