"""A small abstract interpreter over source facts.

It runs `__init__` bodies, helpers and partials the way Python would, as far as literal
values allow, to learn which layers a module builds, which of them SN wraps (and where
that happens), and which init calls touch them. It never guesses: a value it cannot
follow is `UnknownV`, and rules skip what depends on one.

`Interpreter` is composed of parts, each in its own module: the evaluator (statements,
expressions, lookups, calls, binding), which knows Python; torch semantics, which knows
what building and wrapping modules does; training semantics, which knows what a GAN's
training code does with modules and tensors. Calls dispatch through tables each part
fills with the kinds it knows; here they are merged.
"""

from __future__ import annotations

from typing import Callable

from snlint import facts as F
from snlint.findings import Location
from snlint.link.binding import Binding
from snlint.link.calls import Calls, merged_tables
from snlint.link.events import D_NAME, FAKE_NAME, REAL_NAME, Events
from snlint.link.expressions import Expressions
from snlint.link.index import ProjectIndex
from snlint.link import options
from snlint.link.lookup import Lookup
from snlint.link.names import Definitions
from snlint.link.statements import BudgetExceeded, Statements, settled, without_grad
from snlint.link.torch_semantics import TorchSemantics
from snlint.link.training_semantics import TrainingSemantics
from snlint.link.values import UNKNOWN, ClassV, Frame, Layer, TensorV, UnknownV, Value

# The link step reads the events and name patterns from here.
__all__ = ["D_NAME", "FAKE_NAME", "REAL_NAME", "BudgetExceeded", "Events", "Interpreter", "PROJECT_BUDGET",
           "SPENT_STEP_BUDGET", "STEP_BUDGET"]

# Statements one entry point (a class, a function, a module body) may interpret. Real
# __init__s take hundreds and a whole training script a few thousand (the largest entry
# point of ten public GAN repositories: 1,459); past the budget the entry point is read
# with less precision, and says so (SN920). Not much less: KAIR's ModelGAN, which builds
# each network its options may pick, takes 20,939, and at 10,000 its SN301 and SN401 go.
STEP_BUDGET = 25_000
# Statements one link (a project, or a part of it) may interpret before each further entry
# point gets the smaller budget: a project whose scripts each re-run the same option
# plumbing (one `define_Model(opt)` building every network of a model zoo per script) is
# bounded by this plus the smaller budget per entry point, not by scripts x networks. The
# largest total of ten public GAN repositories is 13,838. Classes are built before any
# module's statements or function runs (`link`), so they spend it first.
PROJECT_BUDGET = 150_000
SPENT_STEP_BUDGET = 2_500

_PARTS = (Calls, TorchSemantics, TrainingSemantics)


