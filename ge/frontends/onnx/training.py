"""Converters of training steps: the optimizers of `ai.onnx.preview.training` (Adagrad, Adam,
Momentum) and BatchNormalization's training mode, each a short chain of elementwise graph ops.

The optimizers update any number of tensors at once (inputs R, T, then the tensors, their
gradients and their accumulators, each as a list); the step count T only enters through `where`,
so one graph serves every step:
```
Adagrad:  g = norm * x + g;  h = h + g^2;  x = x - r / (1 + t * decay) * g / (sqrt(h) + eps)
Adam:     g = norm * x + g;  v = alpha v + (1 - alpha) g;  h = beta h + (1 - beta) g^2
          x = (1 - norm_post) (x - r * (t > 0 ? sqrt(1 - beta^t) / (1 - alpha^t) : 1) * v / (sqrt(h) + eps))
Momentum: g = norm * x + g;  v = alpha v + (t > 0 ? beta : 1) g
          x = x - r v   (standard)     x = x - r (g + alpha v)   (nesterov)
```
BatchNormalization with `training_mode = 1` normalizes with the batch's own mean and (population)
variance and outputs the running statistics `momentum * running + (1 - momentum) * batch`; the
inference mode stays with the converter of `nn`.
"""

from __future__ import annotations

from collections.abc import Callable

from ge.dialects import graph as ops
from ge.graph import Tensor

from . import nn
from .composite import Composer
from .importer import Converter, ConverterResults, Importer, Node

DOMAIN = "ai.onnx.preview.training"

FLOATS = ("float16", "bfloat16", "float32", "float64")


def _adagrad(imp: Importer, node: Node) -> list[Tensor]:
    """Outputs: the new tensors, then their new squared-gradient sums."""
    norm, decay = float(node.attr("norm_coefficient", 0.0)), float(node.attr("decay_factor", 0.0))
    epsilon = float(node.attr("epsilon", 1e-6))

    def step(c: Composer, r: Tensor, t: Tensor, x: Tensor, g: Tensor, h: Tensor, i: int) -> list[Tensor]:
        dtype = x.dtype
        g = _regularized(c, x, g, norm, i)
        h_new = c.op(ops.AddOp, [h, c.op(ops.MulOp, [g, g], f"g2_{i}")], f"h_{i}")
        decayed = c.op(
            ops.AddOp,
            [_const(c, 1.0, dtype), c.op(ops.MulOp, [t, _const(c, decay, dtype)], f"td_{i}")],
            f"tdp_{i}",
        )
        rate = c.op(ops.DivOp, [c.cast(r, dtype, f"r_{i}"), decayed], f"rate_{i}")
        root = c.op(
            ops.AddOp, [c.op(ops.SqrtOp, [h_new], f"sqrt_{i}"), _const(c, epsilon, dtype)], f"root_{i}"
        )
        change = c.op(ops.MulOp, [rate, c.op(ops.DivOp, [g, root], f"scaled_{i}")], f"change_{i}")
        return [c.op(ops.SubOp, [x, change], f"x_{i}"), h_new]

    return _per_tensor(imp, node, 3, step)


