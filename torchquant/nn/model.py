"""quantize_model: replace nn.Linear modules in place; save/load with safetensors."""

from __future__ import annotations

import fnmatch
import sys
import warnings
from typing import Dict, Iterable, Mapping, Optional, Union

import torch
from torch import nn

from torchquant.nn.linear import (_DTYPE_LAYOUTS, FORMATS, K_MULTIPLE, QuantLinear, fp8_tiled_ok, layer_dtype,
                                   w8a8_prefill_ok)

Config = Union[str, Dict]


def _matches(name: str, patterns: Iterable[str]) -> bool:
    return any(fnmatch.fnmatchcase(name, p) for p in patterns)


def _aliases(model: nn.Module, kind: type = nn.Module) -> Dict[int, list]:
    """id(module) -> every name it is registered under in `model` (a shared or tied module has
    several), for the modules of type `kind`."""
    out: Dict[int, list] = {}
    for n, m in model.named_modules(remove_duplicate=False):
        if isinstance(m, kind):
            out.setdefault(id(m), []).append(n)
    return out


def _replace(model: nn.Module, name: str, module: nn.Module) -> None:
    parent_name, _, child = name.rpartition(".")
    parent = model.get_submodule(parent_name) if parent_name else model
    setattr(parent, child, module)


def _progress(items, desc: str, enabled: bool):
    if not enabled:
        return items
    try:
        from tqdm.auto import tqdm

        return tqdm(items, desc=desc, leave=False)
    except ImportError:
        total = len(items)

        def gen():
            for i, it in enumerate(items, 1):
                sys.stderr.write(f"\r{desc}: {i}/{total}")
                yield it
            sys.stderr.write("\n")

        return gen()