class Interpreter(Statements, Expressions, Lookup, Calls, Binding, TorchSemantics, TrainingSemantics):
    # Each part's tables hold the kinds it knows; a kind two parts claim fails here, at
    # import, rather than letting one part silently shadow the other.
    CALLEES = merged_tables(*(part.CALLEES for part in _PARTS))
    NAMED_CALLS = merged_tables(*(part.NAMED_CALLS for part in _PARTS))
    NAMED_FAMILIES = [family for part in _PARTS for family in part.NAMED_FAMILIES]
    RECEIVERS = merged_tables(*(part.RECEIVERS for part in _PARTS))

    def __init__(self, index: ProjectIndex, options: Callable[[], dict] | None = None) -> None:
        """`options`: the command-line options the whole project declares
        (`options.DeclaredOptions`), when `index` holds a part of it (`link.groups`)."""
        self.index = index
        self.definitions = Definitions(index)
        self.events = Events()
        self._globals: dict[tuple[str, str], Value] = {}
        self._statement_index: dict[str, tuple] = {}  # Lookup.statements_about's, by path
        self._forwards_by_root: dict[int, list] = {}  # TrainingSemantics.backward's index
        self._forwards_indexed = 0
        self._resolving: set[tuple[str, str]] = set()
        self.steps = 0  # statements run for the current entry point
        self.total_steps = 0  # and for every entry point before it: the link's work
        self.budget = STEP_BUDGET
        self._registries: set[str] | None = None
        self._scorers: dict[str, bool] = {}
        self._players: dict[str, str | None] = {}
        self._class_files: dict[int, F.FileFacts] | None = None
        self._options: dict | None = None
        self._project_options = options
        self._deciding: dict[int, set[str]] = {}
        self._named_handlers: dict = {}
        self._torch_names: dict[str, tuple[str, str] | None] = {}
        self._bases: dict[tuple[int, int], list[Value]] = {}
        self._unstable_reads = 0
        self._of_class: dict[tuple[str, int, int], object] = {}
        self._keywords: dict[str, set[tuple[type, object]]] | None = None  # passed_otherwise's

    # ------------------------------------------------------------ entry points

    def start_entry(self) -> None:
        """Count a new entry point's work from zero, within the budget the project's work
        so far leaves it."""
        self.total_steps += self.steps
        self.steps = 0
        self.budget = STEP_BUDGET if self.total_steps < PROJECT_BUDGET else SPENT_STEP_BUDGET

    def run_module(self, file: F.FileFacts) -> Frame:
        frame = Frame(file, "<module>")
        self.block(file.body, frame, module_level=True)
        return frame

    def run_function(self, fn: F.FunctionFacts, file: F.FileFacts) -> Value:
        """A helper on its own, with its defaults and unknown parameters."""
        frame = Frame(file, fn.name, function=fn.name, no_grad=without_grad(fn))
        self.bind_params(fn, [], {}, frame, use_defaults=True)
        self.block(fn.body, frame)
        return settled(frame) or UNKNOWN

    def passed_otherwise(self, keyword: str, default: object) -> bool:
        """Whether a call of the project passes `keyword` a literal other than `default`:
        the whole project's calls when this is a part of it (a training loop calling a
        model it was handed need not import the model's module)."""
        if self._keywords is None:
            whole = self._project_options
            files = whole.files if isinstance(whole, options.DeclaredOptions) else self.index.files
            self._keywords = options.keyword_literals(files)
        return bool(self._keywords.get(keyword, set()) - {(type(default), default)})

    def instantiate_root(self, cls: F.ClassFacts, file: F.FileFacts) -> Layer:
        """Build a class the way its defaults allow, as a top-level object."""
        loc = Location(file.path, cls.span)
        root = Frame(file, f"<build {cls.name}>")
        return self.instantiate(ClassV(cls, file), (), self.root_options(cls, file), loc, root, root_build=True)

    def run_methods(self, instance: Layer, file: F.FileFacts) -> None:
        """Every method but __init__ of a built instance, with `self` bound to it: a
        `train()` override, a forward that calls `F.batch_norm`, a trainer's steps."""
        if instance.cls is None:
            return
        for name, fn, owner, owner_file in self.methods_of(instance.cls, file):
            if name == "__init__" or name in instance.called_methods:
                continue  # a helper __init__ called already ran; running it again doubles SN
            frame = Frame(owner_file, f"{instance.cls.name}.{name}", self_value=instance, cls=owner,
                          function=name, no_grad=without_grad(fn))
            self.bind_params(fn, [instance], self.option_arguments(fn, instance.cls), frame,
                             use_defaults=True)
            for p in fn.params[1:]:
                # `def forward(self, x, step=0)` that the project also calls with `step=1`
                # (VQGAN-LC's discriminator branch): a default another call overrides
                # decides nothing when the method runs on its own.
                if isinstance(p.default, F.Const) and self.passed_otherwise(p.name, p.default.value):
                    frame.env[p.name] = UnknownV(f"parameter {p.name}")
            if name == "forward":
                # What a forward receives is a batch of tensors, whatever its name.
                for p in fn.params[1:]:
                    if isinstance(frame.env.get(p.name), UnknownV):
                        frame.env[p.name] = TensorV()
            self.block(fn.body, frame)
