#!/usr/bin/python3
"""CPython's zlib and gzip modules as the reference for zarrxt's gzip and zlib codecs
(tests/test_deflate_fallback.cpp). Only the standard library is used.

    python_deflate.py write DIR   write reference streams: DIR/<name>.in (the payload) and
                                  DIR/<name>.<gzip|zlib> (its stream), plus DIR/bomb.<gzip|zlib>
                                  (64 MiB of zeros) and DIR/index.txt listing the names
    python_deflate.py check DIR   for every DIR/<name>.in with a DIR/<name>.<container>.zarrxt
                                  that zarrxt encoded, decode it with CPython and compare; checks
                                  the container headers too. Prints "ok"/"FAIL" lines and a total.

The streams cover what a decoder meets in the wild: every compression level, stored, fixed and
dynamic Huffman blocks, streams of many blocks, small windows, sync and full flushes mid-stream,
gzip members with the optional header fields (FEXTRA, FNAME, FCOMMENT, FHCRC) and several members
back to back.
"""
import gzip
import hashlib
import os
import struct
import sys
import zlib


def payloads():
    """name -> bytes; deterministic."""
    out = {"empty": b"", "one": b"\x2a", "hello": b"hello zarr " * 3}
    out["text"] = b"".join(b"zarr chunk %d " % (i % 97) for i in range(20000))
    state = 12345
    noise = bytearray()
    for _ in range(70001):  # incompressible: forces stored blocks at every level
        state = (state * 1103515245 + 12345) & 0x7FFFFFFF
        noise.append(state >> 16 & 0xFF)
    out["noise"] = bytes(noise)
    out["ramp"] = bytes((i * 7 >> 10) & 0xFF for i in range(3 << 20))  # multi-megabyte, many blocks
    out["floats"] = struct.pack("<%dd" % 30000, *[i * 0.25 - 100 for i in range(30000)])
    return out


def raw_deflate(data, level=6, wbits=-15, strategy=zlib.Z_DEFAULT_STRATEGY, flushes=()):
    c = zlib.compressobj(level, zlib.DEFLATED, wbits, 8, strategy)
    parts = []
    pos = 0
    for at, mode in flushes:
        parts.append(c.compress(data[pos:at]))
        parts.append(c.flush(mode))
        pos = at
    parts.append(c.compress(data[pos:]))
    parts.append(c.flush())
    return b"".join(parts)


def zlib_stream(data, level=6, wbits=15, **kw):
    return raw_deflate(data, level, wbits, **kw)


def gzip_member(data, level=6, extra=None, name=None, comment=None, hcrc=False, mtime=0, os_byte=3):
    """A gzip member built field by field (RFC 1952) around CPython's raw deflate."""
    flags = (2 if hcrc else 0) | (4 if extra is not None else 0) | (8 if name is not None else 0) | (
        16 if comment is not None else 0)
    header = struct.pack("<BBBBIBB", 0x1F, 0x8B, 8, flags, mtime, 0, os_byte)
    if extra is not None:
        header += struct.pack("<H", len(extra)) + extra
    if name is not None:
        header += name + b"\0"
    if comment is not None:
        header += comment + b"\0"
    if hcrc:
        header += struct.pack("<H", zlib.crc32(header) & 0xFFFF)
    trailer = struct.pack("<II", zlib.crc32(data), len(data) & 0xFFFFFFFF)
    return header + raw_deflate(data, level) + trailer


