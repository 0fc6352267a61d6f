"""Checks of size parameters shared by the IPC 2023 generators: a bad value names its parameter."""

from __future__ import annotations


def require_int(name: str, value, minimum: int, maximum: int | None = None, why: str = "") -> None:
    """Raise ValueError naming ``name`` unless ``value`` is an int in ``minimum..maximum``.

    ``why`` ends the message when the bound comes from another parameter ("at most columns,
    or no plan exists").
    """
    whole = isinstance(value, int) and not isinstance(value, bool)
    if not whole or value < minimum or (maximum is not None and value > maximum):
        bounds = f">= {minimum}" if maximum is None else f"in {minimum}..{maximum}"
        raise ValueError(f"{name} must be an int {bounds}, got {value!r}" + (f" ({why})" if why else ""))


def parse_sizes(items) -> dict:
    """Return the size parameters of ``NAME=VALUE`` texts (``width=6``, ``map_fraction=0.5``) as numbers;
    raise ValueError naming an item that is not one."""
    sizes = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep:
            raise ValueError(f"size parameter {item!r} is not NAME=VALUE")
        try:
            sizes[name.strip()] = float(value) if "." in value else int(value)
        except ValueError:
            raise ValueError(f"size parameter {item!r}: {value!r} is not a number") from None
    return sizes
