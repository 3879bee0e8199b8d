"""The graph pass: build discriminators with torch in a child process, read their facts.

Only the child-process modules (`worker`, `sites`, `probe`, `trace`) import torch; this
package, `facts` and `runner` never do, so the parent process stays torch-free.
"""

from snlint.graph.facts import GraphTarget, LeafFacts, Site, SNState, TargetFacts
from snlint.graph.runner import run_graph

__all__ = ["GraphTarget", "LeafFacts", "SNState", "Site", "TargetFacts", "run_graph"]
