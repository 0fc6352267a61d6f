"""Datasets: labelled states (exact V*) from small instances, and instance generators."""

from up_gnnplan.datasets.build import build_dataset
from up_gnnplan.datasets.store import Dataset, ProblemRecord

__all__ = ["Dataset", "ProblemRecord", "build_dataset"]
