"""Environment state as plain data, so a checkpoint can hold it without pickle.

A resumed run must continue with the environments exactly where they were: the same episodes in flight and
the same random streams. Pickling the environments would do that, but unpickling a file runs whatever code
the file names, and run folders are files people hand each other. So the state is saved as a tree of plain
values instead: :func:`capture` walks the attributes of a live environment object (vector env, wrappers,
sub-environments, spaces) and records every numpy array, number, string, bytes, container (list, tuple, set,
frozenset, dict, bytearray), range, slice, complex number, enum member (by name) and random-generator state;
:func:`restore` writes those values back into a freshly built environment of the same configuration.
Nothing in the saved tree can name code, and restoring only assigns data to attributes that already exist
in the fresh environment's object graph or that their class declares (``__slots__``, annotations: SB3's
``DummyVecEnv.actions`` is set at the first step); any other attribute is an error, not a new attribute.
Code (functions, methods, modules, classes), dtypes and compiled patterns are structure: the fresh environment
has the same, so they are left out. Any other value is :class:`NotCapturable` at checkpoint time, naming its
attribute path: nothing is skipped silently.

This covers environments whose state lives in Python objects and numpy arrays: membench's native tasks
(T-Maze, MemoryLength, MemoryCards, Ballet, Passive Visual Match, Mortar Mayhem, Mystery Path), the POPGym and
MiniGrid tasks, and
gymnasium's classic-control and toy-text environments in a ``SyncVectorEnv``. Environments holding state outside
Python (simulator handles such as ManiSkill's SAPIEN scenes, GPU tensors, worker processes of ``AsyncVectorEnv``)
cannot be captured: :func:`capture` raises :class:`NotCapturable` naming the attribute, and such runs cannot be
resumed exactly.

An object whose state partly lives outside Python can say how to save that part as plain data: a class attribute
``membench_external_state = ("ale",)`` names the attributes to leave out of the walk, and two methods give and take
their state, ``membench_get_external() -> plain data`` and ``membench_set_external(plain data)`` (STORI's Atari
emulator: its serialized state, RNG included; Numpad's MuJoCo integration state; Crafter's batched jax state, as
the numpy arrays of its leaves). Read-only mappings (``types.MappingProxyType``: tables, not state) are structure
and left out. ViZDoom and Memory Maze keep their worlds in their engines with no exact save of them, so their runs
cannot be resumed.
"""

from __future__ import annotations

import enum
import inspect
import random
import re
import types
from collections.abc import Callable
from typing import Any

import numpy as np

#: Values that describe structure, not state: left out of the capture (the fresh environment has the same). Code
#: (functions, methods, modules, classes), dtypes, enum members, compiled patterns and read-only mappings.
_STRUCTURE = (
    types.FunctionType,
    types.BuiltinFunctionType,
    types.MethodType,
    types.BuiltinMethodType,
    types.ModuleType,
    type,
    np.dtype,
    enum.Enum,
    re.Pattern,
    type(Ellipsis),
    type(NotImplemented),
    types.MethodWrapperType,
    types.WrapperDescriptorType,
    staticmethod,
    classmethod,
    property,
    types.MappingProxyType,
)
_SCALARS = (bool, int, float, str, bytes, type(None))
_BIT_GENERATORS = ("PCG64", "PCG64DXSM", "MT19937", "Philox", "SFC64")
#: Saved forms of immutable values (bytes and tuples have their own): rebuilt on restore, never written in place.
_IMMUTABLE = ("__frozenset__", "__range__", "__complex__", "__slice__", "__enum__")
#: What makes a numpy SeedSequence (and the children it spawns next).
_SEED_SEQUENCE = ("entropy", "spawn_key", "pool_size", "n_children_spawned")


class NotCapturable(Exception):
    """The environment holds state that cannot be saved as plain data (its path and type are in the message)."""


def capture(obj: Any) -> dict[str, Any]:
    """The state of ``obj`` (typically a vector env) as a tree of plain values; :class:`NotCapturable` if
    some of it cannot be expressed that way."""
    try:
        return _capture(obj, "envs", {})
    except RecursionError:
        raise NotCapturable("envs: its object graph is nested too deeply to be saved as plain data") from None


