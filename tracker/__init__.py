"""tracker: live Koya tie-breaks for round-robin chess events."""

__version__ = "0.1.0"
"""The one version: the wheel's (pyproject reads it), ``tracker --version``'s and the image tag's."""
DISTRIBUTION = "koya-tracker"
"""The name the wheel is published under (``tracker`` on PyPI is another project); the command is ``tracker``."""
