"""Check the Performer attention and the GPS layer: FAVOR+ against exact softmax attention, no
attention across the states of a batch, random features fixed by the seed, and stable numbers."""

from __future__ import annotations

import math

import pytest
import torch

from up_gnnplan.models.gps import GraphTransformer
from up_gnnplan.models.layers import GPSLayer, PerformerAttention
from up_gnnplan.models.layers.performer_attention import orthogonal_features

torch.set_num_threads(1)


def exact_attention(layer: PerformerAttention, h: torch.Tensor, node_graph: torch.Tensor) -> torch.Tensor:
    """Return softmax attention with the layer's weights, graph by graph (the function FAVOR+ estimates)."""
    K, C = layer.heads, layer.size
    q, k, v = (h @ layer.qkv + layer.qkv_bias).reshape(-1, 3, K, C).unbind(1)
    out = torch.zeros_like(q)
    for graph in node_graph.unique():
        nodes = (node_graph == graph).nonzero().squeeze(1)
        scores = torch.einsum("ikc,jkc->kij", q[nodes], k[nodes]) / math.sqrt(C)
        out[nodes] = torch.einsum("kij,jkc->ikc", torch.softmax(scores, dim=-1), v[nodes])
    return out.reshape(-1, K * C) @ layer.out + layer.out_bias


def test_favor_estimates_softmax_attention_and_improves_with_more_features():
    torch.manual_seed(0)
    h = 0.5 * torch.randn(24, 16)
    node_graph = torch.tensor([0] * 10 + [1] * 14)
    errors = []
    for features in (16, 256, 4096):
        torch.manual_seed(1)  # the same weights each time; only the number of features changes
        layer = PerformerAttention(16, heads=2, features=features, generator=torch.Generator().manual_seed(2))
        with torch.no_grad():
            estimate = layer(h, node_graph, torch.arange(2))
            errors.append(float((estimate - exact_attention(layer, h, node_graph)).abs().max()))
    # Measured: 0.076, 0.027, 0.008 against values of mean size 0.2 (0.018 at 4096 features when
    # the orthogonal directions were not uniformly distributed).
    assert errors[0] > errors[1] > errors[2] and errors[2] < 0.012, errors


def test_states_of_a_batch_do_not_attend_to_each_other():
    torch.manual_seed(0)
    layer = PerformerAttention(8, heads=2)
    first, second = torch.randn(5, 8), torch.randn(7, 8)
    together = layer(torch.cat([first, second]), torch.tensor([0] * 5 + [1] * 7), torch.arange(2))
    alone = layer(first, torch.zeros(5, dtype=torch.long), torch.arange(1))
    torch.testing.assert_close(together[:5], alone, rtol=1e-6, atol=1e-6)
    # Another second state changes nothing of the first's.
    other = layer(torch.cat([first, 100 * torch.randn(3, 8)]), torch.tensor([0] * 5 + [1] * 3), torch.arange(2))
    torch.testing.assert_close(other[:5], alone, rtol=1e-6, atol=1e-6)


def test_random_features_are_fixed_by_the_seed_and_stored():
    def model(seed):
        torch.manual_seed(5)  # the same trained weights; only the feature seed differs
        return GraphTransformer(node_features=4, edge_labels=2, hidden=8, layers=2, heads=2, seed=seed)

    a, b, c = model(0), model(0), model(1)
    names = [name for name in a.state_dict() if name.endswith("attention.projection")]
    assert len(names) == 2, "one buffer per layer, in the checkpoint"
    for name in names:
        torch.testing.assert_close(a.state_dict()[name], b.state_dict()[name], rtol=0, atol=0)
        assert not torch.equal(a.state_dict()[name], c.state_dict()[name])
    assert not torch.equal(*(a.state_dict()[name] for name in names)), "each layer draws its own"
    assert not any(name.endswith("projection") for name, _ in a.named_parameters()), "not trained"


def test_orthogonal_features_are_orthogonal_within_a_block():
    w = orthogonal_features(8, 20, torch.Generator().manual_seed(0))  # blocks of 8, 8 and 4 columns
    assert w.shape == (8, 20)
    block = w[:, :8] / w[:, :8].norm(dim=0)
    torch.testing.assert_close(block.T @ block, torch.eye(8), rtol=1e-5, atol=1e-5)


def test_large_embeddings_stay_finite_and_differentiable():
    torch.manual_seed(0)
    layer = PerformerAttention(8, heads=1)
    h = (300 * torch.randn(6, 8)).requires_grad_()
    out = layer(h, torch.tensor([0, 0, 0, 1, 1, 1]), torch.arange(2))
    out.sum().backward()
    assert torch.isfinite(out).all() and torch.isfinite(h.grad).all()


@pytest.mark.parametrize("local", [True, False], ids=["gps", "performer"])
def test_gps_layer_uses_its_gcn_only_with_local_and_dropout_only_in_training(local):
    torch.manual_seed(0)
    layer = GPSLayer(8, heads=2, edge_labels=2, dropout=0.5, local=local)
    assert (layer.local is not None) == local
    h = torch.randn(4, 8)
    edges = torch.tensor([[0, 1, 2], [1, 0, 3]])
    labels = torch.eye(2)[torch.tensor([0, 1, 0])]
    graph, graphs = torch.zeros(4, dtype=torch.long), torch.arange(1)
    layer.eval()
    with torch.no_grad():
        base = layer(h, edges, labels, graph, graphs)
        rewired = layer(h, edges[:, :1], labels[:1], graph, graphs)
        torch.testing.assert_close(base, layer(h, edges, labels, graph, graphs), rtol=0, atol=0)
    assert (not torch.allclose(base, rewired)) == local, "the edges matter to GPS only"
    layer.train()
    assert not torch.equal(layer(h, edges, labels, graph, graphs), layer(h, edges, labels, graph, graphs))


def test_heads_must_divide_the_size_and_dropout_is_a_probability():
    with pytest.raises(ValueError, match="heads"):
        PerformerAttention(6, heads=4)
    with pytest.raises(ValueError, match="dropout"):
        GraphTransformer(3, 2, dropout=1.0)
