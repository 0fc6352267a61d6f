"""The R-GNN's message-passing layers on the packed layout, with the backward pass written out.

Ståhlberg, Bonet & Geffner (2024), section 3.4: in each of ``L`` layers every atom
``q = p(v1..va)`` computes ``MLP_p(f(v1),..,f(va))`` and sends its j-th block to ``vj``; each
node takes the smooth maximum of its messages, ``agg = max + log(sum(exp(beta (m - max)))) /
beta``, and updates ``f'(v) = f(v) + MLP_U([f(v), agg])``; every MLP is Linear, Mish, Linear.

On one CPU thread a training step of small states is mostly per-operation overhead: a batch of
one Blocks state cost more than half the time of a batch of 32 (benchmarks/RESULTS.md, issue
14). :class:`PackedLayers` runs all ``L`` layers as one autograd node: the forward pass keeps
what the backward pass needs (the gathered inputs, the Mish derivatives, the softmax weights of
the smooth max), and the backward pass is the chain rule written out, with the weight
gradients accumulated across layers in place (137 aten operations per layer, forward and
backward, against 195 through autograd). The values and gradients are those of
:meth:`up_gnnplan.models.rgnn.RelationalGNN.embed_packed` within float rounding (tests/models).
"""

from __future__ import annotations

import torch

from up_gnnplan.models.layers.mlp import mish_and_slope

FLOOR = -1e30  # the start of the running maximum (below any message)


