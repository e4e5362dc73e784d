"""A job's logs as `ddl-run logs` writes them (ddl-run, beside this file): every rank's lines prefixed
`[r] `, read a chunk at a time so that memory stays bounded by the chunk, whatever the log's size, and the
first lines of a large log come out at once.
"""
import os
import time

CHUNK = 1 << 20
# A line without its end is held back so that another rank's lines do not cut into it; past this length it
# is written as a line of its own (memory stays bounded).
LONGEST = 1 << 20


def _write(out, rank, lines):
    if not lines:
        return
    prefix = "[%d] " % rank
    # One decode for the chunk's lines: "\n" never sits inside a UTF-8 sequence, so this replaces exactly
    # what decoding each line would.
    text = b"\n".join(lines).decode("utf-8", errors="replace")
    out.write((prefix + text.replace("\n", "\n" + prefix) + "\n").encode("utf-8"))


def show(paths, finished, follow, out, pause=0.3):
    """Writes the logs in `paths` ({rank: path}) to `out` (a binary stream): what each holds now, rank by
    rank; with `follow`, then what they gain, until `finished()` (the job has ended). A rank's last line
    without its end is written only once the job has ended."""
    offsets = {r: 0 for r in paths}
    partial = {r: b"" for r in paths}
    cut = {r: False for r in paths}  # its last line was written in pieces: the end that follows is its end
    while True:
        done = finished()
        for r, path in paths.items():
            try:
                f = open(path, "rb")
            except OSError:
                continue
            with f:
                # Up to its size now: a rank that writes fast does not keep the others waiting.
                end = os.fstat(f.fileno()).st_size
                f.seek(offsets[r])
                while offsets[r] < end:
                    data = f.read(min(CHUNK, end - offsets[r]))
                    if not data:
                        break
                    offsets[r] += len(data)
                    data = partial[r] + data
                    if cut[r] and data.startswith(b"\n"):
                        data = data[1:]
                    lines = data.split(b"\n")
                    partial[r] = lines.pop()
                    cut[r] = len(partial[r]) > LONGEST
                    if cut[r]:
                        lines.append(partial[r])
                        partial[r] = b""
                    _write(out, r, lines)
                    out.flush()
            if done and partial[r]:
                _write(out, r, [partial[r]])
                partial[r] = b""
        out.flush()
        if done or not follow:
            return
        time.sleep(pause)
