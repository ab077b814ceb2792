"""Run every torchquant benchmark and write one stamped report.

    python benchmarks/run_all.py --quick                 # ~3 min on an H200
    python benchmarks/run_all.py --full                  # every shape, M in {1,...,2048}
    python benchmarks/run_all.py --full --ops int8,fp8   # a part (e.g. to fit a time limit)
    python benchmarks/run_all.py --merge-only --out DIR  # rebuild tables/plots from DIR/*.csv

Each benchmark (bench_<op>.py) runs in its own Python process, so a kernel
that faults cannot take the others down, and each measures the read ceiling
itself, in the same process as its kernels. Output in --out (default
benchmarks/results/<device-slug>/), every file stamped with date, device,
torch version and git commit:

  <op>.csv / <op>.md / <op>.json   per benchmark: every row, tables per shape, run metadata
  all.csv                          every row of every benchmark, common columns
  summary.md                       cross-format tables, the per-op ceilings, failed checks, plots
  pct_ceiling_vs_M.png             % of the read ceiling vs M, one line per format, one panel per shape
  speedup_vs_bf16_vs_M.png         speedup over bf16 F.linear vs M, same layout
  e2e_layer.png                    time per Llama-3-8B decoder layer (7 projections, unfused) per format
bench_decode (op "decode") times a whole decoder layer per decode step (its table is in summary.md).

The short summary table is printed last. Exit status: 0 when everything ran
and every correctness check passed; 2 when a check failed; 1 when a
benchmark process failed.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time
from typing import Any, Dict, List, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import common as C  # noqa: E402

OPS = ("int8", "fp8", "nvfp4", "sparse24", "e2e", "decode")
LAYER_OPS = ("e2e", "decode")  # per-layer tables, not per-shape pivots or plots
SUMMARY_MS = (1, 16, 64, 2048)  # columns of the printed summary in --full runs


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description="Run all torchquant benchmarks; write CSV, Markdown and PNG reports.")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--quick", action="store_true", help="anchor shapes, M in {1,16,64,2048} (default)")
    g.add_argument("--full", action="store_true", help="every model shape, M in {1,2,4,8,16,32,64,256,2048}")
    p.add_argument("--out", default=None, help="output folder (default benchmarks/results/<device-slug>/)")
    p.add_argument("--ops", default=",".join(OPS), help=f"comma-separated subset of {','.join(OPS)}")
    p.add_argument("--shapes", default="", help="shape-label substrings passed to every benchmark")
    p.add_argument("--ms", default="", help="M list passed to every benchmark, e.g. '1,8'")
    p.add_argument("--replays", type=int, default=None, help="graph replays per timing")
    p.add_argument("--forced-max-m", type=int, default=None, help="see bench_*.py --help")
    p.add_argument("--device", default=None, help="cuda, cuda:N or cpu")
    p.add_argument("--threads", type=int, default=None, help="CPU mode: benchmark threads")
    p.add_argument("--timeout", type=float, default=None, help="seconds allowed per benchmark process")
    p.add_argument("--inprocess", action="store_true", help="run benchmarks in this process (debugging)")
    p.add_argument("--merge-only", action="store_true", help="only rebuild all.csv/summary/plots from --out")
    return p.parse_args(argv)


# ------------------------------------------------------------------ running --
def run_benchmarks(args: argparse.Namespace, out_dir: str, ops: List[str]) -> Dict[str, int]:
    mode_flag = "--full" if args.full else "--quick"
    status: Dict[str, int] = {}
    for op in ops:
        argv = [mode_flag, "--out", out_dir]
        for flag, val in (("--shapes", args.shapes), ("--ms", args.ms), ("--replays", args.replays),
                          ("--forced-max-m", args.forced_max_m), ("--device", args.device),
                          ("--threads", args.threads)):
            if val not in (None, ""):
                argv += [flag, str(val)]
        t0 = time.time()
        print(f"\n######## bench_{op}.py {' '.join(argv)}", flush=True)
        if args.inprocess:
            mod = __import__(f"bench_{op}")
            try:
                rc = mod.main(argv)
            except Exception as e:  # keep going with the other benchmarks
                print(f"bench_{op} raised {C.first_line(e, 400)}", flush=True)
                rc = 1
        else:
            env = dict(os.environ, PYTHONUNBUFFERED="1")
            try:
                rc = subprocess.run([sys.executable, os.path.join(HERE, f"bench_{op}.py")] + argv,
                                    env=env, timeout=args.timeout).returncode
            except subprocess.TimeoutExpired:
                print(f"bench_{op}.py exceeded --timeout {args.timeout} s", flush=True)
                rc = 124
        status[op] = rc
        print(f"######## bench_{op}.py: exit {rc} after {time.time() - t0:.0f} s", flush=True)
    return status


# ---------------------------------------------------------------- loading --
def load_results(out_dir: str, ops: List[str]) -> Tuple[Dict[str, List[Dict[str, Any]]], Dict[str, Dict[str, Any]]]:
    rows: Dict[str, List[Dict[str, Any]]] = {}
    metas: Dict[str, Dict[str, Any]] = {}
    for op in ops:
        csv_path = os.path.join(out_dir, f"{op}.csv")
        if not os.path.exists(csv_path):
            continue
        _, rows[op] = C.read_csv(csv_path)
        meta_path = os.path.join(out_dir, f"{op}.json")
        if os.path.exists(meta_path):
            with open(meta_path) as f:
                metas[op] = json.load(f)
    return rows, metas


_I = C.ROW_FIELDS.index("tflops") + 1
ALL_COLS = C.ROW_FIELDS[:_I] + ["vs_bf16", "best_peer", "vs_best_peer"] + C.ROW_FIELDS[_I:]


def shape_key(r: Dict[str, Any]) -> str:
    return f"{r['model']} {r['layer']} ({r['N']}x{r['K']})" if r.get("N") else f"{r['model']} {r['layer']}"


def auto_rows(rows: List[Dict[str, Any]], op: str) -> List[Dict[str, Any]]:
    """The row a user gets for each (shape, M): torchquant 'auto' (sparse24: torch's semi-structured
    unless torchquant has its own op)."""
    if op == "sparse24":
        tq = [r for r in rows if r["impl"] == "tq auto" and r.get("time_us")]
        return tq or [r for r in rows if r["impl"] == "2:4 torch semi-structured"]
    return [r for r in rows if r["impl"] == "tq auto"]


def best_path_note(rows: List[Dict[str, Any]], r: Dict[str, Any]) -> str:
    """Whether a forced torchquant path beat 'auto' by more than 5% at the same (shape, M)."""
    same = [x for x in rows if x["N"] == r["N"] and x["K"] == r["K"] and x["M"] == r["M"]
            and x["kind"] == "torchquant" and x.get("time_us") and str(x["impl"]).startswith("tq ")
            and x["impl"] not in ("tq auto", "tq auto+quant")
            # bench_sparse24's int8 2:4 rows are another op (sparse24_int8_matmul), not a
            # forced path of the sparse24_gemv that "tq auto" runs there
            and not str(x["impl"]).startswith("tq int8")]
    if not same or not r.get("time_us"):
        return ""
    best = min(same, key=lambda x: x["time_us"])
    if best["time_us"] < 0.95 * r["time_us"]:
        return f"{best['impl'][3:]} {r['time_us'] / best['time_us']:.2f}x faster than auto"
    return ""


# ---------------------------------------------------------------- reports --
def cell(r: Optional[Dict[str, Any]]) -> str:
    if r is None:
        return ""
    if not r.get("time_us"):
        return "n/a"
    s = f"{C.fmt_time(r['time_us'])} us {r['pct_ceiling']:.0f}%"
    if r.get("vs_bf16"):
        s += f" {r['vs_bf16']:.2f}x"
    if r.get("check") == "unchecked":
        s += " (timing only)"
    elif r.get("check") not in ("ok", None, ""):
        s += f" {r['check']}!"
    return s


def summary_tables(rows_by_op: Dict[str, List[Dict[str, Any]]], full: bool, compact: bool = False) -> List[str]:
    """Markdown lines: per-op pivot (shape x M) of the user-facing row, and the e2e table.
    compact: no blank lines and at most 3 dispatch notes per op (the printed summary)."""
    out: List[str] = []
    blank = [] if compact else [""]
    for op, rows in rows_by_op.items():
        if op in LAYER_OPS:
            continue
        ar = auto_rows(rows, op)
        if not ar:
            continue
        ms = sorted({r["M"] for r in ar})
        shapes_seen: List[str] = []
        for r in ar:
            if shape_key(r) not in shapes_seen:
                shapes_seen.append(shape_key(r))
        if full:
            ms = [m for m in ms if m in SUMMARY_MS] or ms
            anchors = {"4096x4096", "14336x4096", "28672x8192", "128256x4096"}
            shapes_seen = [s for s in shapes_seen if any(f"({a})" in s for a in anchors)] or shapes_seen
        impl = ar[0]["impl"]
        out += [f"### {op}: `{impl}` — time, % of read ceiling, speedup over bf16 F.linear"] + blank
        body, notes = [], []
        for sk in shapes_seen:
            line = [sk]
            for m in ms:
                r = next((x for x in ar if shape_key(x) == sk and x["M"] == m), None)
                line.append(cell(r))
                if r is not None:
                    n = best_path_note(rows, r)
                    if n:
                        notes.append(f"{sk} M={m}: {n}")
            body.append(line)
        out += C.md_table(["shape"] + [f"M={m}" for m in ms], body) + blank
        if notes:
            shown = notes[:3] if compact else notes
            more = [f"- ... {len(notes) - 3} more in {op}.md / summary.md"] if compact and len(notes) > 3 else []
            out += ["Dispatch: a forced path beat auto by > 5% at:"] + [f"- {n}" for n in shown] + more + blank
    for lop in LAYER_OPS:
        if lop not in rows_by_op:
            continue
        models: List[str] = []
        for r in rows_by_op[lop]:
            if r["model"] not in models:
                models.append(r["model"])
        for model in models:
            rows = [r for r in rows_by_op[lop] if r["model"] == model]
            ms = sorted({r["M"] for r in rows})
            impls: List[str] = []
            for r in rows:
                if r["impl"] not in impls:
                    impls.append(r["impl"])
            if lop == "decode":
                out += [f"### decode: {model} — one whole decoder layer per step (projections, norms, RoPE, "
                        "KV-cache attention, SiLU), time per layer, % of ceiling, vs bf16"] + blank
            else:
                layer = str(rows[0].get("layer") or "")
                nproj = len(layer.split(",")) if layer.startswith("decoder layer:") else None
                what = f"{nproj} projections" if nproj else "projections"
                out += [f"### e2e: {model} decoder layer, {what} — time per layer, % of ceiling, vs bf16"] + blank
            body = []
            for name in impls:
                line = [name]
                for m in ms:
                    r = next((x for x in rows if x["impl"] == name and x["M"] == m), None)
                    line.append(cell(r) if (r is None or r.get("time_us")) else f"n/a ({(r.get('note') or '')[:50]})")
                body.append(line)
            out += C.md_table(["format"] + [f"M={m}" for m in ms], body) + blank
    return out


def write_all_csv(path: str, rows_by_op: Dict[str, List[Dict[str, Any]]], stamp: Dict[str, str]) -> None:
    allrows = [r for rows in rows_by_op.values() for r in rows]
    import csv

    with open(path, "w", newline="") as f:
        for k, v in stamp.items():
            f.write(f"# {k}: {v}\n")
        w = csv.DictWriter(f, fieldnames=ALL_COLS, extrasaction="ignore")
        w.writeheader()
        for r in allrows:
            w.writerow({k: ("" if r.get(k) is None else r.get(k)) for k in ALL_COLS})


def make_plots(out_dir: str, rows_by_op: Dict[str, List[Dict[str, Any]]], stamp: Dict[str, str]) -> List[str]:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except Exception as e:
        print(f"plots skipped: matplotlib is not available ({C.first_line(e)}); "
              "`pip install matplotlib` and rerun with --merge-only --out <dir> to draw them", flush=True)
        return []
    footer = C.stamp_text(stamp)
    meta = {"Description": footer, "Software": "torchquant benchmarks/run_all.py"}
    # series -> shape -> {M: row}; the first op that measured a series at a shape wins
    series: Dict[str, Dict[str, Dict[int, Dict[str, Any]]]] = {}
    shape_order: List[str] = []
    for op, rows in rows_by_op.items():
        if op in LAYER_OPS:
            continue
        for r in rows:
            if not r.get("series") or not r.get("time_us"):
                continue
            sk = shape_key(r)
            if sk not in shape_order:
                shape_order.append(sk)
            per_shape = series.setdefault(r["series"], {}).setdefault(sk, {})
            owner = per_shape.setdefault("_op", op)
            if owner == op:
                per_shape[r["M"]] = r
    written: List[str] = []
    if shape_order:
        for fname, key, ylabel, skip_bf16 in (
            ("pct_ceiling_vs_M.png", "pct_ceiling", "% of measured read ceiling", False),
            ("speedup_vs_bf16_vs_M.png", "vs_bf16", "speedup over bf16 F.linear (x)", True),
        ):
            n = len(shape_order)
            cols = min(3, n)
            nrows = math.ceil(n / cols)
            fig, axes = plt.subplots(nrows, cols, figsize=(5.2 * cols, 3.8 * nrows), squeeze=False)
            for i, sk in enumerate(shape_order):
                ax = axes[i // cols][i % cols]
                for name in sorted(series):
                    if skip_bf16 and name.startswith("bf16"):
                        continue
                    pts = {m: r for m, r in series[name].get(sk, {}).items() if m != "_op"}
                    xs = sorted(m for m, r in pts.items() if r.get(key) is not None)
                    if xs:  # torchquant solid, peers dashed
                        ax.plot(xs, [pts[m][key] for m in xs], marker="o", label=name,
                                ls="-" if "torchquant" in name else "--")
                ax.set_xscale("log", base=2)
                ax.set_xlabel("M (tokens)")
                ax.set_ylabel(ylabel)
                if key == "vs_bf16":
                    ax.axhline(1.0, color="gray", lw=0.8, ls="--")
                else:
                    ax.axhline(100.0, color="gray", lw=0.8, ls="--")
                ax.set_title(sk, fontsize=9)
                ax.grid(True, alpha=0.3)
                ax.legend(fontsize=7)
            for j in range(n, nrows * cols):
                axes[j // cols][j % cols].axis("off")
            fig.suptitle(f"torchquant: {ylabel} vs M", fontsize=11)
            fig.text(0.5, 0.005, footer, ha="center", fontsize=7)
            fig.tight_layout(rect=(0, 0.03, 1, 0.96))
            path = os.path.join(out_dir, fname)
            fig.savefig(path, dpi=110, metadata=meta)
            plt.close(fig)
            written.append(path)
    if "e2e" in rows_by_op:
        rows = [r for r in rows_by_op["e2e"] if r.get("time_us")]
        rows = [r for r in rows if r["model"] == rows[0]["model"]] if rows else rows  # the unfused layer
        if rows:
            ms = sorted({r["M"] for r in rows})
            names: List[str] = []
            for r in rows:
                if r["impl"] not in names:
                    names.append(r["impl"])
            fig, ax = plt.subplots(figsize=(10, 4.5))
            width = 0.8 / max(1, len(ms))
            for j, m in enumerate(ms):
                vals = [next((r["time_us"] for r in rows if r["impl"] == nm and r["M"] == m), 0) for nm in names]
                ax.bar([i + j * width for i in range(len(names))], vals, width, label=f"M={m}")
            ax.set_xticks([i + width * (len(ms) - 1) / 2 for i in range(len(names))])
            ax.set_xticklabels(names, rotation=25, ha="right", fontsize=8)
            ax.set_ylabel("us per decoder layer (7 projections)")
            ax.legend()
            ax.grid(True, axis="y", alpha=0.3)
            fig.suptitle(f"torchquant e2e: {rows[0]['model']} decoder-layer linears", fontsize=11)
            fig.text(0.5, 0.005, footer, ha="center", fontsize=7)
            fig.tight_layout(rect=(0, 0.03, 1, 0.96))
            path = os.path.join(out_dir, "e2e_layer.png")
            fig.savefig(path, dpi=110, metadata=meta)
            plt.close(fig)
            written.append(path)
    return written


def main(argv=None) -> int:
    args = parse_args(argv)
    ops = [o.strip() for o in args.ops.split(",") if o.strip()]
    bad = [o for o in ops if o not in OPS]
    if bad:
        print(f"unknown ops {bad}; choose from {OPS}", file=sys.stderr)
        return 1
    device = C.pick_device(args.device)
    if device.type != "cuda":
        print("No CUDA device: CPU mode. Each benchmark times its ops on tiny shapes with "
              "torch.utils.benchmark; the numbers exercise the code paths, they say nothing about GPU speed.",
              flush=True)
    out_dir = args.out or C.default_out(device)
    os.makedirs(out_dir, exist_ok=True)
    t0 = time.time()
    status: Dict[str, int] = {}
    if not args.merge_only:
        status = run_benchmarks(args, out_dir, ops)
    rows_by_op, metas = load_results(out_dir, list(OPS) if args.merge_only else ops)
    if not rows_by_op:
        print(f"no results in {out_dir}", file=sys.stderr)
        return 1
    first_meta = next(iter(metas.values()), {})
    stamp = first_meta.get("stamp") or C.make_stamp(device)
    stamp = dict(stamp, report_date=C.make_stamp(device)["date"]) if args.merge_only else stamp

    write_all_csv(os.path.join(out_dir, "all.csv"), rows_by_op, stamp)
    tables = summary_tables(rows_by_op, full=any(m.get("mode") == "full" for m in metas.values()))
    plots = make_plots(out_dir, rows_by_op, stamp)
    failed = [line for m in metas.values() for line in m.get("failed_checks", [])]

    md = [f"# torchquant benchmarks: {stamp.get('device', '')}", "", f"_{C.stamp_text(stamp)}_", ""]
    md += ["| benchmark | mode | read ceiling (same process) | elapsed | exit | notes |", "|---|---|---|---|---|---|"]
    for op in rows_by_op:
        m = metas.get(op, {})
        ceil = f"{C.fmt_bw(m['ceiling_tbps'])} ({m.get('ceiling_method', '')})" if "ceiling_tbps" in m else "?"
        notes = "; ".join(m.get("notes", []))[:300]
        md.append(f"| [{op}]({op}.md) | {m.get('mode', '?')} | {ceil} | {m.get('elapsed_s', '?')} s | "
                  f"{status.get(op, '-')} | {notes} |")
    md += ["", f"Timing: {first_meta.get('timing', '')}", "",
           "Cells: median time per launch, % of the read ceiling (bytes = weights incl. scales/metadata "
           "+ activation + output), speedup over bf16 F.linear measured in the same process.", ""]
    md += tables
    if failed:
        md += ["## CORRECTNESS CHECKS FAILED", ""] + [f"- {f}" for f in failed] + [""]
    for p in plots:
        md += [f"![{os.path.basename(p)}]({os.path.basename(p)})", ""]
    with open(os.path.join(out_dir, "summary.md"), "w") as f:
        f.write("\n".join(md))

    # ---- printed last: the short summary
    print("\n" + "=" * 100)
    print(f"torchquant benchmarks  {C.stamp_text(stamp)}")
    print("read ceiling, measured in each benchmark's process: " + ", ".join(
        f"{op} {C.fmt_bw(m['ceiling_tbps'])}" for op, m in metas.items() if op in rows_by_op and "ceiling_tbps" in m))
    full = any(m.get("mode") == "full" for m in metas.values())
    for line in summary_tables(rows_by_op, full=full, compact=True):
        print(line)
    print(f"files: {out_dir}/ (all.csv, summary.md, <op>.csv/.md/.json"
          + (", " + ", ".join(os.path.basename(p) for p in plots) if plots else ", no plots") + ")")
    print(f"elapsed {time.time() - t0:.0f} s")
    if failed:
        print(f"!!! {len(failed)} CORRECTNESS CHECK(S) FAILED (a fast wrong kernel is not fast):")
        for f in failed[:10]:
            print("   " + f)
        if len(failed) > 10:
            print(f"   ... {len(failed) - 10} more in summary.md")
    crashed = {op: rc for op, rc in status.items() if rc not in (0, 2)}
    if crashed:
        print(f"!!! benchmark processes failed: {crashed} (see their output above)")
        return 1
    return 2 if failed or any(rc == 2 for rc in status.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