class PackedLayers(torch.autograd.Function):
    """All message-passing layers of an R-GNN with smooth-max aggregation, as one autograd node.

    Call ``PackedLayers.apply(shape, *indices, *weights)``:

    Args:
        shape: ``(N, d, L, beta, share)``: nodes, embedding size, layers, smooth-max
            sharpness, whether every layer uses weight set 0 (else layer l uses set l).
        indices: per arity ``a`` (increasing), ``groups`` [R', M, a] (int64) of the packed
            layout (:mod:`up_gnnplan.encodings.packing`), padded with the dummy node ``N``.
        weights: per weight set, per arity, the relation weights selected for the rows
            ``w1`` [R', a*d, a*d], ``b1`` [R', a*d], ``w2`` [R', a*d, a*d], ``b2`` [R', a*d]; then
            the update MLP ``u1`` [2d, 2d], ``c1`` [2d], ``u2`` [d, 2d], ``c2`` [d] (``nn.Linear``
            layout).

    Returns the final node embeddings [N, d], from zero embeddings.
    """

    @staticmethod
    def forward(ctx, shape, *tensors):
        num_nodes, d, layers, beta, share = shape
        groups, weights = _split(tensors, 1 if share else layers)
        arities = [g.shape[2] for g in groups]
        need = any(ctx.needs_input_grad)
        device = groups[0].device
        flat = [g.reshape(-1) for g in groups]
        targets = torch.cat(flat)
        index = targets.unsqueeze(1).expand(-1, d)
        sizes = [f.shape[0] for f in flat]
        counts = torch.zeros((num_nodes + 1,), dtype=torch.float32, device=device).index_add_(
            0, targets, torch.ones((targets.shape[0],), dtype=torch.float32, device=device))
        empty = (counts == 0).unsqueeze(1)  # nodes without messages aggregate to 0
        h = torch.zeros((num_nodes, d), dtype=torch.float32, device=device)
        zero_row = h.new_zeros((1, d))
        saved = []
        for layer in range(layers):
            rel, (u1, c1, u2, c2) = weights[0 if share else layer]
            padded = torch.cat([h, zero_row])
            messages = h.new_empty((targets.shape[0], d))
            start, keep = 0, []
            for a, g, size, (w1, b1, w2, b2) in zip(arities, groups, sizes, rel):
                x = padded.index_select(0, g.reshape(-1)).view(g.shape[0], g.shape[1], a * d)
                hidden, slope = mish_and_slope(torch.baddbmm(b1.unsqueeze(1), x, w1), need)
                torch.baddbmm(b2.unsqueeze(1), hidden, w2, out=messages[start:start + size].view(g.shape[0], g.shape[1], a * d))
                keep.append((x, hidden, slope))
                start += size
            # Smooth max; the result does not depend on the running max, so the gradient of a
            # message is its softmax weight within its node.
            top = torch.full((num_nodes + 1, d), FLOOR, dtype=torch.float32, device=device)
            top = top.scatter_reduce_(0, index, messages, reduce="amax").masked_fill_(empty, 0.0)
            weight = messages.sub_(top.gather(0, index)).mul_(beta).exp_()  # in the messages' memory
            total = torch.zeros_like(top).scatter_add_(0, index, weight).masked_fill_(empty, 1.0)
            agg = total.log().div_(beta).add_(top)[:num_nodes]
            joined = torch.cat([h, agg], dim=1)
            inner, inner_slope = mish_and_slope(torch.addmm(c1, joined, u1.t()), need)
            h = torch.addmm(c2, inner, u2.t()).add_(h)
            saved.append((keep, weight, total, joined, inner, inner_slope))
        if need:
            ctx.layout = (num_nodes, d, layers, share, arities, sizes, len(tensors))
            ctx.saved = saved
            ctx.save_for_backward(index, *flat, *tensors[len(groups):])
        return h

    @staticmethod
    def backward(ctx, grad):
        num_nodes, d, layers, share, arities, sizes, count = ctx.layout
        index, *rest = ctx.saved_tensors
        flat, tensors = rest[:len(arities)], rest[len(arities):]
        sets = 1 if share else layers
        _, weights = _split([None] * len(arities) + list(tensors), sets)
        grads = [[[torch.zeros_like(w) for w in ws] for ws in rel] + [[torch.zeros_like(w) for w in upd]]
                 for rel, upd in weights]
        g = grad.contiguous()
        for layer in reversed(range(layers)):
            k = 0 if share else layer
            keep, weight, total, joined, inner, inner_slope = ctx.saved[layer]
            rel, (u1, c1, u2, c2) = weights[k]
            gu1, gc1, gu2, gc2 = grads[k][-1]
            # h' = h + c2 + inner u2^T, inner = mish(c1 + [h, agg] u1^T)
            gu2.addmm_(g.t(), inner)
            gc2.add_(g.sum(0))
            g_inner = torch.mm(g, u2).mul_(inner_slope)
            gu1.addmm_(g_inner.t(), joined)
            gc1.add_(g_inner.sum(0))
            g_joined = torch.mm(g_inner, u1)
            g_padded = g.new_zeros((num_nodes + 1, d))
            torch.add(g, g_joined[:, :d], out=g_padded[:num_nodes])
            scaled = g.new_zeros((num_nodes + 1, d))
            torch.div(g_joined[:, d:], total[:num_nodes], out=scaled[:num_nodes])
            g_messages = scaled.gather(0, index).mul_(weight)
            start = 0
            for a, f, size, (x, hidden, slope), (w1, b1, w2, b2), (gw1, gb1, gw2, gb2) in zip(
                    arities, flat, sizes, keep, rel, grads[k][:-1]):
                g_out = g_messages[start:start + size].view(x.shape)
                gw2.baddbmm_(hidden.transpose(1, 2), g_out)
                gb2.add_(g_out.sum(1))
                g_hidden = torch.bmm(g_out, w2.transpose(1, 2)).mul_(slope)
                gw1.baddbmm_(x.transpose(1, 2), g_hidden)
                gb1.add_(g_hidden.sum(1))
                g_padded.index_add_(0, f, torch.bmm(g_hidden, w1.transpose(1, 2)).view(-1, d))
                start += size
            g = g_padded[:num_nodes]
        out = [None] * (count - len(tensors))
        for per_set in grads:  # per arity, then the update MLP's
            for ws in per_set:
                out += ws
        return (None, *out)


def _split(tensors, sets: int):
    """Split ``PackedLayers``' tensors into (groups, [(per-arity relation weights, update weights)] per set)."""
    arities = (len(tensors) - 4 * sets) // (1 + 4 * sets)
    groups, rest = list(tensors[:arities]), list(tensors[arities:])
    weights = []
    for s in range(sets):
        chunk = rest[s * (4 * arities + 4):(s + 1) * (4 * arities + 4)]
        weights.append(([chunk[4 * i:4 * i + 4] for i in range(arities)], chunk[4 * arities:]))
    return groups, weights