def write(d):
    os.makedirs(d, exist_ok=True)
    names = []

    def put(name, data, container, stream):
        with open(os.path.join(d, name + ".in"), "wb") as f:
            f.write(data)
        with open(os.path.join(d, name + "." + container), "wb") as f:
            f.write(stream)
        names.append(name + "." + container)

    for pname, data in payloads().items():
        for level in (0, 1, 6, 9):
            put("%s.l%d" % (pname, level), data, "zlib", zlib.compress(data, level))
            put("%s.l%d" % (pname, level), data, "gzip", gzip.compress(data, level, mtime=0))
    data = payloads()["text"]
    put("text.window9", data, "zlib", zlib_stream(data, 9, wbits=9))
    put("text.fixed", data, "zlib", zlib_stream(data, 6, strategy=zlib.Z_FIXED))
    put("text.huffman_only", data, "zlib", zlib_stream(data, 6, strategy=zlib.Z_HUFFMAN_ONLY))
    put("text.rle", data, "zlib", zlib_stream(data, 6, strategy=zlib.Z_RLE))
    put("text.flushes", data, "zlib",
        zlib_stream(data, 6, flushes=[(1000, zlib.Z_SYNC_FLUSH), (50000, zlib.Z_FULL_FLUSH),
                                       (90000, zlib.Z_SYNC_FLUSH)]))
    put("text.header_fields", data, "gzip",
        gzip_member(data, extra=b"ZX\x04\x00abcd", name=b"chunk.bin", comment=b"written by CPython", hcrc=True,
                    mtime=1700000000, os_byte=255))
    put("text.flushes", data, "gzip",
        b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03"
        + raw_deflate(data, 6, flushes=[(5000, zlib.Z_FULL_FLUSH)])
        + struct.pack("<II", zlib.crc32(data), len(data)))
    hello = payloads()["hello"]
    put("hello.three_members", hello * 3, "gzip",
        gzip_member(hello) + gzip_member(hello, level=0, name=b"b") + gzip_member(hello, level=9, hcrc=True))
    put("empty.two_members", b"", "gzip", gzip_member(b"") + gzip_member(b""))
    # A deflate bomb: 64 MiB of zeros in about 64 KB.
    zeros = bytes(64 << 20)
    with open(os.path.join(d, "bomb.zlib"), "wb") as f:
        f.write(zlib.compress(zeros, 9))
    with open(os.path.join(d, "bomb.gzip"), "wb") as f:
        f.write(gzip.compress(zeros, 9, mtime=0))
    with open(os.path.join(d, "index.txt"), "w") as f:
        f.write("\n".join(names) + "\n")
    print("wrote %d reference streams" % len(names))
    return 0


def check(d):
    failed = 0
    checked = 0
    for entry in sorted(os.listdir(d)):
        if not entry.endswith(".zarrxt"):
            continue
        base, container = entry[: -len(".zarrxt")].rsplit(".", 1)
        with open(os.path.join(d, entry), "rb") as f:
            stream = f.read()
        with open(os.path.join(d, base + ".in"), "rb") as f:
            want = f.read()
        problems = []
        try:
            if container == "gzip":
                if stream[:3] != b"\x1f\x8b\x08":
                    problems.append("not a gzip member with deflate (%s)" % stream[:3].hex())
                got = gzip.decompress(stream)
                # One member, and its trailer states the CRC-32 and size of the payload.
                crc, isize = struct.unpack("<II", stream[-8:])
                if crc != zlib.crc32(want) or isize != len(want) & 0xFFFFFFFF:
                    problems.append("trailer crc %08x size %d, expected %08x %d" % (crc, isize, zlib.crc32(want),
                                                                                   len(want)))
            else:
                cmf, flg = stream[0], stream[1]
                if cmf & 0x0F != 8 or (cmf * 256 + flg) % 31 != 0 or flg & 0x20:
                    problems.append("bad zlib header %02x %02x" % (cmf, flg))
                d_ = zlib.decompressobj()
                got = d_.decompress(stream) + d_.flush()
                if not d_.eof or d_.unused_data:
                    problems.append("stream does not end exactly at its end marker")
                if struct.unpack(">I", stream[-4:])[0] != zlib.adler32(want):
                    problems.append("adler32 trailer mismatch")
            if got != want:
                problems.append("decodes to %d bytes (sha256 %s), expected %d (%s)" % (
                    len(got), hashlib.sha256(got).hexdigest()[:16], len(want), hashlib.sha256(want).hexdigest()[:16]))
        except Exception as exc:  # report every stream
            problems.append("CPython refused it: %r" % exc)
        checked += 1
        if problems:
            failed += 1
            print("FAIL %s: %s" % (entry, "; ".join(problems)))
        else:
            print("ok   %s" % entry)
    print("CPython zlib %s decoded %d streams written by zarrxt: %d failed" % (zlib.ZLIB_RUNTIME_VERSION, checked,
                                                                            failed))
    return 1 if failed or checked == 0 else 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "write":
        sys.exit(write(sys.argv[2]))
    if len(sys.argv) == 3 and sys.argv[1] == "check":
        sys.exit(check(sys.argv[2]))
    sys.stderr.write(__doc__)
    sys.exit(2)
