"""Command line: `python -m torchquant report` (capability report + accuracy census),
`python -m torchquant demo` (a real model quantized in every format)."""

import sys


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    cmds = {
        "report": "capability report and accuracy census (runs on CPU)",
        "demo": "quantize all-MiniLM-L6-v2 (real sentence embeddings) in every format; accuracy, size, speed",
    }
    if not argv or argv[0] in ("-h", "--help") or argv[0] not in cmds:
        print("usage: python -m torchquant COMMAND [options]\n\ncommands:")
        for k, v in cmds.items():
            print(f"  {k:<8} {v}")
        return 0 if (not argv or argv[0] in ("-h", "--help")) else 2
    if argv[0] == "report":
        from torchquant import report

        return report.main(argv[1:])
    if argv[0] == "demo":
        from torchquant import demo

        return demo.main(argv[1:])
    return 2


if __name__ == "__main__":
    sys.exit(main())
