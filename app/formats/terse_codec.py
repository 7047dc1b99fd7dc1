"""The TERSE decompression loops (PACK and SPACK), pure Python; ``app.formats._terse`` is the compiled twin.

A TERSE stream (what IBM's AMATERSE / TRSMAIN writes) is a 12-byte header followed by 12-bit codes, two codes
to three bytes, high nibble first.  Code 0 ends the data, codes 1..256 are the bytes 0..255, code 257 is the
record mark that ends a variable-length record, and codes 258..4095 name entries of a dictionary that both
ends rebuild as they go:

* PACK keeps a tree of 3,838 nodes, each a parent link plus one extension symbol, recycled in least recently
  used order; a code names a node whose path back to a root spells its symbols (IBM's original TERSE; the
  decoder published by the Open Mainframe Project reverses the parent links on the way up and restores them on
  the way down, which leaves the same tree as walking with a stack, as here);
* SPACK keeps pairs (left, right) of earlier codes, each new pair being (previous code, this code), with
  reference counts and a least-recently-used list of pairs nobody refers to, which are reused when the
  dictionary is full.

Both loops work on one state vector (``int64``, layout below) so that a stream can stop when its output buffer
is full and go on later from the same place, on either path.  The SPACK expansion of a single code can be very
long (each pair may double the length of the one before: a decompression bomb), so it is resumable mid-code
through an explicit stack kept in the state.  Any index read back from the dictionary is checked before use,
so damaged input ends the loop with a status (never an out-of-range access or an endless loop): the compiled
loop mirrors every check, and tests compare the two paths byte for byte.

Output is what z/OS FTP in binary mode with ``SITE RDW`` gives for the data set: fixed records back to back,
variable records each behind its record descriptor word (length including the 4-byte RDW, then two zero bytes).
"""

from __future__ import annotations

import numpy as np

# ----------------------------------------------------------------------------- state vector layout
MODE, VAR, MAXREC, CODE, BASE, STATUS, RECSTART, RECORDS, PREV, AVAIL, STARTED, SP, CUR, PEND, CURCODE = range(15)
HEAD = 16
TREE = 4097                      # dictionary entries 0..4096 (4096 only a sentinel)
STACK_MAX = 4200                 # deeper than any valid SPACK expansion (a pair is always newer than its parts)
A0, A1, A2, A3 = (HEAD + i * TREE for i in range(4))    # PACK: father, extension, backward, forward
STK = HEAD + 4 * TREE            # SPACK: left, right, back, next/count; then the expansion stack
SIZE = STK + STACK_MAX

PACK, SPACK = 0, 1
RUN, END, CUT, BAD_CODE, BAD_CHAIN, LONG_RECORD = 0, 1, 2, -1, -2, -3
RECORD_MARK = 257
CODESIZE = 257
NONE = -1
PACK_ROOM = 5 * 4100             # most output bytes one PACK code can give (a chain of 4096 symbols, RDWs)
SPACK_ROOM = 8                   # most output bytes one symbol can give
CHAIN_MAX = 4096                 # longer PACK chains only come from damaged data (a cycle)


def new_state(mode: int, variable: bool, max_record: int, base: int = 12) -> np.ndarray:
    """The state vector of a fresh stream whose codes start at byte ``base`` of the input."""
    s = np.zeros(SIZE, np.int64)
    s[MODE], s[VAR], s[MAXREC], s[BASE] = mode, int(variable), max_record, base
    s[RECSTART], s[CUR] = -1, -1
    if mode == PACK:
        _init_pack(s)
    else:
        _init_spack(s)
    return s


def _init_pack(s: np.ndarray) -> None:
    blank = 1 + 0x40                                  # the code of an EBCDIC blank
    father = np.arange(257, 4095, dtype=np.int64)     # node i hangs below node i-1 (the first below the blank)
    father[0] = blank
    s[A0 + 258:A0 + 4096] = father
    s[A1 + 258:A1 + 4096] = blank
    s[A2 + 259:A2 + 4096] = np.arange(258, 4095)      # a doubly linked ring 0 -> 258 -> ... -> 4095 -> 0
    s[A3 + 258:A3 + 4095] = np.arange(259, 4096)
    s[A2 + 0], s[A3 + 0], s[A2 + 258], s[A3 + 4095] = 4095, 258, 0, 0


