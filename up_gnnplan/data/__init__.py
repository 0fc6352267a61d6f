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


def example_files(name: str) -> list[Path]:
    """Return [domain, problems...] of the bundled example domain ``name``; raise ValueError naming the others."""
    domain = example(name)
    if not domain.is_file():
        raise ValueError(f"no bundled example '{name}'; there are: {', '.join(example_names())}")
    return [domain] + sorted(domain.parent.glob("p*.pddl"))


def example_problem(spec: str) -> list[Path]:
    """Return [domain, problem] of ``NAME`` (its largest test problem) or ``NAME/FILE``; raise ValueError."""
    name, _, problem = spec.partition("/")
    domain = example_files(name)[0]
    tests = sorted(domain.parent.glob("test-*.pddl")) or sorted(domain.parent.glob("p*.pddl"))
    chosen = domain.parent / problem if problem else tests[-1]
    if not chosen.is_file():
        raise ValueError(f"no bundled problem '{problem}' in {name}; there are: "
                         + ", ".join(p.name for p in sorted(domain.parent.glob("*.pddl")) if p != domain))
    return [domain, chosen]
