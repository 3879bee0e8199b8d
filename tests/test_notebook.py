"""Notebooks: code cells linted as one module, IPython syntax skipped, findings at
(cell, line), fixed text written back leaving every other byte of the JSON alone."""

from __future__ import annotations

import json

from click.testing import CliRunner

from snlint.cli import main
from snlint.engine import lint_text
from snlint.findings import Finding
from snlint.notebook import parse_notebook

HEAD = "        self.head = nn.Conv2d(128, 1, 4, 1, 0)\n"
CELLS = [
    {"cell_type": "markdown", "metadata": {}, "source": ["# A GAN — démo\n"]},
    {"cell_type": "code", "execution_count": 1, "metadata": {},
     "outputs": [{"name": "stdout", "output_type": "stream", "text": ["ok\n"]}],
     "source": ["%matplotlib inline\n", "!pip install torch\n", "import torch.nn as nn\n",
                "from torch.nn.utils.parametrizations import spectral_norm"]},
    {"cell_type": "code", "execution_count": 2, "metadata": {}, "outputs": [],
     "source": ["class Discriminator(nn.Module):\n", "    def __init__(self):\n",
                "        super().__init__()\n",
                "        self.c1 = spectral_norm(nn.Conv2d(3, 64, 4, 2, 1))\n",
                "        self.c2 = spectral_norm(nn.Conv2d(64, 128, 4, 2, 1))\n",
                HEAD]},
    {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": []},
]


def notebook_json(cells=CELLS, language="python") -> str:
    """As Jupyter writes it (nbformat: indent 1, non-ASCII as is, a final newline)."""
    data = {"cells": cells,
            "metadata": {"kernelspec": {"display_name": "Python 3", "language": language,
                                        "name": "python3"}},
            "nbformat": 4, "nbformat_minor": 5}
    return json.dumps(data, indent=1, ensure_ascii=False) + "\n"


def parse(text: str):
    notebook = parse_notebook("nb.ipynb", text)
    assert not isinstance(notebook, Finding), notebook
    return notebook


def python_of(*sources: list[str]) -> str:
    cells = [{"cell_type": "code", "metadata": {}, "outputs": [], "source": s} for s in sources]
    return parse(notebook_json(cells)).python


# reading cells

def test_code_cells_become_one_module_line_for_line():
    notebook = parse(notebook_json())
    lines = notebook.python.splitlines()
    assert lines[2:4] == ["import torch.nn as nn",
                          "from torch.nn.utils.parametrizations import spectral_norm"]
    assert lines[9] == HEAD.rstrip("\n")
    assert [(c.number, c.first_line) for c in notebook.cells] == [(2, 1), (3, 5)]


def test_line_magics_and_shell_escapes_become_placeholders():
    assert python_of(["%time f()\n", "!ls\n", "files = !ls\n", "if x:\n", "    %time g()\n",
                      "obj?\n"]) == "pass\npass\nfiles = None\nif x:\n    pass\npass\n"



def test_a_future_import_opening_a_later_cell_is_a_placeholder():
    # A tutorial exported to a notebook: `%matplotlib inline` alone, then a cell opening
    # with `from __future__ import ...`, legal in the kernel but not in one module.
    assert python_of(["%matplotlib inline"],
                     ['"""Doc."""\n', "from __future__ import (print_function,\n",
                      "                        division)\n", "import torch\n"]) \
        == 'pass\n"""Doc."""\npass\n\nimport torch\n'


def test_a_future_import_at_the_start_of_the_module_stays():
    assert python_of(["# setup\n", "from __future__ import annotations\n"], ["import torch\n"]) \
        == "# setup\nfrom __future__ import annotations\nimport torch\n"


def test_a_future_import_after_code_of_its_own_cell_stays():
    # An error in the kernel too: the notebook is left as it is, not fixed.
    assert python_of(["import os\n"], ["import torch\n", "from __future__ import division\n"]) \
        == "import os\nimport torch\nfrom __future__ import division\n"

def test_a_shell_escape_continued_by_backslashes_is_one_placeholder():
    # pytorch-animeGAN's notebook: `!python3 train.py ... \` over several lines, which
    # IPython joins into one command. Its indented lines were read as Python: an SN901.
    source = ["!python3 train.py --batch 8 \\\n", "                 --model v2 \\\n",
              "                 --amp\n", "x = 1\n", "%time f()  \\\n", "  --y\n"]
    assert python_of(source) == "pass\n\n\nx = 1\npass\n\n"


def test_an_indented_shell_escape_opening_a_cell_is_a_placeholder_at_column_0():
    # coqui-ai/TTS's tutorial: ` !tts --text ... \` (IPython takes a cell's leading
    # indentation off). Indented, the placeholder was an unexpected indent: an SN901.
    assert python_of([" !tts --text hi \\\n", "      --out_path a.wav\n"], ["  x = !ls\n"]) \
        == "pass\n\nx = None\n"



def test_a_cell_indented_as_a_whole_is_taken_as_ipython_runs_it():
    # code-of-learn-deep-learning-with-pytorch's n-gram notebook: a cell starting with
    # one space, which IPython takes off every line (after its leading blank lines).
    # Read as is, it was an SN901 "unexpected indent" in a notebook Jupyter ran.
    notebook = parse(notebook_json([
        {"cell_type": "code", "metadata": {}, "outputs": [], "source": ["x = 1\n"]},
        {"cell_type": "code", "metadata": {}, "outputs": [],
         "source": ["\n", " y = [x\n", "      for _ in range(2)]\n", " if y:\n", "     y.pop()\n"]}]))
    assert notebook.python == "x = 1\n\ny = [x\n     for _ in range(2)]\nif y:\n    y.pop()\n"
    assert not notebook.broken and not notebook.writable  # a fixed line would lose its indent


def test_a_finding_in_an_indented_cell_is_at_its_column_in_the_cell():
    cells = [dict(CELLS[1]), dict(CELLS[2], source=["  " + line for line in CELLS[2]["source"]])]
    notebook = parse(notebook_json(cells))
    [finding] = [notebook.map_finding(f) for f in lint_text(notebook.python, "nb.ipynb")]
    assert (finding.code, finding.cell, finding.line, finding.column) == ("SN201", 2, 6, 23)


def test_a_notebook_fix_does_not_write_is_not_offered(tmp_path, monkeypatch):
    # An indented cell (or the old format, or a cell that does not compile) is not
    # fixed: its finding has no `[*]` that --fix would then not keep.
    monkeypatch.chdir(tmp_path)
    cells = [dict(CELLS[1]), dict(CELLS[2], source=["  " + line for line in CELLS[2]["source"]])]
    (tmp_path / "nb.ipynb").write_text(notebook_json(cells), encoding="utf-8")
    result = CliRunner().invoke(main, ["nb.ipynb", "--no-graph", "--no-cache", "--output-format", "concise"])
    assert result.stdout.startswith("nb.ipynb:cell 2:6:23: SN201 Conv2d Discriminator.head has no")
    assert "fixable" not in result.stdout

def test_a_magic_without_its_percent_is_a_placeholder_when_it_is_not_python():
    # DeOldify's and first-order-model's Colab notebooks: `cd DeOldify` (IPython's
    # automagic). `ls -la` compiles (a subtraction) and stays Python, as harmless.
    source = ["cd DeOldify\n", "pip install -r requirements.txt\n", "cd ..\n", "ls -la\n",
              "cd = 3\n", "time.sleep(1)\n", "ls = [1,\n", "      2]\n"]
    assert python_of(source) == "pass\npass\npass\n" + "".join(source[3:])


def test_non_python_cell_magic_becomes_blank_lines():
    assert python_of(["%%bash\n", "echo 'hi\n"], ["x = 1\n"]) == "\n\nx = 1\n"


def test_python_cell_magic_keeps_its_body():
    assert python_of(["%%time\n", "x = 1\n"]) == "pass\nx = 1\n"


def test_percent_inside_a_string_or_brackets_is_python():
    source = ['s = """\n', "%d items\n", '"""\n', "y = (a\n", "     % b)\n"]
    assert python_of(source) == "".join(source)


def test_comment_ending_in_a_question_mark_is_python():
    assert python_of(["y = 1  # why?\n"]) == "y = 1  # why?\n"


def test_markdown_only_and_other_languages_give_no_code():
    assert parse(notebook_json(language="R")).python == ""
    assert python_of() == ""


def test_broken_json_is_a_diagnostic_with_its_position():
    result = parse_notebook("nb.ipynb", '{"cells": [\n  {"cell_type": "code",]\n')
    assert isinstance(result, Finding)
    assert (result.code, result.line) == ("SN902", 2)
    assert "not valid JSON" in result.message


def test_json_that_is_not_a_notebook_is_a_diagnostic():
    result = parse_notebook("nb.ipynb", "[1, 2]")
    assert isinstance(result, Finding) and result.code == "SN902"


# positions

def test_finding_is_reported_at_its_cell_and_line():
    notebook = parse(notebook_json())
    [finding] = [notebook.map_finding(f) for f in lint_text(notebook.python, "nb.ipynb")]
    assert (finding.code, finding.cell, finding.line, finding.column) == ("SN201", 3, 6, 21)
    assert notebook.line_of(3, 6) == 10


def test_cli_reports_cell_line_and_column_for_a_notebook_on_stdin(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["--stdin-filename", "nb.ipynb", "--no-graph",
                                       "--output-format", "concise"], input=notebook_json())
    assert result.stdout.startswith("nb.ipynb:cell 3:6:21: SN201 ")
    as_json = CliRunner().invoke(main, ["--stdin-filename", "nb.ipynb", "--no-graph",
                                        "--output-format", "json"], input=notebook_json())
    [obj] = json.loads(as_json.stdout)
    assert (obj["cell"], obj["line"], obj["column"]) == (3, 6, 21)


# writing back

def test_fix_changes_only_the_fixed_line_of_the_json():
    text = notebook_json()
    notebook = parse(text)
    fixed = notebook.apply(notebook.python.replace(
        "nn.Conv2d(128, 1, 4, 1, 0)", "spectral_norm(nn.Conv2d(128, 1, 4, 1, 0))"))
    assert fixed == text.replace('"        self.head = nn.Conv2d(128, 1, 4, 1, 0)\\n"',
                                 '"        self.head = spectral_norm(nn.Conv2d(128, 1, 4, 1, 0))\\n"')


def test_inserted_line_goes_into_the_cell_before_and_magics_stay():
    text = notebook_json()
    notebook = parse(text)
    fixed = notebook.apply(notebook.python.replace(
        "import torch.nn as nn\n", "import torch.nn as nn\nimport torch\n"))
    cells = json.loads(fixed)["cells"]
    assert cells[1]["source"] == ["%matplotlib inline\n", "!pip install torch\n",
                                  "import torch.nn as nn\n", "import torch\n",
                                  "from torch.nn.utils.parametrizations import spectral_norm"]
    assert fixed.replace('    "import torch\\n",\n', "", 1) == text


def test_a_fix_leaves_a_continued_shell_escape_as_it_was():
    cells = [{"cell_type": "code", "metadata": {}, "outputs": [],
              "source": ["!python train.py \\\n", "    --epochs 3\n", "import torch.nn as nn\n"]},
             *CELLS[2:]]
    text = notebook_json(cells)
    notebook = parse(text)
    fixed = notebook.apply(notebook.python.replace(
        "nn.Conv2d(128, 1, 4, 1, 0)", "spectral_norm(nn.Conv2d(128, 1, 4, 1, 0))"))
    assert json.loads(fixed)["cells"][0]["source"] == cells[0]["source"]
    assert fixed == text.replace("self.head = nn.Conv2d(128, 1, 4, 1, 0)",
                                 "self.head = spectral_norm(nn.Conv2d(128, 1, 4, 1, 0))")


def test_last_line_without_newline_stays_without_one():
    text = notebook_json()
    notebook = parse(text)
    fixed = notebook.apply(notebook.python.replace("import spectral_norm\n",
                                                   "import spectral_norm as sn\n"))
    assert json.loads(fixed)["cells"][1]["source"][-1] == (
        "from torch.nn.utils.parametrizations import spectral_norm as sn")


def test_string_source_and_compact_json_keep_their_layout():
    text = ('{"cells":[{"cell_type":"code","metadata":{},"outputs":[],'
            '"source":"x = 1\\ny = 2"}],"metadata":{},"nbformat":4,"nbformat_minor":5}')
    notebook = parse(text)
    assert notebook.apply("x = 1\ny = 3\n") == text.replace("y = 2", "y = 3")


def test_unchanged_text_gives_the_same_bytes():
    text = notebook_json()
    assert parse(text).apply(parse(text).python) == text


def test_a_help_search_with_a_wildcard_is_a_placeholder():
    # NYU-DLSP20's tensor tutorial: `torch.*Tensor?` lists the names that match.
    assert python_of(["# What about all `*Tensor`s?\n", "torch.*Tensor?\n", "torch.nn.Module??\n"]) \
        == "# What about all `*Tensor`s?\npass\npass\n"