def _init_spack(s: np.ndarray) -> None:
    s[A0:A0 + TREE] = NONE                            # left: NONE marks a leaf or an unused entry
    s[A1:A1 + CODESIZE + 1] = np.arange(CODESIZE + 1)
    s[A1 + CODESIZE + 1:A1 + TREE] = NONE
    s[A3 + CODESIZE + 1:A3 + 4095] = np.arange(CODESIZE + 2, 4096)   # the free list 258 -> ... -> 4095
    s[A3 + 4095] = NONE
    s[A3 + 4096] = NONE
    s[A3 + 1:A3 + CODESIZE + 1] = NONE
    s[A3 + 0], s[A2 + 0] = 0, 0                       # the least-recently-used ring starts empty
    s[AVAIL] = CODESIZE + 1


def step(s: np.ndarray, raw, out: bytearray, olen: int) -> int:
    """Decode from the state ``s`` into ``out`` (whose first ``olen`` bytes are kept) until ``out`` is nearly
    full or the stream stops (``s[STATUS]`` != RUN); returns the new output length."""
    st = s.tolist()
    olen = (_pack if st[MODE] == PACK else _spack)(st, raw, out, olen)
    s[:] = st
    return olen


def _code(raw, n: int, base: int, k: int) -> int:
    """The ``k``-th 12-bit code, or -1 when the input ends first."""
    b = base + ((3 * k) >> 1)
    if b + 1 >= n:
        return -1
    if k & 1:
        return ((raw[b] & 15) << 8) | raw[b + 1]
    return (raw[b] << 4) | (raw[b + 1] >> 4)


class _Out:
    """The output side: bytes, record marks and RDWs (one per variable record, filled in when it ends)."""

    __slots__ = ("buf", "n", "var", "maxrec", "rs", "recs")

    def __init__(self, st: list, buf: bytearray, n: int) -> None:
        self.buf, self.n, self.var, self.maxrec = buf, n, st[VAR], st[MAXREC]
        self.rs, self.recs = st[RECSTART], st[RECORDS]

    def put(self, x: int) -> bool:
        """Write symbol ``x``; False when a variable record grew past its maximum length."""
        if x == 0:
            return True
        buf = self.buf
        if x == RECORD_MARK:
            if self.var:
                if self.rs >= 0:
                    ln = self.n - self.rs
                    buf[self.rs:self.rs + 4] = bytes((ln >> 8, ln & 255, 0, 0))
                    self.rs = -1
                else:
                    buf[self.n:self.n + 4] = b"\x00\x04\x00\x00"
                    self.n += 4
                self.recs += 1
            return True
        if self.var and self.rs < 0:
            self.rs = self.n
            self.n += 4
        buf[self.n] = x - 1
        self.n += 1
        return not (self.var and self.n - self.rs - 4 > self.maxrec)

    def save(self, st: list) -> int:
        st[RECSTART], st[RECORDS] = self.rs, self.recs
        return self.n


def _pack(st: list, raw, buf: bytearray, olen: int) -> int:
    o = _Out(st, buf, olen)
    n, base, k, x = len(raw), st[BASE], st[CODE], st[PREV]
    limit = len(buf) - PACK_ROOM
    status = RUN
    while o.n <= limit:
        d = _code(raw, n, base, k)
        st[CURCODE] = k
        if d < 0:
            status = CUT
            break
        k += 1
        if d == 0:
            status = END
            break
        y = st[A2 + 0]                    # the least recently used node is taken for the new entry
        q = st[A2 + y]
        st[A2 + 0] = q
        st[A3 + q] = 0
        h, code, path = y, d, []
        while d > CODESIZE:               # walk up to the root, moving each node of the path to the front
            if len(path) >= CHAIN_MAX:
                status = BAD_CHAIN
                break
            q, r = st[A3 + d], st[A2 + d]
            st[A3 + r] = q
            st[A2 + q] = r
            st[A3 + d] = h
            st[A2 + h] = d
            h = d
            path.append(d)
            d = st[A0 + d]
        if status:
            break
        q = st[A3 + 0]
        st[A3 + y] = q
        st[A2 + q] = y
        st[A3 + 0] = h
        st[A2 + h] = 0
        st[A1 + x] = d                    # the previous new entry ends with this code's first symbol
        ok = o.put(d)
        for p in reversed(path):          # then the extensions from the root down
            ok = o.put(st[A1 + p]) and ok
        x = y
        st[A0 + y] = code                 # the new entry: this code's string and, later, one more symbol
        if not ok:
            status = LONG_RECORD
            break
    st[CODE], st[PREV], st[STATUS] = k, x, status
    return o.save(st)


