"""The retrieval levers in one place: :class:`RetrievalConfig` holds every lever and its default,
:data:`AXES` the levers an ablation grid varies and what each axis means to the rest of the lab.

A command parses its lever flags (generated from the fields: :func:`lever_fields`), the API its
keywords or ``--config`` its file into one ``RetrievalConfig``, which
:func:`~rag_lab.retrieve.registry.build_retriever` hands to the fused retrievers whole; they and the
grid apply the same post-fusion step (:mod:`rag_lab.retrieve.post_fusion`). Everything else derives
from these two: the retrievers' defaults, ``ir``'s checkpoint
key (:func:`fused_defaults`), the tuned configuration file (:class:`~rag_lab.retrieve.tuned_config.TunedConfig`
is a ``RetrievalConfig`` with provenance), and, through :func:`axes`, the ablation grid
(``GridSpec``: its axes, default values, baselines and configuration ids), ``--grid`` files and
``ablate``'s axis flags, the spot check's axes, the significance families and their questions, and
tune's cost order.

Adding an axis is one field on :class:`RetrievalConfig` plus one :class:`Axis` row whose ``kernel``
applies a value to a fused ranking (as the per-document cap does). RRF k, prefetch and the leg
weights have no list kernel: they act inside the fusion formula, which the grid computes for all of
their values at once (:func:`rag_lab.evaluate.ablation.grid.fused_order`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any

from rag_lab.fusion.rrf import DEFAULT_RRF_K
from rag_lab.retrieve.post_fusion import capped, check_max_per_doc


def lever(default: Any, help: str, *, shown: str | None = None, metavar: str | None = None, flag: bool = True,
          cli_type: str | None = None, written: bool = True) -> Any:
    """A :class:`RetrievalConfig` field and what the command line and the API say of it.

    ``help``: the flag's help, ``(default …)`` added (``shown``: the default in words, else the value);
    ``flag``: one of the fused levers every retrieving command takes as ``--name`` and the API as
    ``name=`` (False: commands declare their own flag, with their own default, e.g. ``--top-k``);
    ``cli_type``: how the flag parses its text (``positive_int``, ``non_negative_int``,
    ``non_negative_float``; default: the field's type); ``written``: ``rag-lab tune`` writes it
    into the configuration file even at its default."""
    return field(default=default, metadata={"help": help, "shown": shown, "metavar": metavar, "flag": flag,
                                            "cli_type": cli_type, "written": written})


@dataclass(frozen=True)
class RetrievalConfig:
    """Every retrieval lever with the lab's default, in the command line's names: the one object a
    command parses its flags (or the API its keywords, or ``--config`` its file) into and hands through
    :func:`~rag_lab.retrieve.registry.build_retriever` to the retrievers."""

    mode: str = lever("hybrid", "the retrieval mode", flag=False)
    fusion_k: float = lever(DEFAULT_RRF_K, "RRF k, ranks from 1", cli_type="int")
    prefetch: int = lever(100, "candidates per leg for fusion/hybrid", cli_type="positive_int")
    dense_weight: float = lever(1.0, "fusion/hybrid: the dense leg's weight")
    sparse_weight: float = lever(1.0, "fusion/hybrid: the sparse leg's weight")
    max_per_doc: int = lever(0, "fusion/hybrid: at most M chunks per document in the top-k, the next-best chunks "
                                "filling the gaps", shown="0 = no cap", metavar="M", cli_type="non_negative_int")
    top_k: int = lever(5, "chunks the retriever returns", flag=False)
    top_n: int | None = lever(None, "chunks the LLM reads (None: the command's default)", flag=False)
    num_queries: int = lever(1, "> 1: the LLM writes num_queries - 1 rewrites, fused by RRF", flag=False)
    year_boost: float | None = lever(None, "fusion/hybrid: a result whose document (file name) carries a program year "
                                           "or legislature the question names gains W × the first result's score",
                                     shown="off", metavar="W", cli_type="non_negative_float", written=False)
    contextual: str = lever("none", "the contextual index variant (rag-lab index --contextual)", flag=False,
                            written=False)

    def with_levers(self, **levers: Any) -> "RetrievalConfig":
        """This configuration with ``levers`` changed (None: not given, the current value kept); an
        unknown or old name is refused (:func:`check_lever_names`)."""
        check_lever_names(levers)
        return replace(self, **{name: value for name, value in levers.items() if value is not None})

    def post_fusion_values(self) -> list[tuple["Axis", Any]]:
        """(axis, value) of every axis applied to the fused ranking (the cap, and any axis added)."""
        return [(a, self.axis_value(a)) for a in kernel_axes()]

    def axis_value(self, axis: "Axis") -> Any:
        values = tuple(getattr(self, lever, axis.default) for lever in axis.lever_names)
        return values if axis.pair else values[0]


def lever_fields() -> tuple:
    """Every field of :class:`RetrievalConfig`, read at call time (a test may add one)."""
    return fields(RetrievalConfig)


def flag_levers() -> tuple[str, ...]:
    """The fused levers as every retrieving command and API verb names them (``fusion_k`` … ``year_boost``):
    the fields marked ``flag``."""
    return tuple(f.name for f in lever_fields() if f.metadata.get("flag", True))


def lever_help(f) -> str:
    """A field's flag help with its default (``… (default 60)``)."""
    shown = f.metadata.get("shown")
    if shown is None:
        shown = f"{f.default:g}" if isinstance(f.default, float) else f"{f.default}"
    return f"{f.metadata.get('help', f.name)} (default {shown})"


# Names that meant a lever before and are refused with the name to use.
RENAMED = {"rrf_k": "fusion_k"}


def renamed_hint(name: str) -> str | None:
    """"'rrf_k' is now called 'fusion_k'" when ``name`` is an old name of a lever, else None."""
    new = RENAMED.get(str(name).replace("-", "_"))
    return f"{name!r} is now called {new!r}" if new else None


def check_lever_names(levers: Mapping[str, Any]) -> None:
    """``TypeError`` naming a keyword that is no lever (an old name: with the new one)."""
    known = {f.name for f in lever_fields()}
    unknown = [name for name in levers if name not in known]
    if unknown:
        hints = [hint for name in unknown if (hint := renamed_hint(name))]
        raise TypeError(f"unknown retrieval lever(s) {', '.join(repr(n) for n in unknown)}"
                        + (f" ({'; '.join(hints)})" if hints else "") + f"; levers: {', '.join(sorted(known))}")


DEFAULTS = RetrievalConfig()

# A list kernel: (fused chunk ids best first, the axis's value, chunk id → document, how many results
# are read at most) → the ranking at that value. Its first ``depth`` results must not depend on
# ``depth`` (every top-k is cut from them); it may stop there, as the cap does.
Kernel = Callable[[Sequence[str], Any, Callable[[str], str], int], list[str]]


def whole_number(value: Any) -> int:
    """A grid value that must be a whole number (``2.0`` yes, ``2.5`` and ``True`` no)."""
    if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
        raise ValueError(value)
    return int(value)


def weight_pair(value: Any) -> tuple[float, float]:
    """``"0.7:1.3"`` or ``[0.7, 1.3]`` → ``(0.7, 1.3)`` (dense, sparse)."""
    if isinstance(value, str):
        dense, sparse = (float(v) for v in value.split(":"))
    else:
        dense, sparse = (float(v) for v in value)
    return dense, sparse


def check_caps(values: Sequence) -> None:
    for cap in values:
        check_max_per_doc(cap)  # the retrievers' own rule


def check_ks(values: Sequence) -> None:
    if any(k < 0 for k in values):
        raise ValueError(f"fusion k values must be ≥ 0, got {list(values)}")


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def check_fusion_k(k: float) -> float:
    if not _is_number(k) or k < 0:
        raise ValueError(f"fusion k (RRF k) must be a number ≥ 0, got {k!r}")
    return k


def check_leg_weights(dense_weight: float, sparse_weight: float) -> tuple[float, float]:
    """Both weights ≥ 0 (a negative one would turn its leg's ranking upside down), at least one > 0."""
    if not (_is_number(dense_weight) and _is_number(sparse_weight)) or dense_weight < 0 or sparse_weight < 0:
        raise ValueError(f"leg weights must be numbers ≥ 0, got dense {dense_weight!r}, sparse {sparse_weight!r}")
    if dense_weight == 0 and sparse_weight == 0:
        raise ValueError("at least one leg weight must be > 0 (dense and sparse are both 0)")
    return float(dense_weight), float(sparse_weight)


def check_weights(values: Sequence) -> None:
    for dense, sparse in values:
        check_leg_weights(dense, sparse)


def positive_whole(key: str) -> Callable[[Sequence], None]:
    def check(values: Sequence) -> None:
        bad = [v for v in values if not isinstance(v, int) or v < 1]
        if bad:
            raise ValueError(f"{key} values must be whole numbers ≥ 1, got {bad}")
    return check


@dataclass(frozen=True)
class Axis:
    """One ablation axis and everything the lab knows of it."""

    name: str  # the spot check's and the significance families' name (results.csv ``family_axis``)
    key: str  # GridSpec's keyword, the --grid file's key and ablate's flag (``--fusion-k``)
    fields: tuple[str, ...]  # the grid configuration's attributes it sets (two: a pair, e.g. the weights)
    token: str  # its part of a configuration id: ``p`` in ``p=100``
    grid_values: tuple  # the grid's values when none are given
    question: str  # what its significance family asks
    noun: str  # in the spot check's summary: "every RRF k, prefetch, …"
    shown: str  # in messages naming a value: "hybrid max-per-doc 2"
    short: str  # in lists of moved settings: "k, weights, cap"
    help: str  # ablate's flag
    levers: tuple[str, ...] = ()  # the RetrievalConfig fields it moves (default: ``fields``)
    fallback: str = "first"  # the baseline when the lab's default is not in the grid: first | last | largest
    token_at_default: bool = True  # False: an id leaves the token out at the default (earlier ids stay valid)
    grid_default: bool = False  # a grid may name its own baseline value (``GridSpec(default_k=…)``)
    cost: int | None = None  # rank in tune's cost order (cheapest first); None: a "setting moved from the default"
    cost_text: str = ""
    parse: Callable[[Any], Any] = whole_number  # one value of a --grid file (a pair: each element)
    kernel: Kernel | None = None  # applied to the fused ranking; None: inside the fusion formula or the cut
    check: Callable[[Sequence], None] | None = None  # refuses a grid's values (ValueError, one line)
    default: Any = None  # the lab's default when its lever is not a RetrievalConfig field
    tune_values: tuple | None = None  # ``rag-lab tune``'s values when they differ from ``grid_values``

    @property
    def pair(self) -> bool:
        return len(self.fields) == 2

    @property
    def lever_names(self) -> tuple[str, ...]:
        return self.levers or self.fields

    def lab_default(self) -> Any:
        """The lab's default value (a pair for a two-field axis), from :data:`DEFAULTS`."""
        values = tuple(getattr(DEFAULTS, lever, self.default) for lever in self.lever_names)
        return values if self.pair else values[0]

    def value_of(self, config: Any) -> Any:
        """The axis's value in a grid configuration (a pair for a two-field axis)."""
        values = tuple(config.value(f) for f in self.fields)
        return values if self.pair else values[0]

    def setting(self, value: Any) -> dict[str, Any]:
        """``value`` as the grid configuration's attributes."""
        return dict(zip(self.fields, value if self.pair else (value,)))

    def text(self, value: Any) -> str:
        """The value as a configuration id writes it."""
        return f"{value[0]:g}:{value[1]:g}" if self.pair else f"{value}"

    def label(self, value: Any) -> str:
        """The value as the spot check and results tables name it (``1:1``, ``60``)."""
        return f"{float(value[0]):g}:{float(value[1]):g}" if self.pair else str(int(value))

    def read(self, value: Any) -> Any:
        """One --grid file value."""
        return weight_pair(value) if self.pair else self.parse(value)

    def baseline(self, values: Sequence, default: Any) -> Any:
        """The grid's baseline value: ``default`` when the grid holds it, else the fallback."""
        if default in values:
            return default
        return {"first": values[0], "last": values[-1], "largest": max(values)}[self.fallback]


AXES: tuple[Axis, ...] = (
    Axis("k", "fusion_k", ("k",), "k", (1, 2, 5, 10, 20, 60, 100),
         "does RRF k matter? each k against the default k, at the default prefetch and weights",
         "RRF k", "k", "k", "RRF k values, ranks from 1", levers=("fusion_k",), fallback="last", grid_default=True,
         parse=int, check=check_ks),
    Axis("prefetch", "prefetch", ("prefetch",), "p", (10, 25, 50, 100),
         "does the prefetch depth matter? each prefetch against the default, at the default k and weights",
         "prefetch", "prefetch", "prefetch", "candidates per leg", fallback="largest", grid_default=True, cost=2,
         cost_text="prefetch (candidates per leg)", check=positive_whole("prefetch")),
    Axis("weights", "weights", ("dense_weight", "sparse_weight"), "w", ((1.0, 1.0),),
         "do the leg weights matter? each weight pair against the default pair, at the default k and prefetch",
         "weight pair", "weights", "weights", "dense:sparse leg weight pairs, e.g. 0.7:1.3,1:1,1.3:0.7",
         check=check_weights, tune_values=((1.0, 1.0), (0.7, 1.3), (1.3, 0.7))),
    Axis("max_per_doc", "max_per_doc", ("max_per_doc",), "cap", (0,),
         "does a cap of chunks per document matter? each cap against no cap, at the default k, prefetch and weights",
         "cap", "max-per-doc", "cap",
         "caps of chunks per document in the top-k (0 = no cap, the baseline), e.g. 0,1,2,3",
         token_at_default=False, kernel=capped, check=check_caps, tune_values=(0, 1, 2)),
    Axis("top_k", "top_k", ("top_k",), "top", (3, 5, 7, 10),
         "",  # not compared: metrics at different cut-offs are not comparable
         "top-k", "top-k", "top-k",
         "top-k values: chunks the fused retriever returns, the depth the metrics read", cost=1,
         cost_text="top-k (generator context)",
         check=positive_whole("top_k")),
)
CUT = "top_k"  # the axis that cuts the ranking: every other axis is compared at one top-k


def axes() -> tuple[Axis, ...]:
    """The ablation axes, read at call time (a test may add one)."""
    return AXES


def tune_grid() -> dict[str, tuple]:
    """``rag-lab tune``'s grid: each axis's ``tune_values`` where it has its own (axis key → values)."""
    return {a.key: a.tune_values for a in axes() if a.tune_values is not None}


def axis(name: str) -> Axis:
    """The axis called ``name`` (KeyError when the table has none)."""
    for a in axes():
        if a.name == name:
            return a
    raise KeyError(name)


def compared_axes() -> tuple[Axis, ...]:
    """The axes a grid compares at one top-k (every axis but the cut)."""
    return tuple(a for a in axes() if a.name != CUT)


FORMULA_AXES = ("k", "prefetch", "weights")  # applied inside the fusion formula, not to the fused list


def kernel_axes() -> tuple[Axis, ...]:
    """The axes applied to the fused ranking, in the table's order (the cap, and any axis added)."""
    table = axes()
    lacking = [a.name for a in table if a.kernel is None and a.name not in (*FORMULA_AXES, CUT)]
    if lacking:
        raise ValueError(f"ablation axes without a kernel: {', '.join(lacking)} (give each Axis a kernel)")
    return tuple(a for a in table if a.kernel is not None)


def fused_defaults() -> dict[str, Any]:
    """The fused levers' defaults, in lever names (``fusion_k``, ``prefetch``, …): what fusion and
    hybrid use when a lever is not given. The cut is left out: ``ir`` reads its own depth."""
    return {lever: value for a in compared_axes()
            for lever, value in zip(a.lever_names, a.lab_default() if a.pair else (a.lab_default(),))}
