# ===- test/models/arch.py - torch modules for the exported fixtures ---------===#
# Small GPT-2, Llama and BERT style modules written in the eager style of the
# Hugging Face `transformers` implementations (GPT2Attention, LlamaAttention,
# BertSelfAttention as of transformers 4.31), so torch.onnx.export produces the
# graph shapes real users export. Run with Debian's /usr/bin/python3 (torch 1.13).
#
# Naming follows HF/Optimum: inputs `input_ids`, `attention_mask`,
# `position_ids`, `past_key_values.{i}.key/value`; outputs `logits`,
# `present.{i}.key/value`. Past/present KV are [batch, kv_heads, seq, head_dim].
import math

import torch
from torch import nn
import torch.nn.functional as F


# --------------------------------------------------------------------------- #
# Shared pieces
# --------------------------------------------------------------------------- #
class Conv1D(nn.Module):
    """HF GPT-2 Conv1D: y = addmm(b, x.view(-1, nx), W) with W [nx, nf]."""

    def __init__(self, nf, nx):
        super().__init__()
        self.nf = nf
        self.weight = nn.Parameter(torch.empty(nx, nf))
        self.bias = nn.Parameter(torch.zeros(nf))

    def forward(self, x):
        size_out = x.size()[:-1] + (self.nf,)
        x = torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight)
        return x.view(size_out)