@torch.no_grad()
def quantize_model(model: nn.Module, config: Config = "int8", *, progress: bool = True) -> nn.Module:
    """Replace every nn.Linear of `model` with a QuantLinear, in place.

    config: a format name ("int8", "fp8_block", "nvfp4", "sparse24", "int8_sparse24"), or a dict with
      "format":    the default format,
      "skip":      glob patterns of module names to leave as nn.Linear
                   (e.g. ["lm_head", "*.gate"]),
      "overrides": {pattern: {"format": ..., "block_size": ..., "act_symmetric": ...}} (or
                   {pattern: format name}); "skip" may also be a single pattern,
      plus any QuantLinear.from_float option ("block_size", "act_symmetric", "prefill", "dtype",
      "nvfp4_layout", "static_weights", "fp8_tiled") applied to all layers (nvfp4_layout: "auto", the default,
      keeps each nvfp4 layer's weight in its dtype's decode order on sm_80+ GPUs, see QuantLinear;
      "decode" pins that order, 0 the formats.md packing; 1 / 3 and 2 apply to the nvfp4 layers of
      dtype bf16 and fp16 only; static_weights=True: see QuantLinear and set_static_weights;
      fp8_tiled=True: the fp8_block layers that can hold it keep the tiled order, the others rows).
    Layers whose shape the format cannot hold (K not a multiple of 16 for
    fp8_block / nvfp4, of 4 for sparse24 / int8_sparse24) are skipped with a
    warning rather than failing.
    Returns the model.
    """
    if not isinstance(config, (str, Mapping)):
        raise TypeError(f"quantize_model: config must be a format name or a dict, got {type(config).__name__}")
    cfg = {"format": config} if isinstance(config, str) else dict(config)
    default_fmt = cfg.pop("format", "int8")
    option_keys = {"block_size", "act_symmetric", "prefill", "dtype", "nvfp4_layout", "static_weights", "fp8_tiled"}
    skip = cfg.pop("skip", [])
    if isinstance(skip, str):
        skip = [skip]  # one pattern, not its characters
    if not isinstance(skip, (list, tuple, set)) or not all(isinstance(p, str) for p in skip):
        raise TypeError(f"quantize_model: 'skip' must be a pattern or a list of patterns, got {skip!r}")
    skip = list(skip)
    raw_overrides = cfg.pop("overrides", {})
    if not isinstance(raw_overrides, Mapping):
        raise TypeError(f"quantize_model: 'overrides' must be a dict {{pattern: format or options}}, got {raw_overrides!r}")
    overrides: Dict[str, Dict] = {}
    for pat, ov in raw_overrides.items():
        ov = {"format": ov} if isinstance(ov, str) else ov  # {"lm_head": "fp8_block"} shorthand
        if not isinstance(pat, str) or not isinstance(ov, Mapping):
            raise TypeError(f"quantize_model: overrides[{pat!r}] must be a format name or a dict of options, got {ov!r}")
        bad = set(ov) - option_keys - {"format"}
        if bad:
            raise ValueError(f"quantize_model: unknown keys {sorted(bad)} in overrides[{pat!r}]")
        if "format" in ov and ov["format"] not in FORMATS:
            raise ValueError(f"quantize_model: overrides[{pat!r}] format must be one of {FORMATS}, got {ov['format']!r}")
        overrides[pat] = dict(ov)
    unknown = set(cfg) - option_keys
    if unknown:
        raise ValueError(f"quantize_model: unknown config keys {sorted(unknown)}")
    if default_fmt not in FORMATS:
        raise ValueError(f"quantize_model: format must be one of {FORMATS}, got {default_fmt!r}")
    if isinstance(model, nn.Linear):
        raise ValueError("quantize_model: the model is itself an nn.Linear, which cannot be replaced in place; "
                         "use QuantLinear.from_float")
    # Every name of every nn.Linear: a module registered under several names (shared, tied) is
    # quantized once, and each of its names gets that one QuantLinear.
    aliases = _aliases(model, nn.Linear)
    linears = [(n, m) for n, m in model.named_modules() if isinstance(m, nn.Linear)]
    all_names = [n for names in aliases.values() for n in names]
    # A pattern that names no nn.Linear is most often a typo in a module path: say so.
    for what, pats in (("skip", skip), ("overrides", list(overrides))):
        unused = [p for p in pats if not any(_matches(n, [p]) for n in all_names)]
        if unused:
            warnings.warn(f"quantize_model: {what} pattern(s) {unused} match no nn.Linear of the model "
                          f"(names look like {[n for n, _ in linears[:2]]})")
    if not linears:
        others = sorted({type(m).__name__ for m in model.modules() if "Linear" in type(m).__name__ or
                         type(m).__name__ == "Conv1D"} - {"QuantLinear"})
        warnings.warn("quantize_model: the model has no nn.Linear to quantize"
                      + (f" (it has {others}, which are not nn.Linear subclasses)" if others else ""))
    # a shared module stays float if any of its names is skipped
    targets = [(n, m) for n, m in linears if not any(_matches(a, skip) for a in aliases[id(m)])]
    for name, lin in _progress(targets, "quantize_model", progress):
        opts = dict(cfg)
        fmt = default_fmt
        for pat, ov in overrides.items():
            if fnmatch.fnmatchcase(name, pat):
                ov = dict(ov)
                fmt = ov.pop("format", fmt)
                opts.update(ov)
        if opts.get("prefill") == "w8a8" and not w8a8_prefill_ok(
                fmt, opts.get("block_size", 128), lin.in_features, lin.out_features):
            # w8a8 prefill is an fp8_block option for whole 1 x 128 blocks
            # (QuantLinear raises for anything else): other layers keep the
            # default prefill rather than failing the whole model.
            warnings.warn(f"quantize_model: {name} ({fmt}, {lin.out_features}x{lin.in_features}) cannot take "
                          "prefill='w8a8'; it uses prefill='dequant'")
            opts["prefill"] = "dequant"
        mult = K_MULTIPLE.get(fmt, 1)
        if lin.in_features % mult:
            warnings.warn(f"quantize_model: {name} has in_features={lin.in_features}, not a multiple of {mult} "
                          f"({fmt}); left unquantized")
            continue
        if opts.get("fp8_tiled") and not fp8_tiled_ok(fmt, opts.get("block_size", 128), lin.in_features,
                                                      lin.out_features, opts.get("prefill", "dequant")):
            # the tiled order is an fp8_block option for whole tiles (QuantLinear raises for anything
            # else): other formats ignore it, fp8_block layers that cannot hold it keep rows
            if fmt == "fp8_block":
                warnings.warn(f"quantize_model: {name} (fp8_block, {lin.out_features}x{lin.in_features}) cannot "
                              "take fp8_tiled=True (out_features % 16, in_features % 64, block_size % 64, not with "
                              "prefill='w8a8'); it keeps the row-major weight")
            opts.pop("fp8_tiled")
        lay = opts.get("nvfp4_layout", 0)
        if lay in (1, 2, 3) and (fmt != "nvfp4" or
                                 lay not in _DTYPE_LAYOUTS.get(layer_dtype(lin.weight.dtype, opts.get("dtype")), ())):
            opts.pop("nvfp4_layout")  # a decode order applies to nvfp4 layers of its dtype only
        q = QuantLinear.from_float(lin, fmt, **opts)
        for alias in aliases[id(lin)]:
            _replace(model, alias, q)
    return model


