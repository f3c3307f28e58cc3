#!/usr/bin/env python3
"""Finds the 4 KiB blocks a device got wrong, and whose pages they are.

  blocks.py bad DEV                    blocks of DEV that fail to read (EIO:
                                       dm-integrity's checksum mismatches)
  blocks.py differ DEV1 DEV2 SKIP      blocks whose content differs between
                                       two raid1 mirrors, from byte SKIP of
                                       each (md's data offset), as blocks of
                                       the array
  blocks.py owners MNT < BLOCKS        each block (read from stdin, one a
                                       line) as "BLOCK INO PAGE" of the
                                       regular file under MNT that holds it
                                       (FIEMAP via filefrag), or "BLOCK - -"

Reads go around the page cache (O_DIRECT) so that the device's own check
runs; one line per block on stdout, sorted. Exit 2 on bad usage.
"""
import mmap
import os
import re
import subprocess
import sys

BLOCK = 4096
CHUNK = 64 * BLOCK


def direct_fd(path):
    return os.open(path, os.O_RDONLY | os.O_DIRECT)


def size_of(fd):
    return os.lseek(fd, 0, os.SEEK_END)


def read_at(fd, buf, off):
    """Bytes read into buf at off, or None on EIO."""
    try:
        return os.preadv(fd, [buf], off)
    except OSError:
        return None


def bad(dev):
    fd = direct_fd(dev)
    buf, one = mmap.mmap(-1, CHUNK), mmap.mmap(-1, BLOCK)
    end = size_of(fd)
    for off in range(0, end, CHUNK):
        if read_at(fd, buf, off) is not None:
            continue
        # a chunk failed: which of its blocks
        for b in range(off, min(off + CHUNK, end), BLOCK):
            if read_at(fd, one, b) is None:
                print(b // BLOCK)


def differ(dev1, dev2, skip):
    fds = [direct_fd(dev1), direct_fd(dev2)]
    bufs = [mmap.mmap(-1, CHUNK), mmap.mmap(-1, CHUNK)]
    end = min(size_of(fd) for fd in fds)
    for off in range(skip, end, CHUNK):
        n = min(read_at(fd, b, off) or 0 for fd, b in zip(fds, bufs))
        if bufs[0][:n] == bufs[1][:n]:
            continue
        for i in range(0, n, BLOCK):
            if bufs[0][i:i + BLOCK] != bufs[1][i:i + BLOCK]:
                print((off - skip + i) // BLOCK)


def extents(mnt):
    """(first sector, sectors, ino, first file sector) of every file's extents."""
    out = []
    ext = re.compile(r'^\s*\d+:\s*(\d+)\.\.\s*\d+:\s*(\d+)\.\.\s*\d+:\s*(\d+):')
    for root, _, names in os.walk(mnt):
        for name in names:
            path = os.path.join(root, name)
            st = os.lstat(path)
            if not os.path.isfile(path) or os.path.islink(path):
                continue
            res = subprocess.run(['filefrag', '-v', '-b512', path], capture_output=True, text=True)
            for line in res.stdout.splitlines():
                m = ext.match(line)
                if m:
                    logical, physical, length = map(int, m.groups())
                    out.append((physical, length, st.st_ino, logical))
    return out


def owners(mnt):
    exts = extents(mnt)
    for line in sys.stdin:
        block = int(line)
        sector = block * (BLOCK // 512)
        owner = '- -'
        for phys, length, ino, logical in exts:
            if phys <= sector < phys + length:
                owner = f'{ino} {(logical + sector - phys) * 512 // BLOCK}'
                break
        print(block, owner)


def main(argv):
    if len(argv) == 3 and argv[1] == 'bad':
        bad(argv[2])
    elif len(argv) == 5 and argv[1] == 'differ' and argv[4].isdigit():
        differ(argv[2], argv[3], int(argv[4]))
    elif len(argv) == 3 and argv[1] == 'owners':
        owners(argv[2])
    else:
        print('usage: blocks.py bad DEV | differ DEV1 DEV2 SKIP | owners MNT < BLOCKS', file=sys.stderr)
        return 2
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
