"""gnnplan learn with the recipe's TrainConfig given ema=EMA (an experiment; not the product)."""
import os, sys
import up_gnnplan.learn.recipe as recipe
original = recipe.config_of
def with_ema(r, seed, device="auto"):
    config = original(r, seed, device)
    config.ema = float(os.environ.get("EMA", "0.999"))
    return config
recipe.config_of = with_ema
from up_gnnplan.cli import main
sys.argv[0] = "gnnplan"
main()