def _adam(imp: Importer, node: Node) -> list[Tensor]:
    """Outputs: the new tensors, then their new first moments, then their new second moments."""
    alpha, beta = float(node.attr("alpha", 0.9)), float(node.attr("beta", 0.999))
    norm, post = float(node.attr("norm_coefficient", 0.0)), float(node.attr("norm_coefficient_post", 0.0))
    epsilon = float(node.attr("epsilon", 1e-6))

    def step(c: Composer, r, t, x, g, v, h, i: int) -> list[Tensor]:
        dtype = x.dtype
        g = _regularized(c, x, g, norm, i)
        v_new = _blend(c, v, alpha, g, 1 - alpha, f"v_{i}")
        h_new = _blend(c, h, beta, c.op(ops.MulOp, [g, g], f"g2_{i}"), 1 - beta, f"h_{i}")
        root = c.op(
            ops.AddOp, [c.op(ops.SqrtOp, [h_new], f"sqrt_{i}"), _const(c, epsilon, dtype)], f"root_{i}"
        )
        # Bias correction from the first step on; the powers take t >= 1 so that the unused
        # branch of step 0 divides by no zero.
        steps = c.op(ops.MaxOp, [t, _const(c, 1.0, dtype)], f"t1_{i}")
        beta_t = c.op(ops.PowOp, [_const(c, beta, dtype), steps], f"beta_t_{i}")
        alpha_t = c.op(ops.PowOp, [_const(c, alpha, dtype), steps], f"alpha_t_{i}")
        one = _const(c, 1.0, dtype)
        correction = c.op(
            ops.DivOp,
            [
                c.op(ops.SqrtOp, [c.op(ops.SubOp, [one, beta_t], f"1_beta_t_{i}")], f"sqrt_beta_t_{i}"),
                c.op(ops.SubOp, [one, alpha_t], f"1_alpha_t_{i}"),
            ],
            f"correction_{i}",
        )
        correction = c.op(ops.WhereOp, [_started(c, t, i), correction, one], f"bias_{i}")
        rate = c.op(ops.MulOp, [c.cast(r, dtype, f"r_{i}"), correction], f"rate_{i}")
        change = c.op(ops.MulOp, [rate, c.op(ops.DivOp, [v_new, root], f"scaled_{i}")], f"change_{i}")
        x_new = c.op(ops.SubOp, [x, change], f"x_{i}")
        if post:
            x_new = c.op(ops.MulOp, [x_new, _const(c, 1.0 - post, dtype)], f"x_post_{i}")
        return [x_new, v_new, h_new]

    return _per_tensor(imp, node, 4, step)


def _momentum(imp: Importer, node: Node) -> list[Tensor]:
    """Modes standard and nesterov. Outputs: the new tensors, then their new momenta."""
    for name in ("alpha", "beta", "mode", "norm_coefficient"):
        if name not in node.attrs:
            raise node.invalid(f"the attribute '{name}' is required")
    alpha, beta, norm = (float(node.attr(name)) for name in ("alpha", "beta", "norm_coefficient"))
    mode = node.attr("mode")
    if mode not in ("standard", "nesterov"):
        raise node.invalid(f"mode must be 'standard' or 'nesterov', got '{mode}'")

    def step(c: Composer, r, t, x, g, v, i: int) -> list[Tensor]:
        dtype = x.dtype
        g = _regularized(c, x, g, norm, i)
        rate_g = c.op(
            ops.WhereOp, [_started(c, t, i), _const(c, beta, dtype), _const(c, 1.0, dtype)], f"beta_{i}"
        )
        v_new = c.op(
            ops.AddOp,
            [
                c.op(ops.MulOp, [v, _const(c, alpha, dtype)], f"av_{i}"),
                c.op(ops.MulOp, [g, rate_g], f"bg_{i}"),
            ],
            f"v_{i}",
        )
        direction = v_new
        if mode == "nesterov":
            ahead = c.op(ops.MulOp, [v_new, _const(c, alpha, dtype)], f"ahead_{i}")
            direction = c.op(ops.AddOp, [g, ahead], f"direction_{i}")
        change = c.op(ops.MulOp, [c.cast(r, dtype, f"r_{i}"), direction], f"change_{i}")
        return [c.op(ops.SubOp, [x, change], f"x_{i}"), v_new]

    return _per_tensor(imp, node, 3, step)


def _batch_norm(imp: Importer, node: Node) -> ConverterResults:
    """Inference, and training_mode=1 (opset 14 on): batch statistics, and the running mean and
    variance outputs."""
    training = int(node.attr("training_mode", 0))
    if node.opset >= 14:
        # The output slots, left-out ones ('') included, as ONNX's shape inference counts them.
        count, want = len(node.proto.output), 3 if training else 1
        if count != want:
            outputs = "Y, running_mean and running_var" if training else "Y only"
            raise node.invalid(
                f"attribute 'training_mode' = {training} needs {want} output{'s' * (want > 1)} "
                f"({outputs}), the node has {count}"
            )
    if not training:
        return nn.CONVERTERS["BatchNormalization"](imp, node)
    c = Composer(imp, node)
    x = c.input(0, "X")
    if len(x.shape) < 2:
        raise node.invalid("X must have a channel axis")
    if x.dtype not in FLOATS:
        raise node.invalid(f"X must hold floats, got {x.dtype}")
    scale, bias, running_mean, running_var = (
        c.input(i, n) for i, n in enumerate(("scale", "B", "mean", "var"), 1)
    )
    momentum, epsilon = float(node.attr("momentum", 0.9)), float(node.attr("epsilon", 1e-5))
    axes = [a for a in range(len(x.shape)) if a != 1]
    mean = c.reduce(ops.ReduceMeanOp, x, axes, "batch_mean")
    per_channel = [x.shape[1] if a == 1 else 1 for a in range(len(x.shape))]
    centered = c.op(ops.SubOp, [x, c.reshape(mean, per_channel, "batch_mean_b")], "centered")
    var = c.reduce(ops.ReduceMeanOp, c.op(ops.MulOp, [centered, centered], "squares"), axes, "batch_var")
    params = [c.cast(t, x.dtype, f"{name}_x") for t, name in ((scale, "scale"), (bias, "bias"))]
    y = c.op(ops.BatchNormOp, [x, *params, mean, var], "", {"epsilon": ops.float_attr(epsilon)})
    outputs = [y]
    for running, batch, name in ((running_mean, mean, "running_mean"), (running_var, var, "running_var")):
        blended = _blend(
            c, c.cast(running, x.dtype, f"{name}_x"), momentum, batch, 1 - momentum, f"{name}_x_new"
        )
        outputs.append(c.cast(blended, running.dtype, name))
    return outputs


