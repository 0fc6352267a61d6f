"""Check the message-passing layers of ``up_gnnplan.models.layers`` and the Müller et al. network.

Where torch-geometric is installed (it is not a dependency), each layer is compared with the
torch-geometric layer it follows, with the same weights, on random graphs of several sizes.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from up_gnnplan.models.layers import GATv2Layer, GCNLayer, GINLayer
from up_gnnplan.models.layers.scatter import scatter_sum, segment_softmax, segment_sum
from up_gnnplan.models.muller import MullerGNN

torch.set_num_threads(1)

SIZES = [(1, 0), (5, 12), (30, 90)]  # (nodes, edges)


def random_graph(nodes: int, edges: int, labels: int, seed: int):
    """Return (x [N, 6], edge_index [2, E] without self-loops, edge features [E, labels])."""
    generator = torch.Generator().manual_seed(seed)
    x = torch.randn((nodes, 6), generator=generator)
    index = torch.randint(0, nodes, (2, edges), generator=generator)
    index = index[:, index[0] != index[1]]
    return x, index, torch.randn((index.shape[1], labels), generator=generator)


def test_segment_softmax_sums_to_one_per_node():
    scores = torch.tensor([[1.0], [2.0], [3.0], [50.0], [-50.0]])
    index = torch.tensor([0, 0, 2, 2, 2])
    alpha = segment_softmax(scores, index, 4)
    torch.testing.assert_close(scatter_sum(alpha, index, 4).squeeze(1), torch.tensor([1.0, 0.0, 1.0, 0.0]))
    assert torch.isfinite(alpha).all()


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # the legacy TorchScript exporter
@pytest.mark.filterwarnings("ignore::UserWarning")
def test_segment_sum_adds_repeated_rows_in_torch_and_onnxruntime(tmp_path):
    """``segment_sum`` against ``scatter_sum``: values and gradients in torch, and its ScatterND
    export in onnxruntime on other sizes, with repeated indices, empty segments and no rows."""
    ort = pytest.importorskip("onnxruntime")

    class Sums(nn.Module):
        def forward(self, values, index, segments):
            return segment_sum(values, index, segments)

    generator = torch.Generator().manual_seed(0)
    values = torch.randn((9, 2, 3), generator=generator, requires_grad=True)
    index = torch.tensor([0, 3, 3, 1, 3, 0, 0, 1, 3])  # segment 2 gets nothing
    got = segment_sum(values, index, torch.zeros(5))
    torch.testing.assert_close(got, scatter_sum(values, index, 5))
    (weights,) = torch.randn((1, 5, 2, 3), generator=generator)
    first = torch.autograd.grad((got * weights).sum(), values)[0]
    second = torch.autograd.grad((scatter_sum(values, index, 5) * weights).sum(), values)[0]
    torch.testing.assert_close(first, second)
    path = tmp_path / "sums.onnx"
    torch.onnx.export(Sums(), (values.detach(), index, torch.zeros(5)), str(path), opset_version=18, dynamo=False,
                      input_names=["values", "index", "segments"],
                      dynamic_axes={"values": {0: "rows"}, "index": {0: "rows"}, "segments": {0: "segments"}})
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    for rows, segments in ((30, 4), (1, 1), (0, 3)):
        other = torch.randn((rows, 2, 3), generator=generator)
        where = torch.randint(0, segments, (rows,), generator=generator)
        (out,) = session.run(None, {"values": other.numpy(), "index": where.numpy(),
                                    "segments": torch.zeros(segments).numpy()})
        np.testing.assert_allclose(out, scatter_sum(other, where, segments).numpy(), rtol=1e-5, atol=1e-5)


def test_heads_must_divide_the_size():
    with pytest.raises(ValueError, match="heads"):
        GATv2Layer(4, 6, heads=4)
    with pytest.raises(ValueError, match="dropout"):
        MullerGNN("gcn", 3, 2, dropout=1.0)


def test_gin_reads_out_every_layer_and_dropout_acts_in_training_only():
    model = MullerGNN("gin", node_features=5, edge_labels=2, hidden=8, layers=3, dropout=0.5)
    assert model.readout[0].in_features == 5 + 3 * 8
    assert MullerGNN("gcn", 5, 2, hidden=8, layers=3).readout[0].in_features == 8
    x, edge_index, _ = random_graph(7, 20, 2, seed=0)
    x = torch.nn.functional.one_hot(torch.arange(7) % 5, 5).float()
    labels = torch.nn.functional.one_hot(torch.arange(edge_index.shape[1]) % 2, 2).float()
    nodes = torch.arange(7)
    inputs = (torch.zeros(7, dtype=torch.long), nodes, torch.zeros(7, dtype=torch.long), torch.zeros(1, dtype=torch.long),
              x, edge_index, labels)
    torch.manual_seed(0)
    model.train()
    assert not torch.equal(model(*inputs), model(*inputs))
    model.eval()
    assert torch.equal(model(*inputs), model(*inputs))


# --- against torch-geometric ----------------------------------------------------------------------


@pytest.mark.parametrize("nodes,edges", SIZES)
def test_gcn_equals_torch_geometric(nodes, edges):
    geometric = pytest.importorskip("torch_geometric.nn")
    torch.manual_seed(1)
    ours, theirs = GCNLayer(6, 8), geometric.GCNConv(6, 8)
    with torch.no_grad():
        theirs.lin.weight.copy_(ours.weight.T)
        theirs.bias.copy_(ours.bias)
    x, edge_index, labels = random_graph(nodes, edges, 0, seed=nodes)
    torch.testing.assert_close(ours(x, edge_index, labels), torch.relu(theirs(x, edge_index)), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("nodes,edges", SIZES)
@pytest.mark.parametrize("heads", [1, 2])
def test_gatv2_equals_torch_geometric(nodes, edges, heads):
    geometric = pytest.importorskip("torch_geometric.nn")
    torch.manual_seed(2)
    ours, theirs = GATv2Layer(6, 8, heads=heads), geometric.GATv2Conv(6, 8 // heads, heads=heads)
    with torch.no_grad():
        for mine, other in ((ours.source, theirs.lin_l), (ours.target, theirs.lin_r)):
            other.weight.copy_(mine.weight)
            other.bias.copy_(mine.bias)
        theirs.att.copy_(ours.attention)
        theirs.bias.copy_(ours.bias)
    x, edge_index, labels = random_graph(nodes, edges, 0, seed=nodes)
    torch.testing.assert_close(ours(x, edge_index, labels), torch.relu(theirs(x, edge_index)), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("nodes,edges", SIZES)
@pytest.mark.parametrize("labels", [0, 3])
def test_gin_equals_torch_geometric(nodes, edges, labels):
    geometric = pytest.importorskip("torch_geometric.nn")
    torch.manual_seed(3)
    ours = GINLayer(6, 8, edge_features=labels)
    mlp = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 8))
    theirs = geometric.GINEConv(mlp, edge_dim=labels) if labels else geometric.GINConv(mlp)
    theirs.nn.load_state_dict(ours.mlp.state_dict())  # after construction, which resets the MLP
    if labels:
        theirs.lin.load_state_dict(ours.edge_linear.state_dict())
    x, edge_index, features = random_graph(nodes, edges, labels, seed=nodes)
    expected = theirs(x, edge_index, features) if labels else theirs(x, edge_index)
    torch.testing.assert_close(ours(x, edge_index, features), expected, rtol=1e-5, atol=1e-5)