def new_gelu(x):
    """HF `gelu_new` (GPT-2's own activation): tanh GELU written with pow(x, 3)."""
    return 0.5 * x * (1.0 + torch.tanh(
        math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


def sigmoid_gelu(x):
    """tanh GELU through 0.5 (1 + tanh(z)) = sigmoid(2 z): no Tanh in the graph."""
    return x * torch.sigmoid(2.0 * math.sqrt(2.0 / math.pi) * (x + 0.044715 * x * x * x))


def factored_tanh_gelu(x):
    """tanh GELU with the cubic factored, x (b + b k x^2), and 0.5 (1 + t)
    written 0.5 + 0.5 t."""
    b = math.sqrt(2.0 / math.pi)
    return x * (0.5 + 0.5 * torch.tanh(x * (b + b * 0.044715 * x * x)))


def exp_silu(x):
    """SiLU as x / (1 + exp(-x)): no Sigmoid in the graph."""
    return x / (1.0 + torch.exp(-x))


def tanh_silu(x):
    """SiLU through sigmoid(x) = 0.5 (1 + tanh(x / 2))."""
    return x * (0.5 + 0.5 * torch.tanh(0.5 * x))


def activation(kind):
    if kind == "erf":
        return lambda x: F.gelu(x)
    if kind == "tanh":  # torch's own tanh form: x * x * x chain when exported
        return lambda x: F.gelu(x, approximate="tanh")
    if kind == "new_gelu":
        return new_gelu
    if kind == "sigmoid_gelu":
        return sigmoid_gelu
    if kind == "factored_tanh":
        return factored_tanh_gelu
    if kind == "silu":
        return F.silu
    if kind == "exp_silu":
        return exp_silu
    if kind == "tanh_silu":
        return tanh_silu
    raise ValueError(kind)


def randomize_(module, std=0.02, seed=0):
    """Random weights for the random-weight fixtures. Norm gains and biases are
    random too (not 1 and 0), so a fusion that drops or swaps them shows up in
    the reference outputs."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for _, mod in module.named_modules():
            is_norm = isinstance(mod, nn.LayerNorm) or type(mod).__name__.endswith("RMSNorm")
            for pname, p in mod.named_parameters(recurse=False):
                if is_norm and pname == "weight":
                    p.copy_(1.0 + 0.1 * torch.randn(p.shape, generator=g))
                elif pname == "bias":
                    p.copy_(0.02 * torch.randn(p.shape, generator=g))
                else:
                    p.copy_(std * torch.randn(p.shape, generator=g))
    return module


# --------------------------------------------------------------------------- #
# GPT-2
# --------------------------------------------------------------------------- #
class GPT2Config:
    def __init__(self, vocab=256, n_positions=128, hidden=64, layers=2, heads=4,
                 act="erf", eps=1e-5, variant=None):
        self.vocab, self.n_positions, self.hidden = vocab, n_positions, hidden
        self.layers, self.heads, self.act, self.eps = layers, heads, act, eps
        # Spelling knobs for the scripted variants (gen_torch_fixtures.py):
        #   scale: "div" (HF) | "mul" | "split" (q and k^T each * d^-1/4, as
        #          torch's SDPA export) | "pre_q" (q * d^-1/2 before the MatMul)
        #   mask:  "where" (HF bool buffer) | "triu_add" (additive triu(-inf)
        #          causal, -10000 padding, mask added first) | "masked_fill"
        #   operands: "swap" writes residual adds, GELU (erf via Mul(0.7071))
        #          and LayerNorm (Mul(x - mean) self, rsqrt) the other way round
        self.variant = dict(variant or {})


class GPT2Attention(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        n = cfg.n_positions
        self.register_buffer(
            "bias", torch.tril(torch.ones((n, n), dtype=torch.bool)).view(1, 1, n, n),
            persistent=False)
        self.heads, self.head_dim = cfg.heads, cfg.hidden // cfg.heads
        self.split_size = cfg.hidden
        self.variant = cfg.variant
        self.c_attn = Conv1D(3 * cfg.hidden, cfg.hidden)
        self.c_proj = Conv1D(cfg.hidden, cfg.hidden)

    def _split_heads(self, t):
        t = t.view(t.size()[:-1] + (self.heads, self.head_dim))
        return t.permute(0, 2, 1, 3)

    def forward(self, x, layer_past=None, attention_mask=None):
        query, key, value = self.c_attn(x).split(self.split_size, dim=2)
        query, key, value = map(self._split_heads, (query, key, value))
        if layer_past is not None:
            key = torch.cat((layer_past[0], key), dim=-2)
            value = torch.cat((layer_past[1], value), dim=-2)
        present = (key, value)
        scale, mask = self.variant.get("scale", "div"), self.variant.get("mask", "where")
        if scale == "split":
            s = self.head_dim ** -0.25
            w = torch.matmul(query * s, key.transpose(-1, -2) * s)
        elif scale == "pre_q":
            w = torch.matmul(query * (self.head_dim ** -0.5), key.transpose(-1, -2))
        elif scale == "mul":
            w = torch.matmul(query, key.transpose(-1, -2)) * (1.0 / math.sqrt(self.head_dim))
        else:
            w = torch.matmul(query, key.transpose(-1, -2))
            w = w / torch.full([], value.size(-1) ** 0.5, dtype=w.dtype)
        q_len, k_len = query.size(-2), key.size(-2)
        causal = self.bias[:, :, k_len - q_len:k_len, :k_len]
        if mask == "triu_add":
            add = torch.triu(torch.full((q_len, k_len), float("-inf")), diagonal=1)
            w = add + w
            if attention_mask is not None:
                w = attention_mask + w
        elif mask == "masked_fill":
            w = w.masked_fill(causal == 0, float("-inf"))
            if attention_mask is not None:
                w = w + attention_mask
        else:
            mask_value = torch.full([], torch.finfo(w.dtype).min, dtype=w.dtype)
            w = torch.where(causal, w, mask_value)
            if attention_mask is not None:
                w = w + attention_mask
        w = F.softmax(w, dim=-1)
        out = torch.matmul(w, value)
        out = out.permute(0, 2, 1, 3).contiguous()
        out = out.view(out.size()[:-2] + (self.heads * self.head_dim,))
        return self.c_proj(out), present


class SwappedLayerNorm(nn.LayerNorm):
    """LayerNorm spelled by hand: Mul(d, d) variance, rsqrt, gain on the left."""

    def forward(self, x):
        mean = x.mean(-1, keepdim=True)
        d = x - mean
        var = (d * d).mean(-1, keepdim=True)
        return self.bias + self.weight * (d * torch.rsqrt(var + self.eps))


def swapped_gelu(x):
    """erf GELU as x * 0.5 * (1 + erf(x * 0.70710678)): TF-style constant."""
    return x * 0.5 * (1.0 + torch.erf(x * 0.7071067811865476))


class GPT2Block(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.swap = cfg.variant.get("operands") == "swap"
        LN = SwappedLayerNorm if self.swap else nn.LayerNorm
        self.ln_1 = LN(cfg.hidden, eps=cfg.eps)
        self.attn = GPT2Attention(cfg)
        self.ln_2 = LN(cfg.hidden, eps=cfg.eps)
        self.c_fc = Conv1D(4 * cfg.hidden, cfg.hidden)
        self.c_proj = Conv1D(cfg.hidden, 4 * cfg.hidden)
        self.act = swapped_gelu if self.swap else activation(cfg.act)

    def forward(self, x, layer_past=None, attention_mask=None):
        a, present = self.attn(self.ln_1(x), layer_past, attention_mask)
        if self.swap:
            x = x + a
            x = self.c_proj(self.act(self.c_fc(self.ln_2(x)))) + x
        else:
            x = a + x
            x = x + self.c_proj(self.act(self.c_fc(self.ln_2(x))))
        return x, present


class GPT2LMHeadModel(nn.Module):
    """Pre-LN GPT-2 with learned positions and a tied LM head.

    forward(input_ids, attention_mask=None, *past) -> (logits, *presents):
    `past` is the flat list key0, value0, key1, value1, ...
    """

    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.wte = nn.Embedding(cfg.vocab, cfg.hidden)
        self.wpe = nn.Embedding(cfg.n_positions, cfg.hidden)
        self.h = nn.ModuleList(GPT2Block(cfg) for _ in range(cfg.layers))
        self.ln_f = (SwappedLayerNorm if cfg.variant.get("operands") == "swap"
                     else nn.LayerNorm)(cfg.hidden, eps=cfg.eps)

    def forward(self, input_ids, attention_mask=None, *past):
        past_length = past[0].size(-2) if past else 0
        seq = input_ids.size(-1)
        position_ids = torch.arange(past_length, seq + past_length,
                                    dtype=torch.long).unsqueeze(0)
        x = self.wte(input_ids) + self.wpe(position_ids)
        if attention_mask is not None:
            m = attention_mask.view(input_ids.size(0), -1)[:, None, None, :]
            mask = self.cfg.variant.get("mask", "where")
            if mask == "triu_add":  # BERT-era constant
                attention_mask = (1.0 - m.to(dtype=x.dtype)) * -10000.0
            elif mask == "masked_fill":
                attention_mask = torch.zeros_like(m, dtype=x.dtype).masked_fill(
                    m == 0, torch.finfo(x.dtype).min)
            else:
                m = m.to(dtype=x.dtype)
                attention_mask = (1.0 - m) * torch.finfo(x.dtype).min
        presents = []
        for i, block in enumerate(self.h):
            lp = (past[2 * i], past[2 * i + 1]) if past else None
            x, pr = block(x, lp, attention_mask)
            presents.extend(pr)
        x = self.ln_f(x)
        logits = torch.matmul(x, self.wte.weight.t())
        return (logits, *presents)


# --------------------------------------------------------------------------- #
# Llama
# --------------------------------------------------------------------------- #
class LlamaConfig:
    def __init__(self, vocab=256, max_positions=128, hidden=64, layers=2, heads=4,
                 kv_heads=2, intermediate=176, eps=1e-6, rope_theta=10000.0,
                 variant=None):
        self.vocab, self.max_positions, self.hidden = vocab, max_positions, hidden
        self.layers, self.heads, self.kv_heads = layers, heads, kv_heads
        self.intermediate, self.eps, self.rope_theta = intermediate, eps, rope_theta
        # Spelling knobs for the scripted variants (gen_torch_fixtures.py):
        #   scale: "div" (HF) | "qk" (q and k each * d^-1/4 before the MatMul,
        #          k after the cache and before repeat_kv)
        #   clamp: max(scores + mask, finfo.min) before the softmax, as older
        #          transformers Llama/OPT code does
        #   kv_repeat: "expand" (repeat_kv) | "tile_concat" (K unsqueezed and
        #          Tiled, V as a Concat of copies, both merged by Reshape)
        #   act: per-layer SiLU spellings, e.g. ["exp_silu", "tanh_silu"]
        self.variant = dict(variant or {})


class LlamaRMSNorm(nn.Module):
    def __init__(self, hidden, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden))
        self.variance_epsilon = eps

    def forward(self, h):
        dtype = h.dtype
        h = h.to(torch.float32)
        variance = h.pow(2).mean(-1, keepdim=True)
        h = h * torch.rsqrt(variance + self.variance_epsilon)
        return self.weight * h.to(dtype)


class LlamaRotaryEmbedding(nn.Module):
    def __init__(self, dim, max_positions, base):
        super().__init__()
        inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim))
        t = torch.arange(max_positions, dtype=inv_freq.dtype)
        freqs = torch.einsum("i,j->ij", t, inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        self.register_buffer("cos_cached", emb.cos()[None, None], persistent=False)
        self.register_buffer("sin_cached", emb.sin()[None, None], persistent=False)

    def forward(self, x, seq_len):
        return (self.cos_cached[:, :, :seq_len, ...].to(dtype=x.dtype),
                self.sin_cached[:, :, :seq_len, ...].to(dtype=x.dtype))


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary_pos_emb(q, k, cos, sin, position_ids):
    cos = cos.squeeze(1).squeeze(0)[position_ids].unsqueeze(1)  # [b, 1, s, d]
    sin = sin.squeeze(1).squeeze(0)[position_ids].unsqueeze(1)
    return (q * cos) + (rotate_half(q) * sin), (k * cos) + (rotate_half(k) * sin)


def repeat_kv(h, n_rep, how="expand"):
    b, kvh, slen, d = h.shape
    if n_rep == 1:
        return h
    if how == "tile":
        h = h[:, :, None, :, :].repeat(1, 1, n_rep, 1, 1)
    elif how == "concat":
        h = torch.cat([h[:, :, None, :, :]] * n_rep, dim=2)
    else:
        h = h[:, :, None, :, :].expand(b, kvh, n_rep, slen, d)
    return h.reshape(b, kvh * n_rep, slen, d)


class LlamaAttention(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.heads, self.kv_heads = cfg.heads, cfg.kv_heads
        self.head_dim = cfg.hidden // cfg.heads
        self.hidden = cfg.hidden
        self.q_proj = nn.Linear(cfg.hidden, cfg.heads * self.head_dim, bias=False)
        self.k_proj = nn.Linear(cfg.hidden, cfg.kv_heads * self.head_dim, bias=False)
        self.v_proj = nn.Linear(cfg.hidden, cfg.kv_heads * self.head_dim, bias=False)
        self.o_proj = nn.Linear(cfg.heads * self.head_dim, cfg.hidden, bias=False)
        self.rotary_emb = LlamaRotaryEmbedding(self.head_dim, cfg.max_positions,
                                               cfg.rope_theta)
        self.variant = cfg.variant

    def forward(self, x, attention_mask, position_ids, past=None):
        bsz, q_len, _ = x.size()
        q = self.q_proj(x).view(bsz, q_len, self.heads, self.head_dim).transpose(1, 2)
        k = self.k_proj(x).view(bsz, q_len, self.kv_heads, self.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(bsz, q_len, self.kv_heads, self.head_dim).transpose(1, 2)
        kv_seq_len = k.shape[-2]
        if past is not None:
            kv_seq_len = kv_seq_len + past[0].shape[-2]
        cos, sin = self.rotary_emb(v, seq_len=kv_seq_len)
        q, k = apply_rotary_pos_emb(q, k, cos, sin, position_ids)
        if past is not None:
            k = torch.cat([past[0], k], dim=2)
            v = torch.cat([past[1], v], dim=2)
        present = (k, v)
        n_rep = self.heads // self.kv_heads
        qk_scale = self.variant.get("scale") == "qk"
        if qk_scale:
            s = self.head_dim ** -0.25
            q, k = q * s, k * s
        tiled = self.variant.get("kv_repeat") == "tile_concat"
        k = repeat_kv(k, n_rep, "tile" if tiled else "expand")
        v = repeat_kv(v, n_rep, "concat" if tiled else "expand")
        w = torch.matmul(q, k.transpose(2, 3))
        if not qk_scale:
            w = w / math.sqrt(self.head_dim)
        w = w + attention_mask
        if self.variant.get("clamp"):
            w = torch.max(w, torch.tensor(torch.finfo(w.dtype).min))
        w = F.softmax(w, dim=-1, dtype=torch.float32).to(q.dtype)
        out = torch.matmul(w, v)
        out = out.transpose(1, 2).contiguous().reshape(bsz, q_len, self.hidden)
        return self.o_proj(out), present


class LlamaMLP(nn.Module):
    def __init__(self, cfg, act="silu"):
        super().__init__()
        self.gate_proj = nn.Linear(cfg.hidden, cfg.intermediate, bias=False)
        self.up_proj = nn.Linear(cfg.hidden, cfg.intermediate, bias=False)
        self.down_proj = nn.Linear(cfg.intermediate, cfg.hidden, bias=False)
        self.act = activation(act)

    def forward(self, x):
        return self.down_proj(self.act(self.gate_proj(x)) * self.up_proj(x))


class LlamaDecoderLayer(nn.Module):
    def __init__(self, cfg, index=0):
        super().__init__()
        self.self_attn = LlamaAttention(cfg)
        acts = cfg.variant.get("act", ["silu"])
        self.mlp = LlamaMLP(cfg, acts[index % len(acts)])
        self.input_layernorm = LlamaRMSNorm(cfg.hidden, cfg.eps)
        self.post_attention_layernorm = LlamaRMSNorm(cfg.hidden, cfg.eps)

    def forward(self, x, attention_mask, position_ids, past=None):
        a, present = self.self_attn(self.input_layernorm(x), attention_mask,
                                    position_ids, past)
        x = x + a
        x = x + self.mlp(self.post_attention_layernorm(x))
        return x, present


def _make_causal_mask(bsz, tgt_len, dtype, past_len):
    mask = torch.full((tgt_len, tgt_len), torch.finfo(dtype).min)
    cond = torch.arange(mask.size(-1))
    mask.masked_fill_(cond < (cond + 1).view(mask.size(-1), 1), 0)
    mask = mask.to(dtype)
    if past_len is not None:
        mask = torch.cat([torch.zeros(tgt_len, past_len, dtype=dtype), mask], dim=-1)
        return mask[None, None, :, :].expand(bsz, 1, tgt_len, tgt_len + past_len)
    return mask[None, None, :, :].expand(bsz, 1, tgt_len, tgt_len)


def _expand_mask(mask, dtype, tgt_len):
    bsz, src_len = mask.size()
    expanded = mask[:, None, None, :].expand(bsz, 1, tgt_len, src_len).to(dtype)
    inverted = 1.0 - expanded
    return inverted.masked_fill(inverted.to(torch.bool), torch.finfo(dtype).min)


class LlamaForCausalLM(nn.Module):
    """forward(input_ids, attention_mask, position_ids, *past) -> (logits, *presents)."""

    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.embed_tokens = nn.Embedding(cfg.vocab, cfg.hidden)
        self.layers = nn.ModuleList(LlamaDecoderLayer(cfg, i) for i in range(cfg.layers))
        self.norm = LlamaRMSNorm(cfg.hidden, cfg.eps)
        self.lm_head = nn.Linear(cfg.hidden, cfg.vocab, bias=False)

    def forward(self, input_ids, attention_mask, position_ids, *past):
        bsz, seq = input_ids.shape
        x = self.embed_tokens(input_ids)
        past_len = past[0].shape[2] if past else None
        mask = _make_causal_mask(bsz, seq, x.dtype, past_len)
        mask = _expand_mask(attention_mask, x.dtype, seq) + mask
        presents = []
        for i, layer in enumerate(self.layers):
            lp = (past[2 * i], past[2 * i + 1]) if past else None
            x, pr = layer(x, mask, position_ids, lp)
            presents.extend(pr)
        logits = self.lm_head(self.norm(x)).float()
        return (logits, *presents)


# --------------------------------------------------------------------------- #
# BERT
# --------------------------------------------------------------------------- #
class BertConfig:
    def __init__(self, vocab=256, max_positions=128, type_vocab=2, hidden=64,
                 layers=2, heads=4, intermediate=256, eps=1e-12, act="erf"):
        self.vocab, self.max_positions, self.type_vocab = vocab, max_positions, type_vocab
        self.hidden, self.layers, self.heads = hidden, layers, heads
        self.intermediate, self.eps, self.act = intermediate, eps, act


class BertLayer(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.heads, self.head_dim = cfg.heads, cfg.hidden // cfg.heads
        self.query = nn.Linear(cfg.hidden, cfg.hidden)
        self.key = nn.Linear(cfg.hidden, cfg.hidden)
        self.value = nn.Linear(cfg.hidden, cfg.hidden)
        self.attn_out = nn.Linear(cfg.hidden, cfg.hidden)
        self.attn_LayerNorm = nn.LayerNorm(cfg.hidden, eps=cfg.eps)
        self.intermediate = nn.Linear(cfg.hidden, cfg.intermediate)
        self.output = nn.Linear(cfg.intermediate, cfg.hidden)
        self.out_LayerNorm = nn.LayerNorm(cfg.hidden, eps=cfg.eps)
        self.act = activation(cfg.act)

    def _scores(self, x):
        x = x.view(x.size()[:-1] + (self.heads, self.head_dim))
        return x.permute(0, 2, 1, 3)

    def forward(self, x, ext_mask):
        q = self._scores(self.query(x))
        k = self._scores(self.key(x))
        v = self._scores(self.value(x))
        s = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim)
        s = s + ext_mask
        p = F.softmax(s, dim=-1)
        c = torch.matmul(p, v).permute(0, 2, 1, 3).contiguous()
        c = c.view(c.size()[:-2] + (self.heads * self.head_dim,))
        x = self.attn_LayerNorm(self.attn_out(c) + x)  # post-LN
        return self.out_LayerNorm(self.output(self.act(self.intermediate(x))) + x)


class BertModel(nn.Module):
    """forward(input_ids, attention_mask, token_type_ids) -> last_hidden_state."""

    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.word_embeddings = nn.Embedding(cfg.vocab, cfg.hidden)
        self.position_embeddings = nn.Embedding(cfg.max_positions, cfg.hidden)
        self.token_type_embeddings = nn.Embedding(cfg.type_vocab, cfg.hidden)
        self.emb_LayerNorm = nn.LayerNorm(cfg.hidden, eps=cfg.eps)
        self.layer = nn.ModuleList(BertLayer(cfg) for _ in range(cfg.layers))

    def forward(self, input_ids, attention_mask, token_type_ids):
        seq = input_ids.size(1)
        pos = torch.arange(seq, dtype=torch.long).unsqueeze(0)
        x = (self.word_embeddings(input_ids) + self.token_type_embeddings(token_type_ids)
             + self.position_embeddings(pos))
        x = self.emb_LayerNorm(x)
        ext = attention_mask[:, None, None, :].to(dtype=x.dtype)
        ext = (1.0 - ext) * torch.finfo(x.dtype).min
        for layer in self.layer:
            x = layer(x, ext)
        return x
