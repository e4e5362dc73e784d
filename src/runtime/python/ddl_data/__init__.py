"""A small ImageNet-shaped image dataset that ddl makes itself, its two on-disk forms, and their loaders.

    python3 -m ddl_data generate --out DIR --images N --classes K --seed S --format files|shards|both
    python3 -m ddl_data bench --data DIR --format files|shards --workers W [--no-decode] [--json]

The images are JPEGs (3 channels, sides 200-320 pixels, quality 90), each made from the seed and its
index alone (a per-class colour field with smooth waves and noise), so the same arguments give the same
bytes on every machine with the same libjpeg, in any order and in parallel.

Layout under DIR:
    ddl-data.json                       what was made: images, classes, seed, formats, shards, bytes
    train/<class>/<index>.jpg           one file per image (torchvision's ImageFolder layout)
    shards/shard-000000.tar ...         the packed form: WebDataset-style tar shards

A shard is a POSIX tar archive (ustar) whose members come in samples: files that share a key (the member
name up to its first dot) and are adjacent, here ``<key>.jpg`` (the JPEG bytes) and ``<key>.cls`` (the
class index as ASCII decimal) -- the convention of the WebDataset format
(https://github.com/webdataset/webdataset, "The WebDataset Format"). Samples are shuffled across shards
when written (from the seed), so a shard mixes classes and a reader may stream shards in any order.
PyTorch reads them with this package's ``ShardDataset`` (an ``IterableDataset`` over the Python standard
library's tarfile), and the ``webdataset`` package reads them unchanged.
"""

MANIFEST = "ddl-data.json"
FILES_DIR = "train"
SHARDS_DIR = "shards"


def class_name(c):
    return "c%04d" % c


def sample_key(index, cls):
    """A WebDataset key: no dots, unique in the dataset."""
    return "%s_%08d" % (class_name(cls), index)
