"""Problems: read PDDL or take a UP ``Problem``, check the fragment, bridge to pymimir."""

from up_gnnplan.problems.bridge import Task, load_task
from up_gnnplan.problems.fragment import check_supported
from up_gnnplan.problems.loading import Source, load_pddl

__all__ = ["Source", "Task", "check_supported", "load_pddl", "load_task"]
