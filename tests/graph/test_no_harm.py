"""The graph pass runs no script and cannot harm the project (issue 31, points 1 and 2).

Every project module it imports runs as its allow-list copy (snlint.graph.definitions),
and the worker's audit hook (snlint.graph.guard) refuses what still runs and would write,
delete, start a process or reach the network. After each run the project folder is
byte-identical.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("torch")

from graph_helpers import write  # noqa: E402

from snlint.config import Config  # noqa: E402
from snlint.engine import run  # noqa: E402


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def graph_run(root: Path, timeout: float = 20.0):
    before = snapshot(root)
    result = run([str(root)], Config(root=root, graph=True, graph_timeout=timeout, cache=False))
    assert snapshot(root) == before, "the graph pass changed the project"
    return result


def codes(result) -> list[tuple[str, int]]:
    return [(f.code, f.line) for f in result.findings]


TRAIN = '''
    import argparse
    import os
    import shutil

    import torch

    parser = argparse.ArgumentParser()
    parser.add_argument("--outf", default="checkpoints")
    parser.add_argument("--ndf", type=int, default=8)
    opt = parser.parse_args()

    shutil.rmtree("samples")
    try:
        os.makedirs(opt.outf)
    except OSError:
        pass
    for epoch in range(3):
        torch.save({"epoch": epoch}, os.path.join(opt.outf, "netD.pth"))
'''

MODELS = '''
    import torch.nn as nn

    from train import opt


    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, opt.ndf, 4, 2, 1)
            self.bn = nn.BatchNorm2d(opt.ndf)

        def forward(self, x):
            return self.bn(self.conv(x)).mean(dim=(1, 2, 3))
'''


def test_a_module_importing_the_training_script_runs_only_its_definitions(tmp_path):
    write(tmp_path, "train.py", TRAIN)
    write(tmp_path, "models.py", MODELS)
    write(tmp_path, "samples/x.png", "not an image")
    result = graph_run(tmp_path)
    assert [(r.target.class_name, r.status) for r in result.graph] == [("Discriminator", "ok")]
    assert codes(result) == [("SN301", 11)]
    assert not (tmp_path / "checkpoints").exists()


HOSTILE = '''
    import argparse
    import os
    import shutil

    import torch.nn as nn


    def mark(value):
        open(os.path.join({root!r}, "TYPE_RAN"), "w").write(value)
        return value


    parser = argparse.ArgumentParser()
    parser.add_argument("--outf", default="out", type=mark)
    opt = parser.parse_args()

    shutil.rmtree({samples!r})
    os.unlink({image!r})
    os.system("touch " + {root!r} + "/SYSTEM_RAN")
    if True:
        shutil.rmtree({samples!r})
    try:
        os.makedirs(os.path.join({root!r}, opt.outf))
    except OSError:
        pass


    class Discriminator(nn.Module):
        shutil.rmtree({samples!r})

        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 8, 3)

        def forward(self, x):
            return self.conv(x).mean(dim=(1, 2, 3))


    class Critic(nn.Module):
        def __init__(self, junk=os.remove({image!r})):
            super().__init__()
            self.conv = nn.Conv2d(3, 8, 3)

        def forward(self, x):
            return self.conv(x).mean(dim=(1, 2, 3))
'''


def test_top_level_class_body_default_and_argparse_side_effects_never_run(tmp_path):
    write(tmp_path, "samples/x.png", "not an image")
    write(tmp_path, "nets.py", HOSTILE.format(root=str(tmp_path), samples=str(tmp_path / "samples"),
                                              image=str(tmp_path / "samples" / "x.png")))
    result = graph_run(tmp_path)
    assert [(r.target.class_name, r.status) for r in result.graph] == [
        ("Discriminator", "ok"), ("Critic", "build_error")]
    # The default is computed at the constructor's first call, as its body runs: there
    # the worker refuses the delete.
    [note] = [f for f in result.findings if f.code == "SN912"]
    assert note.message.startswith(
        "graph pass: cannot build Critic: Critic() raised Refused: snlint graph pass refused: "
        f"os.remove({str(tmp_path / 'samples' / 'x.png')!r})")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["nets.py", "samples"]


def test_a_registry_decorator_still_registers_the_class(tmp_path):
    write(tmp_path, "registry.py", '''
        MODELS = {}


        def register(name):
            def add(cls):
                MODELS[name] = cls
                return cls
            return add
    ''')
    write(tmp_path, "nets.py", '''
        import torch.nn as nn

        from registry import MODELS, register


        @register("block")
        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.bn = nn.BatchNorm2d(3)

            def forward(self, x):
                return self.bn(x)


        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                self.block = MODELS["block"]()

            def forward(self, x):
                return self.block(x).mean(dim=(1, 2, 3))
    ''')
    result = graph_run(tmp_path)
    assert [(r.target.class_name, r.status) for r in result.graph] == [("Discriminator", "ok")]
    assert [m.type_name for m in result.graph[0].modules] == ["BatchNorm2d"]


CONSTRUCTOR = '''
    import os
    import socket
    import subprocess

    import torch.nn as nn


    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            with open("scratch.txt", "w") as handle:  # the worker's own folder: allowed
                handle.write("ok")
            for attempt in (
                lambda: os.remove({image!r}),
                lambda: subprocess.Popen(["setsid", "sleep", "1000"]),
                lambda: os.system("sleep 1000 &"),
                lambda: os.fork(),
                lambda: socket.socket().connect(("127.0.0.1", 9)),
                lambda: open({new!r}, "w"),
            ):
                try:
                    attempt()
                except OSError:
                    pass
            self.conv = nn.Conv2d(3, 8, 3)

        def forward(self, x):
            return self.conv(x).mean(dim=(1, 2, 3))
'''


def test_the_worker_refuses_deletes_spawns_connections_and_writes_and_says_so(tmp_path):
    image, new = tmp_path / "samples" / "x.png", tmp_path / "NEW"
    write(tmp_path, "samples/x.png", "not an image")
    write(tmp_path, "nets.py", CONSTRUCTOR.format(image=str(image), new=str(new)))
    result = graph_run(tmp_path)
    assert [(r.target.class_name, r.status) for r in result.graph] == [("Discriminator", "ok")]
    [note] = result.findings
    assert (note.code, note.line) == ("SN910", 9)
    assert note.message == (
        f"graph pass: refused while importing and building {tmp_path / 'nets.py'}: "
        f"os.remove({str(image)!r}), subprocess.Popen(['setsid', 'sleep', '1000']), "
        "os.system('sleep 1000 &'), os.fork(), "
        "socket.connect(('127.0.0.1', 9)), "
        f"open({str(new)!r}, 'w')")


def test_an_uncaught_refusal_fails_the_build_with_what_was_refused(tmp_path):
    write(tmp_path, "samples/x.png", "not an image")
    write(tmp_path, "nets.py", f'''
        import shutil

        import torch.nn as nn


        class Discriminator(nn.Module):
            def __init__(self):
                super().__init__()
                shutil.rmtree({str(tmp_path / "samples")!r})
                self.conv = nn.Conv2d(3, 8, 3)
    ''')
    result = graph_run(tmp_path)
    [note] = result.findings
    assert note.code == "SN912"
    assert note.message.startswith(
        "graph pass: cannot build Discriminator: Discriminator() raised Refused: snlint graph "
        "pass refused: "
        f"shutil.rmtree({str(tmp_path / 'samples')!r})")