def _capture(x: Any, path: str, seen: dict[int, str]) -> Any:
    """The saved node of ``x``; ``seen`` maps the id of every mutable object saved so far to its path."""
    if type(x) in _SCALARS:
        return x
    for capture_kind in (_capture_numpy, _capture_leaf):
        node = capture_kind(x, path, seen)
        if node is not None:
            return node
    if isinstance(x, bytearray):
        seen[id(x)] = path
        return {"__bytearray__": bytes(x)}
    if id(x) in seen:  # an object reached twice: restored once, through its first path
        return {"__ref__": seen[id(x)]}
    for capture_kind in (_capture_random, _capture_container):
        node = capture_kind(x, path, seen)
        if node is not None:
            return node
    return _capture_object(x, path, seen)


def _capture_numpy(x: Any, path: str, seen: dict[int, str]) -> dict[str, Any] | None:
    """A numpy array or scalar (None for anything else)."""
    if isinstance(x, np.ndarray):
        if x.dtype == object:
            return {
                "__objarray__": [_capture(v, f"{path}[{i}]", seen) for i, v in enumerate(x.ravel())],
                "shape": list(x.shape),
            }
        return {"__ndarray__": x.tobytes(), "dtype": x.dtype.str, "shape": list(x.shape)}
    if isinstance(x, np.generic):
        if x.dtype.hasobject:
            raise NotCapturable(f"{path} is a numpy object scalar, which is not plain data")
        return {"__npscalar__": x.item(), "dtype": x.dtype.str}
    return None


def _capture_leaf(x: Any, path: str, seen: dict[int, str]) -> dict[str, Any] | None:
    """An enum member, structure, or an immutable value saved as data (rebuilt on restore, never shared); None
    for anything else."""
    if isinstance(x, enum.Enum):  # a member (a phase, a direction) is state: saved by name
        return {"__enum__": _class_key(type(x)), "name": x.name}
    if isinstance(x, _SCALARS):  # a subclass of a number or string: its value would be lost or refused on load
        raise NotCapturable(
            f"{path} is a {type(x).__module__}.{type(x).__qualname__} (a subclass of "
            f"{type(x).__mro__[-2].__name__}), which is not plain data"
        )
    if isinstance(x, _STRUCTURE):
        return {"__skip__": True}
    if isinstance(x, frozenset):
        return {"__frozenset__": [_capture(v, f"{path}{{{i}}}", {}) for i, v in enumerate(x)]}
    if isinstance(x, range):
        return {"__range__": [x.start, x.stop, x.step]}
    if isinstance(x, complex):
        return {"__complex__": [x.real, x.imag]}
    if isinstance(x, slice):
        return {
            "__slice__": [
                _capture(v, f"{path}.{k}", {}) for k, v in (("start", x.start), ("stop", x.stop), ("step", x.step))
            ]
        }
    return None


def _capture_random(x: Any, path: str, seen: dict[int, str]) -> dict[str, Any] | None:
    """A random generator's state (numpy Generator, RandomState, SeedSequence, random.Random); None for anything
    else."""
    if isinstance(x, np.random.Generator):
        seen[id(x)] = path
        return {"__generator__": _capture(x.bit_generator.state, path, {})}
    if isinstance(x, np.random.RandomState):
        seen[id(x)] = path
        return {"__randomstate__": _capture(x.get_state(legacy=False), path, {})}
    if isinstance(x, random.Random):
        seen[id(x)] = path
        return {"__random__": x.getstate()}
    if isinstance(x, np.random.SeedSequence):
        seen[id(x)] = path
        return {"__seedsequence__": _capture({k: getattr(x, k) for k in _SEED_SEQUENCE}, path, {})}
    return None


