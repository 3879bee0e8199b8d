"""The allow-list of the definitions-only copies (snlint.graph.definitions): the calls a
kept statement may make and the decorators kept, by qualified name. No libcst: the
loader's check for modules that run as written reads it too."""

from __future__ import annotations

import builtins

BUILTINS = frozenset(dir(builtins))

# Calls a kept assignment may make, by qualified name (a builtin is `builtins.NAME`):
# cheap, side-effect free, and what scripts use to set up the values their classes read.
PURE_CALLS = frozenset({
    *(f"builtins.{name}" for name in (
        "int", "float", "str", "bool", "complex", "tuple", "list", "dict", "set", "frozenset",
        "len", "range", "min", "max", "abs", "round", "sum", "sorted", "reversed", "zip",
        "enumerate", "getattr", "isinstance", "issubclass", "hasattr", "type", "vars", "pow",
        "divmod", "slice", "object", "bytes", "any", "all", "repr", "hash", "id", "chr", "ord")),
    "numpy.prod", "numpy.sqrt", "numpy.log2", "numpy.array", "numpy.float32", "numpy.int64",
    "math.prod", "math.sqrt", "math.log", "math.log2", "math.ceil", "math.floor", "math.pow",
    "os.path.join", "os.path.dirname", "os.path.abspath", "os.path.basename",
    "os.path.realpath", "os.path.expanduser", "os.path.exists", "os.path.isfile",
    "os.path.isdir", "os.path.splitext", "os.getcwd", "os.environ.get", "os.getenv",
    "torch.cuda.is_available", "torch.device", "torch.cuda.device_count",
    "torch.backends.mps.is_available", "torch.backends.cudnn.is_available",
    "torch.tensor", "torch.as_tensor", "torch.zeros", "torch.ones", "torch.empty",
    "torch.full", "torch.arange", "torch.linspace", "torch.eye", "torch.rand", "torch.randn",
    "torch.Tensor", "torch.FloatTensor", "torch.LongTensor", "torch.Size", "torch.finfo",
    "torch.iinfo", "torch.get_default_dtype", "torch.Generator",
    "argparse.ArgumentParser", "argparse.Namespace", "functools.partial",
    "collections.namedtuple", "collections.OrderedDict", "collections.defaultdict",
    "typing.TypeVar", "typing.NamedTuple", "typing.cast", "logging.getLogger",
    "dataclasses.field", "enum.auto", "re.compile", "sys.version_info",
    "__future__.print_function",
    # As safe as an import statement: a project module loads as its copy.
    "importlib.import_module", "builtins.__import__",
})
# The names a dict read by attribute goes by, called wherever it is defined.
ATTRIBUTE_DICTS = frozenset({"EasyDict", "edict", "AttrDict", "AttributeDict", "DotDict"})
# Every call under these: torch.nn's layers, functional, init and utils touch no files,
# processes or network.
PURE_PREFIXES = ("torch.nn.",)
# `type=` values of add_argument that convert a string and do nothing else.
PURE_TYPES = frozenset({"builtins.int", "builtins.float", "builtins.str", "builtins.bool",
                         "builtins.complex", "ast.literal_eval", "json.loads",
                         "pathlib.Path", "builtins.list", "builtins.tuple"})
# Decorators kept (by qualified name; see the module's docstring for the others).
KNOWN_DECORATORS = frozenset({
    "builtins.staticmethod", "builtins.classmethod", "builtins.property",
    "functools.wraps", "functools.lru_cache", "functools.cache", "functools.cached_property",
    "functools.total_ordering", "functools.singledispatch", "functools.singledispatchmethod",
    "dataclasses.dataclass", "abc.abstractmethod", "abc.abstractproperty",
    "typing.overload", "typing.final", "typing.no_type_check", "typing.runtime_checkable",
    "contextlib.contextmanager",
})
KNOWN_DECORATOR_PREFIXES = ("torch.", "functools.", "dataclasses.", "typing.", "abc.")


def pure(qualified: str | None) -> bool:
    return qualified is not None and (qualified in PURE_CALLS or qualified.startswith(PURE_PREFIXES))
