"""The package's exception and warning types, each saying what is wrong and what to do.

>>> first_line(ValueError("\\n  the query failed  \\n  at line 3"))
'the query failed'
>>> first_line(KeyError())
'KeyError'
"""


class ArrnfSetupError(RuntimeError):
    """Java, Spark or the extension jar is not as the package needs it."""


class ArrnfError(Exception):
    """A query that cannot be normalized or measured (it does not analyze, or the JVM side failed)."""


class ArrnfSqlWarning(UserWarning):
    """A block of the program has no SQL form: its CTE fails when run (sql.py)."""


def first_line(e: BaseException) -> str:
    """The first non-blank line of an exception's message (its class name when it has none): Spark's
    messages go on with JVM stack traces, which a one-line error should not carry."""
    lines = [ln.strip() for ln in str(e).splitlines() if ln.strip()]
    return lines[0] if lines else type(e).__name__