def set_static_weights(model: nn.Module, enabled: bool = True) -> int:
    """Set static_weights on every QuantLinear of `model` (e.g. after load_quantized or
    load_prequantized): the promise that their weights are not written on the GPU between calls
    except through the layers themselves, which lets the sm_90 decode GEMVs of fp8_block, nvfp4,
    int8 and int8_sparse24 layers start loading the weight before the kernel just before them
    finishes (QuantLinear's docstring). Returns the number of layers set. The flag is not saved
    with the weights."""
    n = 0
    for m in model.modules():
        if isinstance(m, QuantLinear):
            m.static_weights = enabled
            n += 1
    return n


def _layer_meta(model: nn.Module) -> Dict[str, str]:
    meta = {}
    for n, m in model.named_modules():
        if isinstance(m, QuantLinear):
            # format | block_size | act_symmetric | dtype | prefill | nvfp4_layout [| fp8_tiled] (files
            # written before the fifth and sixth fields existed load with "dequant" and 0; the seventh,
            # 1, is written for fp8_tiled layers only, so other files stay readable by older versions)
            meta[f"torchquant.{n}"] = (f"{m.format}|{m.block_size}|{int(m.act_symmetric)}|{str(m.dtype).split('.')[-1]}"
                                       f"|{m.prefill}|{'auto' if m.nvfp4_auto else m.nvfp4_layout}"
                                       + ("|1" if m.fp8_tiled else ""))
    return meta


def save_quantized(model: nn.Module, path: str) -> None:
    """Save the state_dict with safetensors, recording each QuantLinear's format in the metadata."""
    from safetensors.torch import save_file

    sd, seen = {}, set()
    for k, v in model.state_dict().items():
        # safetensors refuses tensors that share memory (a tied embedding / lm_head left float):
        # each later name gets its own copy; loading fills the model's shared tensor twice
        key = v.untyped_storage().data_ptr() if v.numel() else None
        sd[k] = v.clone().contiguous() if key in seen else v.contiguous()
        if key is not None:
            seen.add(key)
    save_file(sd, path, metadata=_layer_meta(model))


