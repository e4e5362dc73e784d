"""PyTorch loaders of both forms: a map-style Dataset over the files, an IterableDataset over the shards
(split by rank, then by DataLoader worker). Images are decoded with PIL and made into training tensors
with torchvision's transforms where torchvision is installed (RandomResizedCrop, flip, normalize), else
with a plain centre crop and resize."""
import io
import os
import tarfile

import torch
from PIL import Image

from . import FILES_DIR, SHARDS_DIR

MEAN = (0.485, 0.456, 0.406)
STD = (0.229, 0.224, 0.225)


def training_transform(size):
    """What an ImageNet training script applies to each decoded image."""
    try:
        from torchvision import transforms
    except ImportError:
        return _plain_transform(size)
    return transforms.Compose([
        transforms.RandomResizedCrop(size),
        transforms.RandomHorizontalFlip(),
        transforms.ToTensor(),
        transforms.Normalize(MEAN, STD),
    ])


def _plain_transform(size):
    mean = torch.tensor(MEAN).view(3, 1, 1)
    std = torch.tensor(STD).view(3, 1, 1)

    def apply(img):
        side = min(img.size)
        left, top = (img.size[0] - side) // 2, (img.size[1] - side) // 2
        img = img.crop((left, top, left + side, top + side)).resize((size, size), Image.BILINEAR)
        t = torch.frombuffer(bytearray(img.tobytes()), dtype=torch.uint8).view(size, size, 3)
        return (t.permute(2, 0, 1).float() / 255 - mean) / std

    return apply


def decode(data, transform):
    """A sample from JPEG bytes: the transformed image tensor, or (decode off) a placeholder tensor."""
    if transform is None:
        return torch.zeros(1)
    with Image.open(io.BytesIO(data)) as img:
        return transform(img.convert("RGB"))


class FileDataset(torch.utils.data.Dataset):
    """train/<class>/<n>.jpg; items are (image, class, bytes read)."""

    def __init__(self, root, transform):
        top = os.path.join(root, FILES_DIR)
        self.classes = sorted(os.listdir(top))
        self.items = []
        for c, name in enumerate(self.classes):
            folder = os.path.join(top, name)
            self.items.extend((os.path.join(folder, f), c) for f in sorted(os.listdir(folder)) if f.endswith(".jpg"))
        self.transform = transform

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        path, cls = self.items[i]
        with open(path, "rb") as f:
            data = f.read()
        return decode(data, self.transform), cls, len(data)


def shard_paths(root):
    top = os.path.join(root, SHARDS_DIR)
    return [os.path.join(top, f) for f in sorted(os.listdir(top)) if f.endswith(".tar")]


def split(items, rank, world):
    """Rank `rank`'s share, then this DataLoader worker's share of it."""
    items = items[rank::world]
    info = torch.utils.data.get_worker_info()
    return items[info.id::info.num_workers] if info else items


def samples_of(path):
    """(key, {extension: bytes}) for each sample of one WebDataset-style shard, in order."""
    key, fields = None, {}
    with tarfile.open(path, "r|") as tar:  # a stream: one sequential read of the shard
        for member in tar:
            if not member.isfile():
                continue
            base = os.path.basename(member.name)
            k, _, ext = base.partition(".")
            if k != key and fields:
                yield key, fields
                fields = {}
            key = k
            fields[ext] = tar.extractfile(member).read()
    if fields:
        yield key, fields


class ShardDataset(torch.utils.data.IterableDataset):
    """Streams shards[rank::world], then split among DataLoader workers; items are (image, class, bytes)."""

    def __init__(self, root, transform, rank=0, world=1, repeat=False):
        self.shards = shard_paths(root)
        self.transform, self.rank, self.world, self.repeat = transform, rank, world, repeat

    def __iter__(self):
        mine = split(self.shards, self.rank, self.world)
        while True:
            for path in mine:
                for key, fields in samples_of(path):
                    if "jpg" not in fields or "cls" not in fields:
                        raise ValueError(f"{path}: sample {key} lacks .jpg or .cls")
                    data = fields["jpg"]
                    yield decode(data, self.transform), int(fields["cls"]), len(data)
            if not self.repeat or not mine:
                return


def worker_init(_):
    torch.set_num_threads(1)  # a worker decodes one image at a time; torch's threads would only compete


def make_loader(root, fmt, batch, workers, rank=0, world=1, image_size=224, decode_images=True, repeat=False,
                seed=0):
    """A DataLoader of (images, classes, bytes) batches over this rank's share of the dataset."""
    transform = training_transform(image_size) if decode_images else None
    kwargs = dict(batch_size=batch, num_workers=workers, worker_init_fn=worker_init if workers else None,
                  persistent_workers=False)
    if fmt == "shards":
        return torch.utils.data.DataLoader(ShardDataset(root, transform, rank, world, repeat), **kwargs)
    ds = FileDataset(root, transform)
    g = torch.Generator()
    g.manual_seed(seed)
    order = torch.randperm(len(ds), generator=g).tolist()[rank::world]  # a random-access read, as training does
    sampler = _Cycle(order) if repeat else order
    return torch.utils.data.DataLoader(ds, sampler=sampler, **kwargs)


class _Cycle(torch.utils.data.Sampler):
    def __init__(self, order):
        self.order = order

    def __iter__(self):
        while True:
            yield from self.order
