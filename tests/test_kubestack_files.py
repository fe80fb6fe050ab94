"""The stack's files are replaced whole: a process starting while another is
written never reads an empty or half-written kubeconfig."""

from __future__ import annotations

import threading

from kubestack.files import write_atomic


def test_a_reader_sees_the_old_or_the_new_file_never_a_part(tmp_path):
    path = tmp_path / "volcano.kubeconfig"
    texts = ["a" * 200_000, "b" * 200_000]
    write_atomic(path, texts[0], 0o600)
    stop = threading.Event()
    torn: list[int] = []

    def read() -> None:
        while not stop.is_set():
            text = path.read_text()
            if text not in texts:
                torn.append(len(text))

    reader = threading.Thread(target=read)
    reader.start()
    try:
        for n in range(300):
            write_atomic(path, texts[n % 2], 0o600)
    finally:
        stop.set()
        reader.join()
    assert torn == []
    assert path.stat().st_mode & 0o777 == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["volcano.kubeconfig"]
