"""Small bundled PDDL examples (Blocksworld, Gripper) for the README, examples and tests."""

from importlib import resources
from pathlib import Path


def example(domain: str, problem: str | None = None) -> Path:
    """Return the path of a bundled domain file, or of one of its problems."""
    base = resources.files(__name__) / domain
    return Path(str(base / (problem or "domain.pddl")))


def example_names() -> list[str]:
    """Return the names of the bundled example domains."""
    base = Path(str(resources.files(__name__)))
    return sorted(d.name for d in base.iterdir() if (d / "domain.pddl").is_file())