def _capture_container(x: Any, path: str, seen: dict[int, str]) -> dict[str, Any] | None:
    """A list, tuple, set or dict of saved nodes; None for anything else."""
    if isinstance(x, (list, tuple)):
        seen[id(x)] = path
        items = [_capture(v, f"{path}[{i}]", seen) for i, v in enumerate(x)]
        return {"__list__": items} if isinstance(x, list) else {"__tuple__": items}
    if isinstance(x, set):  # of hashable plain values (e.g. tuples of ints); rebuilt as a set
        seen[id(x)] = path
        return {"__set__": [_capture(v, f"{path}{{{i}}}", seen) for i, v in enumerate(x)]}
    if isinstance(x, dict):
        seen[id(x)] = path
        out = {}
        for k, v in x.items():
            key = _plain_key(k)
            if key is _NOT_PLAIN:
                raise NotCapturable(
                    f"{path} has a key {k!r} of type {type(k).__name__}, which is not plain data "
                    "(keys must be numbers, strings, bytes, None or tuples of them)"
                )
            out[key] = _capture(v, f"{path}[{k!r}]", seen)
        return {"__dict__": out}
    return None


def _capture_object(x: Any, path: str, seen: dict[int, str]) -> dict[str, Any]:
    """A Python object by its class and attributes (those it saves itself apart: ``external``)."""
    attrs = _attributes(x)
    if attrs is None:
        if callable(x):  # code without Python-level state (numpy ufuncs, builtins): structure
            return {"__skip__": True}
        raise NotCapturable(f"{path} is a {type(x).__module__}.{type(x).__qualname__}, which is not plain data")
    seen[id(x)] = path
    external = _external(x)
    node = {
        "__object__": _class_key(type(x)),
        "attrs": {k: _capture(v, f"{path}.{k}", seen) for k, v in attrs.items() if k not in external},
    }
    if external:
        node["external"] = _capture(x.membench_get_external(), f"{path}.membench_get_external()", {})
    return node


def _declared(cls: type) -> set[str]:
    """The instance attributes a class declares (``__slots__`` and annotations), set or not yet."""
    out: set[str] = set()
    for c in cls.__mro__:
        slots = getattr(c, "__slots__", ())
        out.update([slots] if isinstance(slots, str) else slots)
        try:
            out.update(inspect.get_annotations(c))
        except Exception:  # annotations that cannot be evaluated declare nothing here
            pass
    return out


#: what :func:`_plain_key` returns for a key a checkpoint cannot hold (None is a plain key)
_NOT_PLAIN = object()


def _plain_key(k: Any) -> Any:
    """The dict key ``k`` as a checkpoint holds it (and reads back without building any object), or
    :data:`_NOT_PLAIN`: a plain key as it is, a numpy scalar key (popgym's ``np.str_`` card names) as its Python
    value, which is equal to it and hashes alike, so a restored dict finds the same entries."""
    if isinstance(k, tuple):
        items = tuple(_plain_key(v) for v in k)
        return _NOT_PLAIN if any(v is _NOT_PLAIN for v in items) else items
    if isinstance(k, np.generic) and type(k.item()) in _SCALARS:
        return k.item()
    return k if type(k) in _SCALARS else _NOT_PLAIN


def _external(x: Any) -> tuple[str, ...]:
    """The attributes ``x`` saves itself (``membench_external_state``; see the module docstring)."""
    names = getattr(type(x), "membench_external_state", ())
    if names and not (
        callable(getattr(x, "membench_get_external", None)) and callable(getattr(x, "membench_set_external", None))
    ):
        raise NotCapturable(
            f"{type(x).__qualname__} declares membench_external_state but lacks "
            "membench_get_external / membench_set_external"
        )
    return tuple(names)


def _attributes(x: Any) -> dict[str, Any] | None:
    """The instance attributes of a Python object (``__dict__`` and ``__slots__``), or None if it has none."""
    out: dict[str, Any] = {}
    has = False
    if hasattr(x, "__dict__") and isinstance(vars(x), dict):
        out.update(vars(x))
        has = True
    for cls in type(x).__mro__:
        for name in getattr(cls, "__slots__", ()):
            if name in ("__dict__", "__weakref__"):
                continue
            has = True
            if hasattr(x, name):
                out[name] = getattr(x, name)
    if not has:
        return None
    if type(x).__module__ == "builtins" or type(x).__module__.startswith(("torch", "_thread", "threading")):
        return None  # builtin / C objects, locks, tensors: not plain data
    return out


