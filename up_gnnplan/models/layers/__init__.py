"""Message-passing layers (torch), one per module; ``forward`` takes tensors only, so they export to ONNX.

Graphs are given as ``edge_index`` int64 [2, E] (row 0 source, row 1 target) with edge
features [E, L]; the number of nodes is that of the embeddings. Sums over a node's incoming
edges are ``scatter_add`` (:mod:`up_gnnplan.models.layers.scatter`), which exports with
dynamic node and edge counts. :class:`PerformerAttention` attends among the nodes of each graph
of a batch through sums per graph over the graph index (``node_graph``), without padding;
:class:`GPSLayer` puts it beside a GCN. :class:`TriangularAttention` works on dense object-pair
grids [B, n, n, d] instead (the Edge Transformer's).
"""

from up_gnnplan.models.layers.gatv2 import GATv2Layer
from up_gnnplan.models.layers.gcn import GCNLayer
from up_gnnplan.models.layers.gin import GINLayer
from up_gnnplan.models.layers.gps import GPSLayer
from up_gnnplan.models.layers.norm import LayerNorm
from up_gnnplan.models.layers.performer_attention import PerformerAttention
from up_gnnplan.models.layers.triangular_attention import TriangularAttention

__all__ = ["GATv2Layer", "GCNLayer", "GINLayer", "GPSLayer", "LayerNorm", "PerformerAttention", "TriangularAttention"]
