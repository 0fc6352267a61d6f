"""Shared fixtures of the foundation tests (the data they use is in ``pddl_cases.py``)."""

from __future__ import annotations

import pytest
from pddl_cases import PROBLEMS, expansion_by_key, up_state_values

from up_gnnplan.problems import load_task


@pytest.fixture(scope="session")
def task_of():
    """Return a loader ``task_of(name)`` of the :data:`PROBLEMS`, caching each task."""
    cache = {}

    def load(name: str):
        if name not in cache:
            cache[name] = load_task(*PROBLEMS[name])
        return cache[name]

    return load


@pytest.fixture(scope="session")
def up_values():
    """UP-only V*: see :func:`pddl_cases.up_state_values`."""
    return up_state_values


@pytest.fixture(scope="session")
def keyed():
    """Index of each expanded state by its atoms: see :func:`pddl_cases.expansion_by_key`."""
    return expansion_by_key