def restore(obj: Any, state: dict[str, Any]) -> None:
    """Write a :func:`capture` tree back into ``obj``, a freshly built environment of the same configuration.

    Values are written in place where the fresh environment has a matching attribute; objects that the fresh
    environment lacks (a MiniGrid ball where it has a key) are rebuilt without calling their ``__init__``,
    and only from classes that already occur in the fresh environment's object graph. An attribute that an
    existing object neither has nor declares is never created. Raises ValueError when the tree does not fit
    ``obj`` (another environment or another version of it, or an edited tree).
    """
    classes: dict[str, type] = {}
    _collect_classes(obj, classes, set())
    try:
        _Restorer(classes).into(obj, state, "envs")
    except (TypeError, KeyError, AttributeError, IndexError) as e:  # a node of the wrong shape (an edited file)
        raise ValueError(f"the saved environment state is malformed ({type(e).__name__}: {e})") from None


def _class_key(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


def _collect_classes(x: Any, out: dict[str, type], seen: set[int]) -> None:
    if isinstance(x, enum.Enum):
        out.setdefault(_class_key(type(x)), type(x))
        return
    if isinstance(x, (*_SCALARS, np.ndarray, np.generic, *_STRUCTURE)) or id(x) in seen:
        return
    seen.add(id(x))
    if isinstance(x, (list, tuple, set)):
        for v in x:
            _collect_classes(v, out, seen)
        return
    if isinstance(x, dict):
        for v in x.values():
            _collect_classes(v, out, seen)
        return
    attrs = _attributes(x)
    if attrs is None:
        return
    out.setdefault(_class_key(type(x)), type(x))
    for v in attrs.values():
        _collect_classes(v, out, seen)


class _Restorer:
    """Builds new values from saved nodes (:meth:`build`) and writes nodes into the fresh environment's objects
    (:meth:`into`). A node is a dict tagged by one key (``__ndarray__``, ``__list__``, ``__object__``, ...): the
    tables after the class map each tag to its method, in the order the tags are looked for."""

    def __init__(self, classes: dict[str, type]):
        self.classes = classes

    # -- new values ----------------------------------------------------------------------------------------------
    def build(self, node: Any, path: str) -> Any:
        """A new value from a saved node (plain values, containers, and objects of known classes)."""
        if not isinstance(node, dict):
            if isinstance(node, (list, tuple)):  # the state of a random.Random inside a container
                return type(node)(self.build(v, path) for v in node)
            return node
        for tag, build in _BUILD.items():
            if tag in node:
                return build(self, node, path)
        raise ValueError(f"{path}: this saved value cannot be rebuilt; the environment does not match")

    def _items(self, node: dict[str, Any], tag: str, path: str, brackets: str = "[]") -> list[Any]:
        """The built items of a sequence node, each with its path (``path[i]``, or ``path{i}`` in a set)."""
        return [self.build(v, f"{path}{brackets[0]}{i}{brackets[1]}") for i, v in enumerate(node[tag])]

    def _ndarray(self, node: dict[str, Any], path: str) -> np.ndarray:
        arr = np.frombuffer(node["__ndarray__"], dtype=np.dtype(node["dtype"]))
        return arr.reshape(node["shape"]).copy()

    def _npscalar(self, node: dict[str, Any], path: str) -> np.generic:
        return np.dtype(node["dtype"]).type(node["__npscalar__"])

    def _objarray(self, node: dict[str, Any], path: str) -> np.ndarray:
        out = np.empty(len(node["__objarray__"]), dtype=object)
        for i, v in enumerate(self._items(node, "__objarray__", path)):
            out[i] = v
        return out.reshape(node["shape"])

    def _enum(self, node: dict[str, Any], path: str) -> enum.Enum:
        cls = self.classes.get(node["__enum__"])
        if not (isinstance(cls, type) and issubclass(cls, enum.Enum)) or node["name"] not in cls.__members__:
            raise ValueError(
                f"{path}: the checkpoint holds {node['__enum__']}.{node['name']}, a member of no "
                "enum this environment uses; it was saved from another environment or version"
            )
        return cls[node["name"]]

    def _seedsequence(self, node: dict[str, Any], path: str) -> np.random.SeedSequence:
        fields = self.build(node["__seedsequence__"], path)
        return np.random.SeedSequence(
            fields["entropy"],
            spawn_key=tuple(fields["spawn_key"]),
            pool_size=fields["pool_size"],
            n_children_spawned=fields["n_children_spawned"],
        )

    def _generator(self, node: dict[str, Any], path: str) -> np.random.Generator:
        state = self.build(node["__generator__"], path)
        name = state.get("bit_generator") if isinstance(state, dict) else None
        if name not in _BIT_GENERATORS:
            raise ValueError(f"{path}: unknown numpy bit generator {name!r}")
        gen = np.random.Generator(getattr(np.random, name)())
        gen.bit_generator.state = state
        return gen

    def _object(self, node: dict[str, Any], path: str) -> Any:
        cls = self.classes.get(node["__object__"])
        if cls is None:
            raise ValueError(
                f"{path}: the checkpoint holds a {node['__object__']}, a class this environment "
                "does not use; it was saved from another environment or version"
            )
        if "external" in node:
            raise ValueError(
                f"{path}: a {node['__object__']} with external state cannot be rebuilt; the "
                "environment does not match the checkpoint"
            )
        obj: Any = object.__new__(cls)
        for k, v in node["attrs"].items():
            object.__setattr__(obj, k, self.build(v, f"{path}.{k}"))
        return obj

    # -- in place ------------------------------------------------------------------------------------------------
    def into(self, target: Any, node: Any, path: str) -> Any:
        """Restore ``node`` into ``target`` in place where possible; returns the value to assign."""
        if not isinstance(node, dict) or "__ndarray__" in node or "__npscalar__" in node:
            value = self.build(node, path)
            if (
                isinstance(value, np.ndarray)
                and isinstance(target, np.ndarray)
                and target.shape == value.shape
                and target.dtype == value.dtype
                and target.flags.writeable
            ):
                target[...] = value  # in place: views of this array elsewhere stay views
                return target
            return value
        for tag, write in _INTO.items():
            if tag in node:
                return write(self, target, node, path)
        raise ValueError(f"{path}: unrecognised saved state")

    def _keep(self, target: Any, node: dict[str, Any], path: str) -> Any:
        """Structure, or an object restored through its first path: the fresh environment's own."""
        return target

    def _new(self, target: Any, node: dict[str, Any], path: str) -> Any:
        """An immutable value: a new one."""
        return self.build(node, path)

    def _into_bytearray(self, target: Any, node: dict[str, Any], path: str) -> Any:
        value = self.build(node, path)
        if isinstance(target, bytearray):  # in place: other references see the restored bytes
            target[:] = value
            return target
        return value

    def _into_generator(self, target: Any, node: dict[str, Any], path: str) -> Any:
        if target is None:  # not made yet in the fresh environment (seeded lazily)
            return self.build(node, path)
        if not isinstance(target, np.random.Generator):
            raise ValueError(f"{path}: expected a numpy Generator, found {type(target).__name__}")
        target.bit_generator.state = self.build(node["__generator__"], path)
        return target

    def _into_randomstate(self, target: Any, node: dict[str, Any], path: str) -> Any:
        if not isinstance(target, np.random.RandomState):
            raise ValueError(f"{path}: expected a numpy RandomState, found {type(target).__name__}")
        target.set_state(self.build(node["__randomstate__"], path))
        return target

    def _into_random(self, target: Any, node: dict[str, Any], path: str) -> Any:
        if not isinstance(target, random.Random):
            raise ValueError(f"{path}: expected a random.Random, found {type(target).__name__}")
        target.setstate(self.build(node["__random__"], path))
        return target

    def _into_objarray(self, target: Any, node: dict[str, Any], path: str) -> Any:
        items = node["__objarray__"]
        if isinstance(target, np.ndarray) and target.dtype == object and target.size == len(items):
            flat = target.reshape(-1)
            for i, v in enumerate(items):
                flat[i] = self.into(flat[i], v, f"{path}[{i}]")
            return target
        return self.build(node, path)

    def _into_sequence(self, target: Any, node: dict[str, Any], path: str) -> Any:
        items = node["__list__"] if "__list__" in node else node["__tuple__"]  # (dispatched on one of them)
        if isinstance(target, (list, tuple)) and len(target) == len(items):
            values = [self.into(t, v, f"{path}[{i}]") for i, (t, v) in enumerate(zip(target, items, strict=True))]
            if isinstance(target, list):
                target[:] = values
                return target
            return tuple(values) if type(target) is tuple else type(target)(*values)
        return self.build(node, path)

    def _into_set(self, target: Any, node: dict[str, Any], path: str) -> Any:
        value = self.build(node, path)
        if isinstance(target, set):  # in place: other references to this set see the restored items
            target.clear()
            target.update(value)
            return target
        return value

    def _into_dict(self, target: Any, node: dict[str, Any], path: str) -> Any:
        items = node["__dict__"]
        if isinstance(target, dict):
            for k in [k for k in target if k not in items]:
                del target[k]
            for k, v in items.items():
                target[k] = self.into(target.get(k), v, f"{path}[{k!r}]")
            return target
        return self.build(node, path)

    def _into_object(self, target: Any, node: dict[str, Any], path: str) -> Any:
        if target is None or _class_key(type(target)) != node["__object__"]:
            return self.build(node, path)
        attrs = _attributes(target) or {}
        unknown = [k for k in node["attrs"] if k not in attrs and k not in _declared(type(target))]
        if unknown:  # restore writes data into attributes the fresh environment has or declares, no others
            raise ValueError(
                f"{path}: the checkpoint sets {', '.join(map(repr, unknown))}, which this "
                f"{type(target).__qualname__} does not have; it was saved from another environment "
                "or version"
            )
        for k, v in node["attrs"].items():
            new = self.into(attrs.get(k), v, f"{path}.{k}")
            if new is not attrs.get(k):
                object.__setattr__(target, k, new)
        if "external" in node:
            if not _external(target):
                raise ValueError(f"{path}: the checkpoint holds external state that this object does not take")
            target.membench_set_external(self.build(node["external"], f"{path}.membench_get_external()"))
        return target


#: How :meth:`_Restorer.build` makes each kind of node, by its tag, in the order the tags are looked for.
_BUILD: dict[str, Callable[[_Restorer, dict[str, Any], str], Any]] = {
    "__ndarray__": _Restorer._ndarray,
    "__npscalar__": _Restorer._npscalar,
    "__objarray__": _Restorer._objarray,
    "__frozenset__": lambda r, node, path: frozenset(r._items(node, "__frozenset__", path, "{}")),
    "__range__": lambda r, node, path: range(*node["__range__"]),
    "__complex__": lambda r, node, path: complex(*node["__complex__"]),
    "__slice__": lambda r, node, path: slice(*(r.build(v, path) for v in node["__slice__"])),
    "__bytearray__": lambda r, node, path: bytearray(node["__bytearray__"]),
    "__enum__": _Restorer._enum,
    "__list__": lambda r, node, path: r._items(node, "__list__", path),
    "__tuple__": lambda r, node, path: tuple(r._items(node, "__tuple__", path)),
    "__set__": lambda r, node, path: set(r._items(node, "__set__", path, "{}")),
    "__dict__": lambda r, node, path: {k: r.build(v, f"{path}[{k!r}]") for k, v in node["__dict__"].items()},
    "__seedsequence__": _Restorer._seedsequence,
    "__generator__": _Restorer._generator,
    "__object__": _Restorer._object,
}

#: How :meth:`_Restorer.into` writes each kind of node into the fresh environment, in the order the tags are
#: looked for (arrays and numpy scalars are handled before).
_INTO: dict[str, Callable[[_Restorer, Any, dict[str, Any], str], Any]] = {
    "__skip__": _Restorer._keep,
    "__ref__": _Restorer._keep,
    **dict.fromkeys(_IMMUTABLE, _Restorer._new),
    "__bytearray__": _Restorer._into_bytearray,
    "__generator__": _Restorer._into_generator,
    "__seedsequence__": _Restorer._new,  # immutable but for its spawn counter: a new one
    "__randomstate__": _Restorer._into_randomstate,
    "__random__": _Restorer._into_random,
    "__objarray__": _Restorer._into_objarray,
    "__list__": _Restorer._into_sequence,
    "__tuple__": _Restorer._into_sequence,
    "__set__": _Restorer._into_set,
    "__dict__": _Restorer._into_dict,
    "__object__": _Restorer._into_object,
}
