"""ddl_data (src/runtime/python/ddl_data): the generator is deterministic from its seed, the shards follow
the WebDataset convention and hold the same JPEGs as the files, and the loaders give every image once,
split by rank and by DataLoader worker."""
import hashlib
import io
import os
import sys
import tarfile
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "src", "runtime", "python"))

import torch  # noqa: E402
from PIL import Image  # noqa: E402

from ddl_data import generate as gen  # noqa: E402
from ddl_data import loaders  # noqa: E402


def tree_digest(root):
    h = hashlib.sha256()
    for dirpath, _, files in sorted(os.walk(root)):
        for f in sorted(files):
            if f == gen.MANIFEST:
                continue
            path = os.path.join(dirpath, f)
            h.update(os.path.relpath(path, root).encode())
            with open(path, "rb") as fh:
                h.update(fh.read())
    return h.hexdigest()


class DdlDataTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.root = os.path.join(cls.tmp.name, "a")
        cls.manifest = gen.generate(cls.root, 40, 4, 7, ["files", "shards"], shards=4)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_the_same_seed_gives_the_same_bytes_and_another_seed_other_bytes(self):
        same = os.path.join(self.tmp.name, "same")
        other = os.path.join(self.tmp.name, "other")
        gen.generate(same, 40, 4, 7, ["files", "shards"], shards=4)
        gen.generate(other, 40, 4, 8, ["files", "shards"], shards=4)
        self.assertEqual(tree_digest(self.root), tree_digest(same))
        self.assertNotEqual(tree_digest(self.root), tree_digest(other))

    def test_the_manifest_says_what_was_made(self):
        m = gen.read_manifest(self.root)
        self.assertEqual((m["images"], m["classes"], m["seed"], m["shards"]), (40, 4, 7, 4))
        self.assertEqual(m["formats"], ["files", "shards"])
        self.assertGreater(m["jpeg_bytes"], 40 * 1000)

    def test_files_are_imagenet_shaped_jpegs_in_class_folders(self):
        classes = sorted(os.listdir(os.path.join(self.root, "train")))
        self.assertEqual(classes, ["c0000", "c0001", "c0002", "c0003"])
        count = 0
        for c in classes:
            for f in os.listdir(os.path.join(self.root, "train", c)):
                with Image.open(os.path.join(self.root, "train", c, f)) as img:
                    self.assertEqual((img.format, img.mode), ("JPEG", "RGB"))
                    self.assertTrue(all(gen.MIN_SIDE <= s <= gen.MAX_SIDE for s in img.size), img.size)
                count += 1
        self.assertEqual(count, 40)

    def test_shards_hold_each_image_once_as_adjacent_jpg_and_cls_members(self):
        seen = {}
        for path in loaders.shard_paths(self.root):
            with tarfile.open(path) as tar:
                names = tar.getnames()
                self.assertEqual(len(names) % 2, 0)
                for jpg, cls in zip(names[0::2], names[1::2]):
                    key = jpg[: -len(".jpg")]
                    self.assertEqual((jpg, cls), (key + ".jpg", key + ".cls"))
                    self.assertNotIn(".", key)
                    label = int(tar.extractfile(cls).read())
                    index = int(key.split("_")[1])
                    with open(os.path.join(self.root, "train", "c%04d" % label, "%08d.jpg" % index), "rb") as f:
                        self.assertEqual(tar.extractfile(jpg).read(), f.read())
                    self.assertNotIn(key, seen)
                    seen[key] = label
        self.assertEqual(len(seen), 40)
        # Shuffled across shards: a shard mixes classes.
        with tarfile.open(loaders.shard_paths(self.root)[0]) as tar:
            self.assertGreater(len({n.split("_")[0] for n in tar.getnames()}), 1)

    def test_a_member_without_its_pair_is_refused(self):
        bad = os.path.join(self.tmp.name, "bad")
        os.makedirs(os.path.join(bad, "shards"))
        with tarfile.open(os.path.join(bad, "shards", "shard-000000.tar"), "w") as tar:
            info = tarfile.TarInfo("k1.jpg")
            info.size = 3
            tar.addfile(info, io.BytesIO(b"abc"))
        with self.assertRaises(ValueError):
            list(loaders.ShardDataset(bad, None))

    def labels(self, fmt, rank, world, workers):
        loader = loaders.make_loader(self.root, fmt, 4, workers, rank, world, image_size=32)
        out = []
        for images, classes, sizes in loader:
            self.assertEqual(tuple(images.shape[1:]), (3, 32, 32))
            self.assertTrue(bool((sizes > 1000).all()))
            out.extend(zip(classes.tolist(), sizes.tolist()))
        return out

    def test_loaders_give_every_image_once_split_by_rank_and_worker(self):
        everything = sorted(self.labels("files", 0, 1, 0))
        self.assertEqual(len(everything), 40)
        for fmt in ("files", "shards"):
            parts = [self.labels(fmt, r, 2, 2) for r in (0, 1)]
            self.assertTrue(all(parts), fmt)
            self.assertEqual(sorted(parts[0] + parts[1]), everything, fmt)

    def test_the_plain_transform_makes_a_normalized_square_tensor(self):
        t = loaders._plain_transform(48)(Image.new("RGB", (300, 200), (255, 0, 0)))
        self.assertEqual(tuple(t.shape), (3, 48, 48))
        self.assertAlmostEqual(float(t[0].mean()), (1 - 0.485) / 0.229, places=3)


if __name__ == "__main__":
    torch.set_num_threads(1)
    unittest.main()
