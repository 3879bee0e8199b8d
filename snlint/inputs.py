"""What a run reads before it lints: the files under the given paths, each as text (a
notebook as its Python), and the SN9xx diagnostics of those that cannot be read.
Torch-free and libcst-free, for a run the run cache answers whole."""

from __future__ import annotations

from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING

from snlint.config import Config
from snlint.files import discover, read_source
from snlint.findings import Finding
from snlint.records import dataclass

if TYPE_CHECKING:
    from snlint.notebook import Notebook


@dataclass
class Inputs:
    sources: dict[str, str] = field(default_factory=dict)  # display path -> text
    notebooks: dict[str, Notebook] = field(default_factory=dict)  # display path -> notebook
    diagnostics: list[Finding] = field(default_factory=list)  # files that cannot be read
    files: list[tuple[str, Path]] = field(default_factory=list)  # (display, absolute) found
    paths: list[str] = field(default_factory=list)  # as given

    @property
    def scripts(self) -> dict[str, str]:
        """The sources that are Python files (what the project's imports can reach)."""
        return {p: t for p, t in self.sources.items() if p not in self.notebooks}

    def shown(self) -> dict[str, str]:
        """What a report quotes: each file's text, and each notebook cell's."""
        shown = dict(self.sources)
        if not self.notebooks:
            return shown
        from snlint.notebook import cell_key

        for display, notebook in self.notebooks.items():
            for cell in notebook.cells:
                shown[cell_key(display, cell.number)] = "".join(cell.lines)
        return shown


def read_inputs(paths: list[str], config: Config, files: list[tuple[str, Path]] | None = None) -> Inputs:
    """`files`: what `discover` found under `paths`, when the caller has walked them."""
    inputs = Inputs(files=discover(paths, config) if files is None else list(files), paths=list(paths))
    for display, absolute in inputs.files:
        source = read_source(display, absolute, config.max_file_size)
        if isinstance(source, Finding):
            inputs.diagnostics.append(source)
        elif absolute.suffix == ".ipynb":
            from snlint.notebook import parse_notebook  # only for a notebook

            notebook = parse_notebook(display, source.text)
            if isinstance(notebook, Finding):
                inputs.diagnostics.append(notebook)
            else:
                inputs.notebooks[display] = notebook
                inputs.sources[display] = notebook.python
                inputs.diagnostics.extend(notebook.broken)
        else:
            inputs.sources[display] = source.text
    return inputs
