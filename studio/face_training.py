"""Training the face reader (:class:`tabletop.vision.card_faces.FaceReader`): the
readers' plain conv net (:func:`.reader_training.build_net`) on upright face crops
(:func:`.synth.card_faces.face_crops`), each batch jittered in light, colour, focus and
noise and half of it turned round, as the reader reads both ways.  The ``train`` extra.

``python -m tabletop.studio.face_training render --out DIR --crops N --seed S`` renders
crops in resumable chunks; ``... train --crops DIR [--held FILE] --out RUN`` trains
(resuming from RUN/last.pt) and writes RUN/face.onnx.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from tabletop.studio.reader_training import READER_WIDTHS, build_net, export_onnx
from tabletop.vision.card_faces import FACE_HEIGHT, FACE_WIDTH

CHUNK = 2000
"""Crops per rendered chunk file."""


def _torch() -> Any:
    import torch

    return torch


def render(out: str | Path, crops: int, seed: int) -> list[Path]:
    """Render ``crops`` face crops into OUT/chunkNNN.npz files of :data:`CHUNK` crops each
    (seeded ``seed + chunk``); chunks already there are kept, so a stopped run resumes."""
    from tabletop.studio.synth.card_faces import face_crops

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for chunk in range(math.ceil(crops / CHUNK)):
        path = out / f"chunk{chunk:03d}.npz"
        if not path.is_file():
            images, labels = face_crops(min(CHUNK, crops - chunk * CHUNK), seed + chunk)
            partial = out / f"chunk{chunk:03d}.partial.npz"
            np.savez(partial, images=images, labels=labels)
            partial.replace(path)
        paths.append(path)
    return paths


def load(paths: Sequence[str | Path]) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.int64]]:
    """The crops and classes of chunk files, or of every chunk in a folder."""
    files: list[Path] = []
    for path in map(Path, paths):
        files += sorted(path.glob("chunk*[0-9].npz")) if path.is_dir() else [path]
    if not files:
        raise ValueError(f"no face crops in {[str(p) for p in paths]!r}")
    parts = [np.load(file) for file in files]
    return (np.concatenate([part["images"] for part in parts]),
            np.concatenate([part["labels"] for part in parts]).astype(np.int64))


def _as_tensor(images: npt.NDArray[np.uint8]) -> Any:
    torch = _torch()
    return torch.from_numpy(np.ascontiguousarray(images[..., ::-1].transpose(0, 3, 1, 2)))


def _jitter(x: Any, generator: Any) -> Any:
    """(N, 3, H, W) floats in 0..1 -> the same jittered, half of them turned round."""
    torch = _torch()
    functional = torch.nn.functional
    n = x.shape[0]

    def uniform(low: float, high: float) -> Any:
        return (torch.rand(n, 1, 1, 1, generator=generator) * (high - low) + low)

    turned = torch.rand(n, generator=generator) < 0.5
    x = torch.where(turned.view(n, 1, 1, 1), torch.flip(x, dims=(2, 3)), x)
    mean = x.mean(dim=(1, 2, 3), keepdim=True)
    x = (x - mean) * uniform(0.7, 1.3) + mean + uniform(-0.12, 0.12)
    x = x * (1 + (torch.rand(n, 3, 1, 1, generator=generator) - 0.5) * 0.12)
    blurred = functional.avg_pool2d(x, 3, 1, 1, count_include_pad=False)
    blur = (torch.rand(n, 1, 1, 1, generator=generator) < 0.25).float()
    x = blur * blurred + (1 - blur) * x
    x = x + torch.randn(x.shape, generator=generator) * uniform(0, 0.03)
    return x.clamp(0, 1)


def accuracy(net: Any, images: npt.NDArray[np.uint8], labels: npt.NDArray[np.int64],
             batch: int = 512) -> float:
    torch = _torch()
    net.eval()
    right = 0
    with torch.no_grad():
        for start in range(0, len(images), batch):
            x = _as_tensor(images[start : start + batch]).float() / 255.0
            logits = net(x) + net(torch.flip(x, dims=(2, 3)))
            right += int((logits.argmax(1).numpy() == labels[start : start + batch]).sum())
    return right / max(len(images), 1)


def train(crops: Sequence[str | Path], out: str | Path, held: Sequence[str | Path] = (),
          epochs: int = 12, batch: int = 128, lr: float = 3e-3, seed: int = 0,
          threads: int | None = None,
          log: Callable[[str], None] = lambda s: print(s, file=sys.stderr, flush=True)
          ) -> Path:
    """Train from scratch (resuming a stopped run of as many ``epochs`` from
    OUT/last.pt) and export OUT/face.onnx, the epoch with the best held-out accuracy
    (the last, without ``held``)."""
    torch = _torch()
    if threads:
        torch.set_num_threads(threads)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    images, labels = load(crops)
    held_images, held_labels = load(held) if held else (None, None)
    log(f"{len(images)} face crops, {0 if held_images is None else len(held_images)} held out")
    torch.manual_seed(seed)
    net = build_net(widths=READER_WIDTHS)
    loss_fn = torch.nn.CrossEntropyLoss(label_smoothing=0.05)
    optimiser = torch.optim.AdamW(net.parameters(), lr=lr, weight_decay=5e-4)
    steps = math.ceil(len(images) / batch)
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimiser, lr, total_steps=epochs * steps,
                                                   pct_start=0.15)
    generator = torch.Generator().manual_seed(seed)
    stored = _as_tensor(images)
    target = torch.from_numpy(labels)
    start, best = 0, -1.0
    last = out / "last.pt"
    if last.is_file():
        state = torch.load(last, weights_only=False)
        if state["epochs"] != epochs:
            raise ValueError(f"{str(last)!r} is a run of {state['epochs']} epochs, not "
                             f"{epochs}: go on with {state['epochs']} or train into "
                             "another folder")
        net.load_state_dict(state["net"])
        optimiser.load_state_dict(state["optimiser"])
        schedule.load_state_dict(state["schedule"])
        start, best = state["epoch"] + 1, state["best"]
        generator.set_state(state["generator"])
        log(f"resuming after epoch {start}")
    for epoch in range(start, epochs):
        net.train()
        began, total = time.monotonic(), 0.0
        order = torch.randperm(len(images), generator=generator)
        for k in range(steps):
            pick = order[k * batch : (k + 1) * batch]
            x = _jitter(stored[pick].float() / 255.0, generator)
            loss = loss_fn(net(x), target[pick])
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            schedule.step()
            total += loss.item()
        score = (accuracy(net, held_images, held_labels) if held_images is not None
                 and held_labels is not None else float(epoch))
        if score >= best:
            best = score
            torch.save(net.state_dict(), out / "best.pt")
        torch.save({"net": net.state_dict(), "optimiser": optimiser.state_dict(),
                    "schedule": schedule.state_dict(), "epoch": epoch, "epochs": epochs,
                    "best": best, "generator": generator.get_state()}, last)
        log(f"epoch {epoch + 1}/{epochs}: loss {total / steps:.3f}, held-out {score:.4f}, "
            f"{time.monotonic() - began:.0f} s")
    net.load_state_dict(torch.load(out / "best.pt"))
    return export_onnx(net, out / "face.onnx", (FACE_HEIGHT, FACE_WIDTH), "faces")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tabletop.studio.face_training",
                                     description=__doc__.splitlines()[0] if __doc__ else None)
    commands = parser.add_subparsers(dest="command", required=True)
    make = commands.add_parser("render", help="render face crops in resumable chunks")
    make.add_argument("--out", required=True)
    make.add_argument("--crops", type=int, required=True)
    make.add_argument("--seed", type=int, default=910000)
    fit = commands.add_parser("train", help="train the face reader")
    fit.add_argument("--crops", action="append", required=True)
    fit.add_argument("--held", action="append", default=[])
    fit.add_argument("--out", required=True)
    fit.add_argument("--epochs", type=int, default=12)
    fit.add_argument("--lr", type=float, default=3e-3)
    fit.add_argument("--threads", type=int)
    fit.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.command == "render":
        if args.crops < 1:
            parser.error(f"--crops must be at least 1, not {args.crops}")
        print(len(render(args.out, args.crops, args.seed)), "chunks")
    else:
        print(train(args.crops, args.out, args.held, args.epochs, lr=args.lr, seed=args.seed,
                    threads=args.threads))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
