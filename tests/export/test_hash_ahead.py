"""The provenance's SHA-256 taken ahead on a thread of its own (app.export.provenance.hash_ahead): the digest
file_info gives is the file's as it is when file_info asks, each file is hashed once."""

from __future__ import annotations

import hashlib
import os
import threading

from app.export import provenance


def _counting(monkeypatch) -> list[str]:
    calls: list[str] = []
    real = provenance._sha256

    def counted(path):
        calls.append(threading.current_thread().name)
        return real(path)
    monkeypatch.setattr(provenance, "_sha256", counted)
    monkeypatch.setattr(provenance, "_HASH_CACHE", {})
    monkeypatch.setattr(provenance, "_AHEAD", {})
    return calls


def test_the_digest_taken_ahead_is_the_files_and_taken_once(tmp_path, monkeypatch):
    calls = _counting(monkeypatch)
    f = tmp_path / "a.smf"
    data = os.urandom(3 << 20)                  # 3 MiB: the hash reads it in 1 MiB blocks
    f.write_bytes(data)
    provenance.hash_ahead([str(f), str(f), str(tmp_path / "gone.smf")])    # twice, and a file not there
    provenance.hash_ahead([str(f)])                                          # asked again while (or after) hashing
    info = provenance.file_info(str(f))
    assert info["sha256"] == hashlib.sha256(data).hexdigest()
    assert info["size"] == 3 << 20 and info["name"] == "a.smf"
    assert provenance.file_info(str(f))["sha256"] == info["sha256"]
    assert calls == ["nestscope-sha256"]       # once, on the hashing thread, never on this one
    gone = provenance.file_info(str(tmp_path / "gone.smf"))
    assert gone["size"] is None and gone["sha256"] is None


def test_a_file_changed_after_it_was_hashed_ahead_is_hashed_as_it_is_now(tmp_path, monkeypatch):
    calls = _counting(monkeypatch)
    f = tmp_path / "b.smf"
    f.write_bytes(b"before")
    provenance.hash_ahead([str(f)])
    f.write_bytes(b"after, longer")            # another size: another file for the digest
    info = provenance.file_info(str(f))
    assert info["sha256"] == hashlib.sha256(b"after, longer").hexdigest() and info["size"] == 13
    assert calls[-1] == threading.current_thread().name and len(calls) == 2
