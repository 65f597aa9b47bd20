"""Decompositions of the fused kernels of torch's inference fast path, which `torch.compile`
captures as they are: an `nn.TransformerEncoderLayer` run without autograd (`batch_first`,
eval) calls `_transformer_encoder_layer_fwd`, which torch's table leaves whole. Written in torch
ops, which the export lowers to the core ATen ops the converters take.
"""

from __future__ import annotations

from typing import Any


def transformer_encoder_layer(
    src: Any,
    embed_dim: int,
    num_heads: int,
    qkv_weight: Any,
    qkv_bias: Any,
    proj_weight: Any,
    proj_bias: Any,
    use_gelu: bool,
    norm_first: bool,
    eps: float,
    norm_weight_1: Any,
    norm_bias_1: Any,
    norm_weight_2: Any,
    norm_bias_2: Any,
    ffn_weight_1: Any,
    ffn_bias_1: Any,
    ffn_weight_2: Any,
    ffn_bias_2: Any,
    mask: Any = None,
    mask_type: int | None = None,
) -> Any:
    """`aten._transformer_encoder_layer_fwd`: self-attention and a feed-forward block over
    batch-first `src`, each with a residual and a layer norm (before with `norm_first`). `mask`
    is the attention mask (`mask_type` 0, length x length), the key padding mask (1, batch x
    length) or both merged (2, batch x heads x length x length); True (or -inf) masks out."""
    import torch
    from torch.nn import functional as F

    batch, length, _ = src.shape
    head_dim = embed_dim // num_heads
    bias = None
    if mask is not None:
        bias = mask.view(batch, 1, 1, length) if mask_type == 1 else mask
        if bias.dtype == torch.bool:
            bias = torch.zeros(bias.shape, dtype=src.dtype).masked_fill(bias, float("-inf"))

    def attention(x: Any) -> Any:
        qkv = F.linear(x, qkv_weight, qkv_bias).view(batch, length, 3, num_heads, head_dim)
        q, k, v = qkv.permute(2, 0, 3, 1, 4).unbind(0)
        attended = F.scaled_dot_product_attention(q, k, v, attn_mask=bias)
        return F.linear(attended.transpose(1, 2).reshape(batch, length, embed_dim), proj_weight, proj_bias)

    def feed_forward(x: Any) -> Any:
        hidden = F.linear(x, ffn_weight_1, ffn_bias_1)
        return F.linear(F.gelu(hidden) if use_gelu else F.relu(hidden), ffn_weight_2, ffn_bias_2)

    def norm(x: Any, weight: Any, shift: Any) -> Any:
        return F.layer_norm(x, (embed_dim,), weight, shift, eps)

    if norm_first:
        x = src + attention(norm(src, norm_weight_1, norm_bias_1))
        return x + feed_forward(norm(x, norm_weight_2, norm_bias_2))
    x = norm(src + attention(src), norm_weight_1, norm_bias_1)
    return norm(x + feed_forward(x), norm_weight_2, norm_bias_2)


DECOMPOSITIONS: dict[str, Any] = {
    "aten._transformer_encoder_layer_fwd.default": transformer_encoder_layer,
}
"""The fast path's fused kernels by ATen overload name, with their decompositions."""