def load_quantized(model: nn.Module, path: str, device: Optional[Union[str, torch.device]] = None) -> nn.Module:
    """Load a file written by save_quantized into `model` (the float model of the same architecture,
    possibly built on the meta device, or one quantized already): each recorded layer is first
    replaced by an empty QuantLinear of the recorded configuration (a QuantLinear configured
    otherwise is replaced too), then the tensors load."""
    from safetensors import safe_open
    from safetensors.torch import load_file

    with safe_open(path, framework="pt") as f:
        meta = f.metadata() or {}
        keys = set(f.keys())
    aliases = _aliases(model)  # a module registered under several names is replaced under each
    for key, val in meta.items():
        if not key.startswith("torchquant."):
            continue
        name = key[len("torchquant."):]
        cfg = _parse_layer_meta(key, val)
        if not name:
            raise ValueError(f"load_quantized: {path} holds a single QuantLinear (metadata key {key!r}); load it "
                             "into a QuantLinear with load_state_dict, not into a model")
        try:
            lin = model.get_submodule(name)
        except AttributeError:
            raise ValueError(f"load_quantized: {path} records layer {name!r} (metadata {key!r}), which "
                             f"{type(model).__name__} does not have") from None
        if isinstance(lin, QuantLinear):
            same = (lin.format, lin.block_size, lin.act_symmetric, lin.dtype, lin.prefill) == (
                cfg["format"], cfg["block_size"], cfg["act_symmetric"], cfg["dtype"], cfg["prefill"]) and (
                (lin.nvfp4_auto and cfg["nvfp4_layout"] == "auto") or lin.nvfp4_layout == cfg["nvfp4_layout"]) and (
                lin.fp8_tiled == cfg["fp8_tiled"])
            if same:
                continue
            dev = next(iter(lin.buffers())).device
        elif isinstance(lin, nn.Linear):
            dev = lin.weight.device
        else:
            raise ValueError(f"load_quantized: {path} records layer {name!r} as {cfg['format']}, but it is a "
                             f"{type(lin).__name__} in the model, not an nn.Linear")
        has_bias = f"{name}.bias" in keys
        q = QuantLinear(lin.in_features, lin.out_features, has_bias, cfg["format"], block_size=cfg["block_size"],
                        act_symmetric=cfg["act_symmetric"], prefill=cfg["prefill"], dtype=cfg["dtype"],
                        nvfp4_layout=cfg["nvfp4_layout"], fp8_tiled=cfg["fp8_tiled"], device=dev)
        for alias in aliases.get(id(lin), [name]):
            _replace(model, alias, q)
    sd = load_file(path, device=str(device) if device is not None else "cpu")
    # A model built on the meta device takes the file's tensors themselves (assign).
    on_meta = any(t.is_meta for t in list(model.parameters()) + list(model.buffers()))
    model.load_state_dict(sd, strict=True, assign=on_meta)
    if device is not None:
        model.to(device)
    return model


def _parse_layer_meta(key: str, val: str) -> Dict[str, object]:
    """One save_quantized metadata entry: format | block_size | act_symmetric | dtype [| prefill
    [| nvfp4_layout [| fp8_tiled]]] (files written before the fifth and sixth fields existed have
    four; the seventh is there for fp8_tiled layers)."""
    def bad(why: str) -> ValueError:
        return ValueError(f"load_quantized: metadata {key!r} = {val!r}: {why}")

    fields = val.split("|") if isinstance(val, str) else []
    if not 4 <= len(fields) <= 7:
        raise bad("expected format|block_size|act_symmetric|dtype[|prefill[|nvfp4_layout[|fp8_tiled]]]")
    fmt, bs, sym, dt = fields[:4]
    prefill = fields[4] if len(fields) > 4 else "dequant"
    layout = fields[5] if len(fields) > 5 else "0"
    tiled = fields[6] if len(fields) > 6 else "0"
    if fmt not in FORMATS:
        raise bad(f"format must be one of {FORMATS}")
    if not bs.isdigit():
        raise bad("block_size must be a decimal integer")
    if sym not in ("0", "1"):
        raise bad("act_symmetric must be 0 or 1")
    dtype = getattr(torch, dt, None)
    if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
        raise bad(f"dtype {dt!r} is not a torch float dtype")
    if prefill not in ("dequant", "w8a8"):
        raise bad("prefill must be 'dequant' or 'w8a8'")
    if layout not in ("auto", "0", "1", "2", "3"):
        raise bad("nvfp4_layout must be auto, 0, 1, 2 or 3")
    if tiled not in ("0", "1"):
        raise bad("fp8_tiled must be 0 or 1")
    return {"format": fmt, "block_size": int(bs), "act_symmetric": sym == "1", "dtype": dtype,
            "prefill": prefill, "nvfp4_layout": layout if layout == "auto" else int(layout),
            "fp8_tiled": tiled == "1"}