# --------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------


def _per_tensor(imp: Importer, node: Node, lists: int, step: Callable[..., list[Tensor]]) -> list[Tensor]:
    """Applies `step(c, r, t, x, g, ..., index)` to each optimized tensor: the inputs after R and T
    are `lists` lists of one length (tensors, gradients, accumulators); the outputs are lists too."""
    c = Composer(imp, node)
    r, t = c.input(0, "R"), c.input(1, "T")
    if (
        len(node.inputs) == 2
        or (len(node.inputs) - 2) % lists
        or not all(map(node.has_input, range(2, len(node.inputs))))
    ):
        raise node.invalid(f"after R and T, the inputs must be {lists} lists of one length")
    rest = node.input_tensors()[2:]
    count = len(rest) // lists
    groups = [rest[i * count : (i + 1) * count] for i in range(lists)]
    results: list[list[Tensor]] = [[] for _ in range(lists - 1)]
    for i in range(count):
        x = groups[0][i]
        if x.dtype not in FLOATS:
            raise node.invalid(f"the optimized tensors must hold floats, got {x.dtype}")
        t_x = c.cast(c.reshape(t, [], f"t_scalar_{i}"), x.dtype, f"t_{i}")
        operands = [c.cast(group[i], x.dtype, f"in{j}_{i}") for j, group in enumerate(groups)]
        outputs = step(c, c.reshape(r, [], f"r_scalar_{i}"), t_x, *operands, i)
        for slot, value in zip(results, outputs, strict=True):
            slot.append(value)
    return [value for slot in results for value in slot]


def _const(c: Composer, value: float, dtype: str) -> Tensor:
    return c.scalar(value, dtype, "constant")


def _regularized(c: Composer, x: Tensor, g: Tensor, norm: float, i: int) -> Tensor:
    """The gradient of the loss plus that of the L2 term `norm / 2 * x^2`."""
    if not norm:
        return g
    return c.op(ops.AddOp, [c.op(ops.MulOp, [x, _const(c, norm, x.dtype)], f"nx_{i}"), g], f"g_{i}")


def _blend(c: Composer, a: Tensor, wa: float, b: Tensor, wb: float, part: str) -> Tensor:
    """`wa * a + wb * b`."""
    left = c.op(ops.MulOp, [a, _const(c, wa, a.dtype)], f"{part}.a")
    right = c.op(ops.MulOp, [b, _const(c, wb, b.dtype)], f"{part}.b")
    return c.op(ops.AddOp, [left, right], part)


def _started(c: Composer, t: Tensor, i: int) -> Tensor:
    """Whether the step count is past the first step (t > 0)."""
    return c.op(ops.GreaterOp, [t, _const(c, 0.0, t.dtype)], f"started_{i}")


CONVERTERS: dict[str, Converter] = {"BatchNormalization": _batch_norm}
"""Default-domain converters; BatchNormalization takes over from `nn`'s, which it calls for inference."""

TRAINING_CONVERTERS: dict[str, Converter] = {
    f"{DOMAIN}::Adagrad": _adagrad,
    f"{DOMAIN}::Adam": _adam,
    f"{DOMAIN}::Momentum": _momentum,
}
