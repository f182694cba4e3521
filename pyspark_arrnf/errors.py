"""The one exception type the package raises for set-up problems: each says what is wrong and what to do."""


class ArrnfSetupError(RuntimeError):
    """Java, Spark or the extension jar is not as the package needs it."""