@torch.no_grad()
def load_prequantized(model: nn.Module, state_dict: Mapping[str, torch.Tensor], *,
                      dtype: Optional[torch.dtype] = None, block_size: int = 128, strict: bool = True) -> Dict[str, str]:
    """Load a checkpoint quantized by another tool into `model` (the float architecture, e.g. built
    on the meta device or with random weights), replacing each nn.Linear whose weight is stored
    quantized by a QuantLinear. Recognized per layer, by key names and dtypes:

      ModelOpt NVFP4           weight uint8 [N, K/2], weight_scale e4m3, weight_scale_2
      compressed-tensors NVFP4 weight_packed, weight_scale e4m3, weight_global_scale (reciprocal)
      FP8 (ModelOpt, compressed-tensors tensor / channel / block, DeepSeek weight_scale_inv)
                               weight e4m3 [N, K] + a dequantization scale -> fp8_block
      compressed-tensors INT8  weight int8 [N, K] + weight_scale [N, 1] or one value -> int8 (W8A8)
      anything else            weight in a float dtype: copied into the nn.Linear as it is

    Static activation scales (input_scale, input_global_scale) are not used: fp8_block and nvfp4
    run 16-bit activations, int8 quantizes each token at run time. A pre_quant_scale (ModelOpt's
    AWQ / SmoothQuant input scaling) other than all ones raises: it changes the layer's function.
    A compressed-tensors INT8 layer loads as W8A8 with dynamic per-token activations whatever
    the checkpoint's activation scheme (the state dict does not say; a W8A16 layer would run
    with int8 activations). The layer dtype is `dtype`, else
    the Linear's if float16 / bfloat16, else bfloat16. Every other tensor (embeddings, norms) loads
    through model.load_state_dict. Returns {linear name: format}. strict: keys left unused, or
    parameters the checkpoint lacks, raise (as load_state_dict's strict); a checkpoint with
    tensors the model has no place for (KV-cache scales, say) loads with strict=False."""
    from torchquant.formats import interop

    sd = dict(state_dict)
    # torchquant's own state dicts name their tensors like compressed-tensors' (weight_packed,
    # weight_global_scale) but keep the global scale as is, not its reciprocal: refuse them here
    mine = [k for k in sd if k == "_extra_state" or k.endswith("._extra_state")]
    mine += [k for k in sd if k.endswith("weight_global_scale") and sd[k].dim() == 0
             and k[: -len("weight_global_scale")] + "weight_packed" in sd]
    if mine:
        raise ValueError(f"load_prequantized: {mine[0]!r} marks a torchquant state dict (QuantLinear.state_dict / "
                         "save_quantized), not a compressed-tensors or ModelOpt checkpoint; load it with "
                         "load_quantized or load_state_dict")
    used = set()
    lost_bias = []
    formats: Dict[str, str] = {}

    def take(key):
        if key not in sd:
            raise ValueError(f"load_prequantized: the checkpoint has no {key}, which the other tensors of "
                             f"that layer ({sorted(k for k in sd if k.startswith(key.rsplit('.', 1)[0] + '.'))}) need")
        used.add(key)
        return sd[key]

    for name, lin in [(n, m) for n, m in model.named_modules() if isinstance(m, nn.Linear)]:
        p = f"{name}." if name else ""
        has = lambda k: (p + k) in sd  # noqa: E731
        dt = layer_dtype(lin.weight.dtype, dtype)
        bias = sd.get(p + "bias")
        if bias is not None and lin.bias is None:
            raise ValueError(f"load_prequantized: {p}bias is in the checkpoint but {name} has no bias")
        bias_q = None if bias is None else bias.to(dt)
        for k in ("input_scale", "input_global_scale", "input_zero_point"):
            if has(k):
                take(p + k)  # static activation quantization: unused (see the docstring)
        if has("pre_quant_scale"):
            # ModelOpt's AWQ / SmoothQuant input scaling (the layer computes (x * pre_quant_scale) @
            # W^T): QuantLinear has no such scale, so only an all-ones one can be dropped.
            pqs = take(p + "pre_quant_scale")
            if not bool((pqs.to(torch.float32) == 1).all()):
                raise ValueError(f"load_prequantized: {p}pre_quant_scale (ModelOpt's AWQ / SmoothQuant input "
                                 "scaling) is not supported: QuantLinear does not scale its input, so this "
                                 "layer would compute wrong outputs (strict=False does not skip it)")
        if has("weight_packed"):
            w, s, g = interop.nvfp4_from_compressed_tensors(take(p + "weight_packed"), take(p + "weight_scale"),
                                                            take(p + "weight_global_scale"))
            q, fmt = QuantLinear.from_nvfp4(w, s, g, bias_q, dtype=dt), "nvfp4"
        elif has("weight") and has("weight_scale_2"):
            w, s, g = interop.nvfp4_from_modelopt(take(p + "weight"), take(p + "weight_scale"), take(p + "weight_scale_2"))
            q, fmt = QuantLinear.from_nvfp4(w, s, g, bias_q, dtype=dt), "nvfp4"
        elif has("weight") and sd[p + "weight"].dtype == torch.float8_e4m3fn:
            key = "weight_scale_inv" if has("weight_scale_inv") else "weight_scale"
            w_q, s = interop.fp8_from_compressed_tensors(take(p + "weight"), take(p + key), block_size)
            q, fmt = QuantLinear.from_fp8_block(w_q, s, block_size, bias_q, dtype=dt), "fp8_block"
        elif has("weight") and sd[p + "weight"].dtype == torch.int8:
            zp = take(p + "weight_zero_point") if has("weight_zero_point") else None
            w_q, s = interop.int8_from_compressed_tensors(take(p + "weight"), take(p + "weight_scale"), zp)
            q, fmt = QuantLinear.from_int8(w_q, s, bias_q, dtype=dt), "int8"
        else:
            continue  # a float weight (and its bias): model.load_state_dict below
        if not name:
            raise ValueError("load_prequantized: the model is itself an nn.Linear, which cannot be replaced in "
                             "place; use QuantLinear.from_nvfp4 / from_fp8_block / from_int8")
        if bias is not None:
            used.add(p + "bias")
        elif lin.bias is not None:
            lost_bias.append(p + "bias")  # the model has one, the checkpoint not: a missing key
        if (q.in_features, q.out_features) != (lin.in_features, lin.out_features):
            raise ValueError(f"load_prequantized: {name} is {lin.out_features}x{lin.in_features} in the model but "
                             f"{q.out_features}x{q.in_features} in the checkpoint")
        _replace(model, name, q.to(lin.weight.device) if lin.weight.device.type != "meta" else q)
        formats[name] = fmt
    rest = {k: v for k, v in sd.items() if k not in used}
    quant_keys = {f"{n}.{b}" if n else b for n in formats for b, _ in model.get_submodule(n).named_buffers()}
    # A model built on the meta device takes the checkpoint's tensors themselves (assign).
    on_meta = any(t.is_meta for t in list(model.parameters()) + list(model.buffers()))
    missing, unexpected = model.load_state_dict(rest, strict=False, assign=on_meta)
    missing = [k for k in missing if k not in quant_keys] + lost_bias
    if strict and (missing or unexpected):
        raise RuntimeError(f"load_prequantized: missing keys {missing[:8]}{'...' if len(missing) > 8 else ''}, "
                           f"unused keys {unexpected[:8]}{'...' if len(unexpected) > 8 else ''}")
    return formats
