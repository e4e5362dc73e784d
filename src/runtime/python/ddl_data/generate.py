"""The generator: deterministic JPEGs from a seed, written as class folders and/or tar shards."""
import io
import json
import os
import tarfile

import numpy as np
from PIL import Image

from . import FILES_DIR, MANIFEST, SHARDS_DIR, class_name, sample_key

QUALITY = 90
MIN_SIDE, MAX_SIDE = 200, 320


def class_of(index, classes):
    return index % classes


def image_bytes(seed, index, classes):
    """JPEG bytes of image `index`: its size, colour field and noise come from (seed, index) alone."""
    cls = class_of(index, classes)
    rng = np.random.default_rng([seed, index])
    w, h = (int(v) for v in rng.integers(MIN_SIDE, MAX_SIDE + 1, size=2))
    base = np.random.default_rng([seed, 1 << 20, cls]).uniform(40, 215, size=3)
    y, x = np.mgrid[0:h, 0:w].astype(np.float32)
    fx, fy, phase = rng.uniform(0.01, 0.08, size=3)
    wave = 40 * np.sin(x * fx + phase * 50)[..., None] + 30 * np.cos(y * fy)[..., None]
    noise = rng.normal(0, 18, size=(h, w, 3))
    pixels = np.clip(base + wave + noise, 0, 255).astype(np.uint8)
    out = io.BytesIO()
    Image.fromarray(pixels, "RGB").save(out, format="JPEG", quality=QUALITY)
    return out.getvalue(), cls


def _write_atomic(path, data):
    tmp = path + ".part"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def _add_member(tar, name, data):
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mode = 0o644
    info.mtime = 0  # the same bytes every time
    tar.addfile(info, io.BytesIO(data))


def generate(out, images, classes, seed, formats, shards=32, log=None):
    """Writes the dataset under `out` and its manifest last (a dataset without one is incomplete)."""
    if images < 1 or classes < 1 or shards < 1:
        raise ValueError("images, classes and shards must be >= 1")
    os.makedirs(out, exist_ok=True)
    manifest_path = os.path.join(out, MANIFEST)
    if os.path.exists(manifest_path):
        os.remove(manifest_path)
    shards = min(shards, images)
    total = {"files": 0, "shards": 0}
    if "files" in formats:
        for c in range(classes):
            os.makedirs(os.path.join(out, FILES_DIR, class_name(c)), exist_ok=True)
    order = np.random.default_rng([seed, 2 << 20]).permutation(images)
    # Shard s takes the shuffled samples order[s::shards]: every shard mixes classes.
    tars = []
    if "shards" in formats:
        os.makedirs(os.path.join(out, SHARDS_DIR), exist_ok=True)
        for s in range(shards):
            path = os.path.join(out, SHARDS_DIR, "shard-%06d.tar" % s)
            tars.append((path, tarfile.open(path + ".part", "w", format=tarfile.USTAR_FORMAT)))
    for pos, index in enumerate(order):
        index = int(index)
        data, cls = image_bytes(seed, index, classes)
        if "files" in formats:
            _write_atomic(os.path.join(out, FILES_DIR, class_name(cls), "%08d.jpg" % index), data)
            total["files"] += len(data)
        if tars:
            key = sample_key(index, cls)
            tar = tars[pos % shards][1]
            _add_member(tar, key + ".jpg", data)
            _add_member(tar, key + ".cls", str(cls).encode())
            total["shards"] += len(data)
        if log and (pos + 1) % 1000 == 0:
            log(f"{pos + 1}/{images} images")
    for path, tar in tars:
        tar.close()
        os.replace(path + ".part", path)
    manifest = {
        "format_version": 1,
        "generator": "ddl_data",
        "images": images,
        "classes": classes,
        "seed": seed,
        "formats": sorted(formats),
        "shards": shards if tars else 0,
        "jpeg_bytes": max(total.values()),
    }
    _write_atomic(manifest_path, (json.dumps(manifest, indent=1, sort_keys=True) + "\n").encode())
    return manifest


def read_manifest(out):
    try:
        with open(os.path.join(out, MANIFEST)) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None
