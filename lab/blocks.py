#!/usr/bin/env python3
"""Finds the 4 KiB blocks a device got wrong, and whose pages they are.

  blocks.py bad DEV                    blocks of DEV that fail to read (EIO:
                                       dm-integrity's checksum mismatches)
  blocks.py differ DEV1 DEV2 SKIP      blocks whose content differs between
                                       two raid1 mirrors, from byte SKIP of
                                       each (md's data offset), as blocks of
                                       the array
  blocks.py scrub DEV PID FILE         blocks of FILE that fail to read from
                                       DEV (its filesystem's device), read
                                       again and again until PID exits (0:
                                       once): a mismatch that a rewrite
                                       will repair
  blocks.py owners MNT < BLOCKS        each block (read from stdin, one a
                                       line: "BLOCK" or "BLOCK SECTOR") as
                                       "BLOCK INO PAGE" of the regular file
                                       under MNT that holds SECTOR, else the
                                       block's first sector in a file
                                       (FIEMAP via filefrag), or "BLOCK - -"

Reads go around the page cache (O_DIRECT) so that the device's own check
runs; one line per block on stdout, sorted. Exit 2 on bad usage.
"""
import mmap
import os
import re
import subprocess
import sys
import time

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


EXTENT = re.compile(r'^\s*\d+:\s*(\d+)\.\.\s*\d+:\s*(\d+)\.\.\s*\d+:\s*(\d+):')


def file_extents(path):
    """(first sector, sectors, ino, first file sector) of path's extents."""
    out = []
    ino = os.lstat(path).st_ino
    res = subprocess.run(['filefrag', '-v', '-b512', path], capture_output=True, text=True)
    for line in res.stdout.splitlines():
        m = EXTENT.match(line)
        if m:
            logical, physical, length = map(int, m.groups())
            out.append((physical, length, ino, logical))
    return out


def extents(mnt):
    """file_extents of every regular file under mnt."""
    out = []
    for root, _, names in os.walk(mnt):
        for name in names:
            path = os.path.join(root, name)
            if os.path.isfile(path) and not os.path.islink(path):
                out += file_extents(path)
    return out


def alive(pid):
    return os.path.exists(f'/proc/{pid}')


def file_blocks(path):
    return sorted({s * 512 // BLOCK for phys, n, _, _ in file_extents(path)
                   for s in range(phys, phys + n, BLOCK // 512)})


def scrub(dev, pid, path):
    # the file's blocks, once it has them (wac makes it as it starts);
    # pid 0: one pass
    blocks = []
    while not blocks and (pid == '0' or alive(pid)):
        if os.path.exists(path):
            blocks = file_blocks(path)
        if not blocks and pid != '0':
            time.sleep(0.05)
    fd, one, seen = direct_fd(dev), mmap.mmap(-1, BLOCK), set()
    while True:
        for b in blocks:
            if b not in seen and read_at(fd, one, b * BLOCK) is None:
                seen.add(b)
                print(b, flush=True)
        if pid == '0' or not alive(pid):
            break


def owner_of(sector, exts):
    for phys, length, ino, logical in exts:
        if phys <= sector < phys + length:
            return f'{ino} {(logical + sector - phys) * 512 // BLOCK}'
    return None


def owners(mnt):
    exts = extents(mnt)
    for line in sys.stdin:
        words = line.split()
        block = int(words[0])
        # the sector the device named (DIX: the first bad one), else the
        # block's first sector in a file: with 1 KiB filesystem blocks a
        # 4 KiB block of the device can start outside a file (ext4's file
        # at fs block 4n+1) and hold a file page's first sectors
        if len(words) > 1:
            sectors = [int(words[1])]
        else:
            first = block * (BLOCK // 512)
            sectors = range(first, first + BLOCK // 512)
        owner = next((o for o in map(lambda s: owner_of(s, exts), sectors) if o), '- -')
        print(block, owner)


def main(argv):
    if len(argv) == 3 and argv[1] == 'bad':
        bad(argv[2])
    elif len(argv) == 5 and argv[1] == 'differ' and argv[4].isdigit():
        differ(argv[2], argv[3], int(argv[4]))
    elif len(argv) == 5 and argv[1] == 'scrub' and argv[3].isdigit():
        scrub(argv[2], argv[3], argv[4])
    elif len(argv) == 3 and argv[1] == 'owners':
        owners(argv[2])
    else:
        print('usage: blocks.py bad DEV | differ DEV1 DEV2 SKIP | scrub DEV PID FILE | owners MNT < BLOCKS',
              file=sys.stderr)
        return 2
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
