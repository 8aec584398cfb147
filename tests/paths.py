"""Where the repository's own files are, for tests that read them (wherever the test file sits)."""

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
