"""configs.py: the two benchmark configurations of `pelab bench` (tools/bench.c), torch-free so
that the drivers can read them without importing torch."""

CONFIGS = {
    "XS": dict(dim=64, n_layers=2, n_heads=4, hidden_dim=192, vocab_size=256, seq_len=64, batch=16),
    "S": dict(dim=128, n_layers=4, n_heads=4, hidden_dim=384, vocab_size=256, seq_len=128, batch=16),
    "M": dict(dim=288, n_layers=6, n_heads=6, hidden_dim=768, vocab_size=256, seq_len=256, batch=8),
}


def add_workload_args(ap):
    """The workload flags shared by bench_torch.py and compare.py (the same as `pelab bench`'s)."""
    ap.add_argument("--configs", default="S,M")
    ap.add_argument("--workloads", default="train,sample,eval")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--sample-tokens", type=int, default=256)
    ap.add_argument("--eval-mult", default="1,4,16")
    ap.add_argument("--eval-extra", default="8192")
    ap.add_argument("--eval-tokens", type=int, default=4096)
    ap.add_argument("--precision", default="fp32,bf16", help="fp32, bf16 (PyTorch: CPU autocast)")
    ap.add_argument("--train-lens", default="1024,4096", help="M trained at batch 1 at these lengths (none: skip)")
