"""Unified Planning engines of up-gnnplan and their registration."""

ENGINE_NAME = "gnnplan"


def register(env=None) -> None:
    """Register the ``gnnplan`` engine in ``env`` (UP's global environment by default)."""
    from unified_planning.environment import get_environment

    env = env or get_environment()
    if ENGINE_NAME not in env.factory.engines:
        env.factory.add_engine(ENGINE_NAME, "up_gnnplan.plugins.engine", "GnnplanEngine")