def _bad(i: int) -> bool:
    return not 0 <= i < TREE


def _spack(st: list, raw, buf: bytearray, olen: int) -> int:
    o = _Out(st, buf, olen)
    n, base, k = len(raw), st[BASE], st[CODE]
    L, R, B, C = A0, A1, A2, A3
    limit = len(buf) - SPACK_ROOM
    status = RUN
    cur, sp = st[CUR], st[SP]

    def descend(x: int) -> int:
        """Push the right parts down the left spine of ``x``; the leaf reached, or -1 when damaged."""
        nonlocal sp
        while x > CODESIZE:
            if _bad(x) or st[L + x] < 0 or sp >= STACK_MAX:
                return -1
            st[STK + sp] = st[R + x]
            sp += 1
            x = st[L + x]
        return x

    def lru_add(m: int) -> bool:
        back = st[B + 0]
        if _bad(back):
            return False
        st[C + m], st[B + 0], st[B + m], st[C + back] = 0, m, back, m
        return True

    def delete_ref(m: int) -> bool:
        if _bad(m):
            return False
        if st[C + m] == NONE:
            return lru_add(m)
        st[C + m] += 1
        return True

    def bump_ref(m: int) -> bool:
        if st[C + m] < 0:
            st[C + m] -= 1
            return True
        fw, pv = st[C + m], st[B + m]
        if _bad(fw) or _bad(pv):
            return False
        st[C + pv] = fw
        st[B + fw] = pv
        st[C + m] = NONE
        return True

    def lru_kill() -> bool:
        p = st[C + 0]
        if _bad(p) or p == 0:
            return False
        q, r = st[C + p], st[B + p]
        if _bad(q) or _bad(r):
            return False
        st[B + q] = r
        st[C + r] = q
        if not (delete_ref(st[L + p]) and delete_ref(st[R + p])):
            return False
        st[C + p] = st[AVAIL]
        st[AVAIL] = p
        return True

    while True:
        if cur >= 0:                                  # inside the expansion of a code
            if o.n > limit:
                break
            if not o.put(cur):
                status = LONG_RECORD
                break
            if sp:
                sp -= 1
                cur = descend(st[STK + sp])
                if cur < 0:
                    status = BAD_CODE
                    break
                continue
            cur = -1
            g = st[PEND] >> 1                           # the code just expanded
            if st[PEND] & 1:                            # the new pair (previous code, this code)
                node = st[AVAIL]
                if _bad(node):
                    status = BAD_CODE
                    break
                st[AVAIL] = st[C + node]
                h = st[PREV]
                st[L + node], st[R + node] = h, g
                if not (bump_ref(h) and bump_ref(g) and lru_add(node)):
                    status = BAD_CODE
                    break
            st[PREV], st[PEND] = g, 0
            continue
        g = _code(raw, n, base, k)
        st[CURCODE] = k
        if g < 0:
            status = CUT
            break
        k += 1
        if g == 0:
            status = END
            break
        if st[STARTED]:
            if st[AVAIL] == NONE and not lru_kill():
                status = BAD_CODE
                break
            st[PEND] = (g << 1) | 1
        else:
            st[STARTED], st[PEND] = 1, g << 1
        cur = descend(g)
        if cur < 0:
            status = BAD_CODE
            break
    st[CODE], st[STATUS], st[CUR], st[SP] = k, status, cur, sp
    return o.save(st)
