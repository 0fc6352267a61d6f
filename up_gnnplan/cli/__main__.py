"""``python -m up_gnnplan.cli``: the ``gnnplan`` program."""

from up_gnnplan.cli import entry

if __name__ == "__main__":
    entry()
